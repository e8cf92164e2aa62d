// Built from web/src by `make client` (clients/typescript/build.mjs): do not edit.
(() => {
  var __defProp = Object.defineProperty;
  var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
  var __publicField = (obj, key, value) => __defNormalProp(obj, typeof key !== "symbol" ? key + "" : key, value);

  // clients/typescript/node_modules/openapi-fetch/dist/index.mjs
  var PATH_PARAM_RE = /\{[^{}]+\}/g;
  var supportsRequestInitExt = () => {
    return typeof process === "object" && Number.parseInt(process?.versions?.node?.substring(0, 2)) >= 18 && process.versions.undici;
  };
  function randomID() {
    return Math.random().toString(36).slice(2, 11);
  }
  function createClient(clientOptions) {
    let {
      baseUrl = "",
      Request: CustomRequest = globalThis.Request,
      fetch: baseFetch = globalThis.fetch,
      querySerializer: globalQuerySerializer,
      bodySerializer: globalBodySerializer,
      pathSerializer: globalPathSerializer,
      headers: baseHeaders,
      requestInitExt = void 0,
      ...baseOptions
    } = { ...clientOptions };
    requestInitExt = supportsRequestInitExt() ? requestInitExt : void 0;
    baseUrl = removeTrailingSlash(baseUrl);
    const globalMiddlewares = [];
    async function coreFetch(schemaPath, fetchOptions) {
      const {
        baseUrl: localBaseUrl,
        fetch = baseFetch,
        Request = CustomRequest,
        headers,
        params = {},
        parseAs = "json",
        querySerializer: requestQuerySerializer,
        bodySerializer = globalBodySerializer ?? defaultBodySerializer,
        pathSerializer: requestPathSerializer,
        body,
        middleware: requestMiddlewares = [],
        ...init
      } = fetchOptions || {};
      let finalBaseUrl = baseUrl;
      if (localBaseUrl) {
        finalBaseUrl = removeTrailingSlash(localBaseUrl) ?? baseUrl;
      }
      let querySerializer = typeof globalQuerySerializer === "function" ? globalQuerySerializer : createQuerySerializer(globalQuerySerializer);
      if (requestQuerySerializer) {
        querySerializer = typeof requestQuerySerializer === "function" ? requestQuerySerializer : createQuerySerializer({
          ...typeof globalQuerySerializer === "object" ? globalQuerySerializer : {},
          ...requestQuerySerializer
        });
      }
      const pathSerializer = requestPathSerializer || globalPathSerializer || defaultPathSerializer;
      const serializedBody = body === void 0 ? void 0 : bodySerializer(
        body,
        // Note: we declare mergeHeaders() both here and below because it’s a bit of a chicken-or-egg situation:
        // bodySerializer() needs all headers so we aren’t dropping ones set by the user, however,
        // the result of this ALSO sets the lowest-priority content-type header. So we re-merge below,
        // setting the content-type at the very beginning to be overwritten.
        // Lastly, based on the way headers work, it’s not a simple “present-or-not” check becauase null intentionally un-sets headers.
        mergeHeaders(baseHeaders, headers, params.header)
      );
      const finalHeaders = mergeHeaders(
        // with no body, we should not to set Content-Type
        serializedBody === void 0 || // if serialized body is FormData; browser will correctly set Content-Type & boundary expression
        serializedBody instanceof FormData ? {} : {
          "Content-Type": "application/json"
        },
        baseHeaders,
        headers,
        params.header
      );
      const finalMiddlewares = [...globalMiddlewares, ...requestMiddlewares];
      const requestInit = {
        redirect: "follow",
        ...baseOptions,
        ...init,
        body: serializedBody,
        headers: finalHeaders
      };
      let id;
      let options;
      let request = new Request(
        createFinalURL(schemaPath, { baseUrl: finalBaseUrl, params, querySerializer, pathSerializer }),
        requestInit
      );
      let response;
      for (const key in init) {
        if (!(key in request)) {
          request[key] = init[key];
        }
      }
      if (finalMiddlewares.length) {
        id = randomID();
        options = Object.freeze({
          baseUrl: finalBaseUrl,
          fetch,
          parseAs,
          querySerializer,
          bodySerializer,
          pathSerializer
        });
        for (const m of finalMiddlewares) {
          if (m && typeof m === "object" && typeof m.onRequest === "function") {
            const result = await m.onRequest({
              request,
              schemaPath,
              params,
              options,
              id
            });
            if (result) {
              if (result instanceof Request) {
                request = result;
              } else if (result instanceof Response) {
                response = result;
                break;
              } else {
                throw new Error("onRequest: must return new Request() or Response() when modifying the request");
              }
            }
          }
        }
      }
      if (!response) {
        try {
          response = await fetch(request, requestInitExt);
        } catch (error2) {
          let errorAfterMiddleware = error2;
          if (finalMiddlewares.length) {
            for (let i = finalMiddlewares.length - 1; i >= 0; i--) {
              const m = finalMiddlewares[i];
              if (m && typeof m === "object" && typeof m.onError === "function") {
                const result = await m.onError({
                  request,
                  error: errorAfterMiddleware,
                  schemaPath,
                  params,
                  options,
                  id
                });
                if (result) {
                  if (result instanceof Response) {
                    errorAfterMiddleware = void 0;
                    response = result;
                    break;
                  }
                  if (result instanceof Error) {
                    errorAfterMiddleware = result;
                    continue;
                  }
                  throw new Error("onError: must return new Response() or instance of Error");
                }
              }
            }
          }
          if (errorAfterMiddleware) {
            throw errorAfterMiddleware;
          }
        }
        if (finalMiddlewares.length) {
          for (let i = finalMiddlewares.length - 1; i >= 0; i--) {
            const m = finalMiddlewares[i];
            if (m && typeof m === "object" && typeof m.onResponse === "function") {
              const result = await m.onResponse({
                request,
                response,
                schemaPath,
                params,
                options,
                id
              });
              if (result) {
                if (!(result instanceof Response)) {
                  throw new Error("onResponse: must return new Response() when modifying the response");
                }
                response = result;
              }
            }
          }
        }
      }
      const contentLength = response.headers.get("Content-Length");
      if (response.status === 204 || request.method === "HEAD" || contentLength === "0" && !response.headers.get("Transfer-Encoding")?.includes("chunked")) {
        return response.ok ? { data: void 0, response } : { error: void 0, response };
      }
      if (response.ok) {
        const getResponseData = async () => {
          if (parseAs === "stream") {
            return response.body;
          }
          if (parseAs === "json" && !contentLength) {
            const raw = await response.text();
            return raw ? JSON.parse(raw) : void 0;
          }
          return await response[parseAs]();
        };
        return { data: await getResponseData(), response };
      }
      let error = await response.text();
      try {
        error = JSON.parse(error);
      } catch {
      }
      return { error, response };
    }
    return {
      request(method, url, init) {
        return coreFetch(url, { ...init, method: method.toUpperCase() });
      },
      /** Call a GET endpoint */
      GET(url, init) {
        return coreFetch(url, { ...init, method: "GET" });
      },
      /** Call a PUT endpoint */
      PUT(url, init) {
        return coreFetch(url, { ...init, method: "PUT" });
      },
      /** Call a POST endpoint */
      POST(url, init) {
        return coreFetch(url, { ...init, method: "POST" });
      },
      /** Call a DELETE endpoint */
      DELETE(url, init) {
        return coreFetch(url, { ...init, method: "DELETE" });
      },
      /** Call a OPTIONS endpoint */
      OPTIONS(url, init) {
        return coreFetch(url, { ...init, method: "OPTIONS" });
      },
      /** Call a HEAD endpoint */
      HEAD(url, init) {
        return coreFetch(url, { ...init, method: "HEAD" });
      },
      /** Call a PATCH endpoint */
      PATCH(url, init) {
        return coreFetch(url, { ...init, method: "PATCH" });
      },
      /** Call a TRACE endpoint */
      TRACE(url, init) {
        return coreFetch(url, { ...init, method: "TRACE" });
      },
      /** Register middleware */
      use(...middleware) {
        for (const m of middleware) {
          if (!m) {
            continue;
          }
          if (typeof m !== "object" || !("onRequest" in m || "onResponse" in m || "onError" in m)) {
            throw new Error("Middleware must be an object with one of `onRequest()`, `onResponse() or `onError()`");
          }
          globalMiddlewares.push(m);
        }
      },
      /** Unregister middleware */
      eject(...middleware) {
        for (const m of middleware) {
          const i = globalMiddlewares.indexOf(m);
          if (i !== -1) {
            globalMiddlewares.splice(i, 1);
          }
        }
      }
    };
  }
  function serializePrimitiveParam(name, value, options) {
    if (value === void 0 || value === null) {
      return "";
    }
    if (typeof value === "object") {
      throw new Error(
        "Deeply-nested arrays/objects aren’t supported. Provide your own `querySerializer()` to handle these."
      );
    }
    return `${name}=${options?.allowReserved === true ? value : encodeURIComponent(value)}`;
  }
  function serializeObjectParam(name, value, options) {
    if (!value || typeof value !== "object") {
      return "";
    }
    const values = [];
    const joiner = {
      simple: ",",
      label: ".",
      matrix: ";"
    }[options.style] || "&";
    if (options.style !== "deepObject" && options.explode === false) {
      for (const k in value) {
        values.push(k, options.allowReserved === true ? value[k] : encodeURIComponent(value[k]));
      }
      const final2 = values.join(",");
      switch (options.style) {
        case "form": {
          return `${name}=${final2}`;
        }
        case "label": {
          return `.${final2}`;
        }
        case "matrix": {
          return `;${name}=${final2}`;
        }
        default: {
          return final2;
        }
      }
    }
    for (const k in value) {
      const finalName = options.style === "deepObject" ? `${name}[${k}]` : k;
      values.push(serializePrimitiveParam(finalName, value[k], options));
    }
    const final = values.join(joiner);
    return options.style === "label" || options.style === "matrix" ? `${joiner}${final}` : final;
  }
  function serializeArrayParam(name, value, options) {
    if (!Array.isArray(value)) {
      return "";
    }
    if (options.explode === false) {
      const joiner2 = { form: ",", spaceDelimited: "%20", pipeDelimited: "|" }[options.style] || ",";
      const final = (options.allowReserved === true ? value : value.map((v) => encodeURIComponent(v))).join(joiner2);
      switch (options.style) {
        case "simple": {
          return final;
        }
        case "label": {
          return `.${final}`;
        }
        case "matrix": {
          return `;${name}=${final}`;
        }
        // case "spaceDelimited":
        // case "pipeDelimited":
        default: {
          return `${name}=${final}`;
        }
      }
    }
    const joiner = { simple: ",", label: ".", matrix: ";" }[options.style] || "&";
    const values = [];
    for (const v of value) {
      if (options.style === "simple" || options.style === "label") {
        values.push(options.allowReserved === true ? v : encodeURIComponent(v));
      } else {
        values.push(serializePrimitiveParam(name, v, options));
      }
    }
    return options.style === "label" || options.style === "matrix" ? `${joiner}${values.join(joiner)}` : values.join(joiner);
  }
  function createQuerySerializer(options) {
    return function querySerializer(queryParams) {
      const search = [];
      if (queryParams && typeof queryParams === "object") {
        for (const name in queryParams) {
          const value = queryParams[name];
          if (value === void 0 || value === null) {
            continue;
          }
          if (Array.isArray(value)) {
            if (value.length === 0) {
              continue;
            }
            search.push(
              serializeArrayParam(name, value, {
                style: "form",
                explode: true,
                ...options?.array,
                allowReserved: options?.allowReserved || false
              })
            );
            continue;
          }
          if (typeof value === "object") {
            search.push(
              serializeObjectParam(name, value, {
                style: "deepObject",
                explode: true,
                ...options?.object,
                allowReserved: options?.allowReserved || false
              })
            );
            continue;
          }
          search.push(serializePrimitiveParam(name, value, options));
        }
      }
      return search.join("&");
    };
  }
  function defaultPathSerializer(pathname, pathParams) {
    let nextURL = pathname;
    for (const match of pathname.match(PATH_PARAM_RE) ?? []) {
      let name = match.substring(1, match.length - 1);
      let explode = false;
      let style = "simple";
      if (name.endsWith("*")) {
        explode = true;
        name = name.substring(0, name.length - 1);
      }
      if (name.startsWith(".")) {
        style = "label";
        name = name.substring(1);
      } else if (name.startsWith(";")) {
        style = "matrix";
        name = name.substring(1);
      }
      if (!pathParams || pathParams[name] === void 0 || pathParams[name] === null) {
        continue;
      }
      const value = pathParams[name];
      if (Array.isArray(value)) {
        nextURL = nextURL.replace(match, serializeArrayParam(name, value, { style, explode }));
        continue;
      }
      if (typeof value === "object") {
        nextURL = nextURL.replace(match, serializeObjectParam(name, value, { style, explode }));
        continue;
      }
      if (style === "matrix") {
        nextURL = nextURL.replace(match, `;${serializePrimitiveParam(name, value)}`);
        continue;
      }
      nextURL = nextURL.replace(match, style === "label" ? `.${encodeURIComponent(value)}` : encodeURIComponent(value));
    }
    return nextURL;
  }
  function defaultBodySerializer(body, headers) {
    if (body instanceof FormData) {
      return body;
    }
    if (headers) {
      const contentType = headers.get instanceof Function ? headers.get("Content-Type") ?? headers.get("content-type") : headers["Content-Type"] ?? headers["content-type"];
      if (contentType === "application/x-www-form-urlencoded") {
        return new URLSearchParams(body).toString();
      }
    }
    return JSON.stringify(body);
  }
  function createFinalURL(pathname, options) {
    let finalURL = `${options.baseUrl}${pathname}`;
    if (options.params?.path) {
      finalURL = options.pathSerializer(finalURL, options.params.path);
    }
    let search = options.querySerializer(options.params.query ?? {});
    if (search.startsWith("?")) {
      search = search.substring(1);
    }
    if (search) {
      finalURL += `?${search}`;
    }
    return finalURL;
  }
  function mergeHeaders(...allHeaders) {
    const finalHeaders = new Headers();
    for (const h2 of allHeaders) {
      if (!h2 || typeof h2 !== "object") {
        continue;
      }
      const iterator = h2 instanceof Headers ? h2.entries() : Object.entries(h2);
      for (const [k, v] of iterator) {
        if (v === null) {
          finalHeaders.delete(k);
        } else if (Array.isArray(v)) {
          for (const v2 of v) {
            finalHeaders.append(k, v2);
          }
        } else if (v !== void 0) {
          finalHeaders.set(k, v);
        }
      }
    }
    return finalHeaders;
  }
  function removeTrailingSlash(url) {
    if (url.endsWith("/")) {
      return url.substring(0, url.length - 1);
    }
    return url;
  }

  // clients/typescript/src/events.ts
  var TURN_EVENT_NAMES = ["message", "delta", "memory", "quiz", "safety", "reply_replaced", "done", "error"];

  // clients/typescript/src/index.ts
  var KNOWN_EVENTS = new Set(TURN_EVENT_NAMES);
  var ApiError = class extends Error {
    constructor(status, body) {
      const error = isEnvelope(body) ? body.error : void 0;
      super(error?.message ?? `HTTP ${status}`);
      __publicField(this, "status");
      __publicField(this, "code");
      __publicField(this, "details");
      __publicField(this, "retrySafe");
      this.name = "ApiError";
      this.status = status;
      this.code = error?.code ?? `http_${status}`;
      this.details = error?.details ?? {};
      this.retrySafe = error?.retry_safe ?? false;
    }
    /** True when the server sent the envelope, whose message is meant for the user. */
    get fromServer() {
      return !this.code.startsWith("http_");
    }
  };
  function isEnvelope(body) {
    if (typeof body !== "object" || body === null || !("error" in body)) return false;
    const error = body.error;
    return typeof error === "object" && error !== null && typeof error.message === "string";
  }
  var SAFE_METHODS = /* @__PURE__ */ new Set(["GET", "HEAD", "OPTIONS"]);
  function cookie(name) {
    if (typeof document === "undefined") return null;
    for (const part of document.cookie.split(";")) {
      const [key, ...value] = part.trim().split("=");
      if (key === name) return decodeURIComponent(value.join("="));
    }
    return null;
  }
  function createClient2(options = {}) {
    const auth = options.auth;
    const client = createClient({
      baseUrl: options.baseUrl ?? "",
      credentials: options.credentials ?? "same-origin",
      ...options.fetch ? { fetch: options.fetch } : {}
    });
    const authenticate = {
      onRequest({ request }) {
        if (auth && "token" in auth) {
          request.headers.set("Authorization", `Token ${auth.token}`);
        } else if (auth && !SAFE_METHODS.has(request.method)) {
          const csrf = (auth.csrfToken ?? (() => cookie("csrftoken")))();
          if (csrf) request.headers.set("X-CSRFToken", csrf);
        }
        return request;
      }
    };
    client.use(authenticate);
    return client;
  }
  function unwrap(result) {
    if (result.error !== void 0 || !result.response.ok) {
      throw new ApiError(result.response.status, result.error);
    }
    return result.data;
  }

  // web/src/i18n.ts
  var en = {
    app_name: "Tutor",
    student_page: "My tutor",
    teacher_page: "My students' memories",
    noscript: "This page needs JavaScript.",
    loading: "Loading…",
    language: "Language",
    signed_in_as: "Signed in as {name}",
    logout: "Sign out",
    login_heading: "Sign in",
    username: "Username",
    password: "Password",
    login: "Sign in",
    wrong_page_student: "This page is for students. Teachers have their own page:",
    wrong_page_teacher: "This page is for teachers. Students have their own page:",
    go_student_page: "the student page",
    go_teacher_page: "the teacher page",
    error_network: "The server could not be reached. Check your connection and try again.",
    error_http: "Something went wrong (HTTP {status}). Try again in a moment.",
    error_stream: "The reply was cut off. Send your message again.",
    // Student: the conversation
    chat_heading: "Conversation",
    subject: "Subject (optional)",
    start_conversation: "Start a new conversation",
    no_conversation: "Start a conversation to talk with your tutor.",
    conversation_open: "Conversation started {date}.",
    conversation_open_subject: "Conversation about {subject}, started {date}.",
    conversation_ended: "This conversation has ended. Start a new one to talk again.",
    messages_label: "Messages",
    you: "You",
    tutor: "Tutor",
    your_message: "Your message",
    send: "Send",
    sending: "The tutor is answering…",
    end_conversation: "End the conversation",
    memory_saved: "The tutor noted: {title}",
    summary_pending: "Your tutor is writing a summary of this conversation…",
    summary_ready: "The summary of your conversation is in your memories.",
    summary_late: "The summary is not ready yet; it will appear in your memories later.",
    // Memories
    memories_heading: "What your tutor remembers",
    memories_intro: "Your tutor remembers these notes from one conversation to the next.",
    refresh: "Refresh",
    show_more: "Show more",
    no_memories: "Nothing yet.",
    memory_count: "{count} memories",
    // Teacher
    students_heading: "Choose a student",
    student: "Student",
    no_students: "You have no students yet.",
    show: "Show",
    status_active: "Active",
    status_archived: "Archived",
    status_all: "All",
    teacher_memories_heading: "Memories of {name}",
    add_note_heading: "Add a note",
    title: "Title",
    content: "Content",
    visibility: "Who can see it",
    add_note: "Add the note",
    note_added: "Note added.",
    correct: "Correct",
    save: "Save the correction",
    corrected: "Memory corrected.",
    archive: "Archive",
    archive_reason: "Reason for archiving",
    archive_confirm: "Archive this memory",
    archived: "Memory archived.",
    // Provenance
    kind: "Kind",
    source: "Source",
    author: "Author",
    status: "Status",
    confidence: "Confidence",
    created: "Created",
    updated: "Updated",
    source_conversation: "From conversation",
    archived_reason: "Archived because",
    needs_review: "Needs review",
    yes: "yes",
    author_you: "you",
    author_teacher: "teacher #{id}",
    none: "—",
    // Every memory kind and source has one (checked against the schema's enums below). A note's
    // author is told by its source: the tutor, a teacher's import, or an app over MCP.
    kind_summary: "Conversation summary",
    kind_note: "Note",
    kind_teacher_note: "Teacher note",
    kind_quiz_result: "Quiz result",
    kind_file: "Shared file",
    kind_fact: "Fact",
    kind_approach: "What worked",
    source_summary_task: "Summary of a conversation",
    source_save_memory_tool: "Saved by the tutor during a conversation",
    source_teacher: "Written by a teacher",
    source_quiz: "From a graded quiz",
    source_file_upload: "From a file shared in a conversation",
    source_extraction: "Drawn from other memories",
    source_merge: "Merged from similar memories",
    source_import: "Imported",
    source_mcp_tool: "Written by a connected app (MCP)",
    status_superseded: "Superseded",
    visibility_student: "The student and teachers",
    visibility_teacher_only: "Teachers only",
    conversation_number: "#{id}",
    // Teacher: the safety queue
    safety_heading: "Safety",
    safety_intro: "What screening found in your students' messages, files and tutor replies. Open flags come first, the most serious first.",
    no_flags: "No safety flags.",
    flag_student: "Student",
    flag_when: "When",
    flag_status: "Status",
    flag_category: "Category",
    flag_severity: "Severity",
    flag_outcome: "Outcome note",
    acknowledge: "Acknowledge",
    acknowledge_note: "Note (optional)",
    acknowledged: "Flag acknowledged.",
    resolve: "Resolve",
    resolve_note: "What was done",
    resolve_outcome: "Outcome",
    resolve_confirm: "Close this flag",
    resolved: "Flag closed.",
    severity_info: "Info",
    severity_concern: "Concern",
    severity_crisis: "Crisis",
    category_self_harm: "Self-harm",
    category_abuse: "Abuse or danger disclosed",
    category_violence: "Violence or threats",
    category_harassment: "Harassment and bullying",
    category_sexual: "Sexual content",
    category_sexual_minors: "Sexual content involving minors",
    category_hate: "Hate",
    category_jailbreak: "Leaving the tutor's role",
    category_distress: "Distress",
    flag_status_open: "Open",
    flag_status_acknowledged: "Acknowledged",
    flag_status_resolved: "Resolved",
    flag_status_false_positive: "False positive",
    source_message: "Student message",
    source_file: "Uploaded file",
    source_reply: "Tutor reply (withheld)",
    source_pattern: "Pattern across conversations"
  };
  var fr = {
    app_name: "Tuteur",
    student_page: "Mon tuteur",
    teacher_page: "Les mémoires de mes élèves",
    noscript: "Cette page a besoin de JavaScript.",
    loading: "Chargement…",
    language: "Langue",
    signed_in_as: "Connecté·e : {name}",
    logout: "Se déconnecter",
    login_heading: "Connexion",
    username: "Nom d'utilisateur",
    password: "Mot de passe",
    login: "Se connecter",
    wrong_page_student: "Cette page est celle des élèves. Les enseignants ont la leur :",
    wrong_page_teacher: "Cette page est celle des enseignants. Les élèves ont la leur :",
    go_student_page: "la page des élèves",
    go_teacher_page: "la page des enseignants",
    error_network: "Le serveur est injoignable. Vérifiez votre connexion et réessayez.",
    error_http: "Une erreur est survenue (HTTP {status}). Réessayez dans un instant.",
    error_stream: "La réponse a été interrompue. Renvoyez votre message.",
    chat_heading: "Conversation",
    subject: "Sujet (facultatif)",
    start_conversation: "Commencer une nouvelle conversation",
    no_conversation: "Commencez une conversation pour parler avec votre tuteur.",
    conversation_open: "Conversation commencée le {date}.",
    conversation_open_subject: "Conversation sur {subject}, commencée le {date}.",
    conversation_ended: "Cette conversation est terminée. Commencez-en une nouvelle pour continuer.",
    messages_label: "Messages",
    you: "Vous",
    tutor: "Tuteur",
    your_message: "Votre message",
    send: "Envoyer",
    sending: "Le tuteur répond…",
    end_conversation: "Terminer la conversation",
    memory_saved: "Le tuteur a noté : {title}",
    summary_pending: "Votre tuteur rédige le résumé de cette conversation…",
    summary_ready: "Le résumé de votre conversation est dans vos mémoires.",
    summary_late: "Le résumé n'est pas encore prêt ; il apparaîtra plus tard dans vos mémoires.",
    memories_heading: "Ce dont votre tuteur se souvient",
    memories_intro: "Votre tuteur garde ces notes d'une conversation à l'autre.",
    refresh: "Actualiser",
    show_more: "Afficher plus",
    no_memories: "Rien pour l'instant.",
    memory_count: "{count} mémoires",
    students_heading: "Choisir un élève",
    student: "Élève",
    no_students: "Vous n'avez pas encore d'élèves.",
    show: "Afficher",
    status_active: "Actives",
    status_archived: "Archivées",
    status_all: "Toutes",
    teacher_memories_heading: "Mémoires de {name}",
    add_note_heading: "Ajouter une note",
    title: "Titre",
    content: "Contenu",
    visibility: "Qui peut la voir",
    add_note: "Ajouter la note",
    note_added: "Note ajoutée.",
    correct: "Corriger",
    save: "Enregistrer la correction",
    corrected: "Mémoire corrigée.",
    archive: "Archiver",
    archive_reason: "Raison de l'archivage",
    archive_confirm: "Archiver cette mémoire",
    archived: "Mémoire archivée.",
    kind: "Type",
    source: "Origine",
    author: "Auteur",
    status: "Statut",
    confidence: "Confiance",
    created: "Créée",
    updated: "Modifiée",
    source_conversation: "Issue de la conversation",
    archived_reason: "Archivée parce que",
    needs_review: "À revoir",
    yes: "oui",
    author_you: "vous",
    author_teacher: "enseignant n° {id}",
    none: "—",
    kind_summary: "Résumé de conversation",
    kind_note: "Note",
    kind_teacher_note: "Note d'enseignant",
    kind_quiz_result: "Résultat de quiz",
    kind_file: "Fichier partagé",
    kind_fact: "Fait",
    kind_approach: "Ce qui a marché",
    source_summary_task: "Résumé d'une conversation",
    source_save_memory_tool: "Enregistrée par le tuteur pendant une conversation",
    source_teacher: "Écrite par un enseignant",
    source_quiz: "Tirée d'un quiz corrigé",
    source_file_upload: "Tirée d'un fichier partagé dans une conversation",
    source_extraction: "Tirée d'autres mémoires",
    source_merge: "Fusion de mémoires semblables",
    source_import: "Importée",
    source_mcp_tool: "Écrite par une application connectée (MCP)",
    status_superseded: "Remplacée",
    visibility_student: "L'élève et ses enseignants",
    visibility_teacher_only: "Enseignants uniquement",
    conversation_number: "n° {id}",
    safety_heading: "Sécurité",
    safety_intro: "Ce que le filtrage a relevé dans les messages, fichiers et réponses du tuteur de vos élèves. Les alertes ouvertes d'abord, les plus graves en premier.",
    no_flags: "Aucune alerte.",
    flag_student: "Élève",
    flag_when: "Quand",
    flag_status: "Statut",
    flag_category: "Catégorie",
    flag_severity: "Gravité",
    flag_outcome: "Note de clôture",
    acknowledge: "Prendre en charge",
    acknowledge_note: "Note (facultative)",
    acknowledged: "Alerte prise en charge.",
    resolve: "Clore",
    resolve_note: "Ce qui a été fait",
    resolve_outcome: "Issue",
    resolve_confirm: "Clore cette alerte",
    resolved: "Alerte close.",
    severity_info: "Information",
    severity_concern: "Inquiétude",
    severity_crisis: "Crise",
    category_self_harm: "Automutilation",
    category_abuse: "Maltraitance ou danger confié",
    category_violence: "Violence ou menaces",
    category_harassment: "Harcèlement",
    category_sexual: "Contenu sexuel",
    category_sexual_minors: "Contenu sexuel impliquant des mineurs",
    category_hate: "Haine",
    category_jailbreak: "Détournement du tuteur",
    category_distress: "Détresse",
    flag_status_open: "Ouverte",
    flag_status_acknowledged: "Prise en charge",
    flag_status_resolved: "Résolue",
    flag_status_false_positive: "Fausse alerte",
    source_message: "Message de l'élève",
    source_file: "Fichier envoyé",
    source_reply: "Réponse du tuteur (retenue)",
    source_pattern: "Tendance sur plusieurs conversations"
  };
  var STRINGS = { en, fr };
  var current = document.documentElement.lang.startsWith("fr") ? "fr" : "en";
  function language() {
    return current;
  }
  function setLanguage(lang) {
    current = lang;
    document.documentElement.lang = lang;
  }
  function t(key, params = {}) {
    return STRINGS[current][key].replace(
      /\{(\w+)\}/g,
      (whole, name) => name in params ? String(params[name]) : whole
    );
  }
  function isKey(key) {
    return key in en;
  }
  function translatePage(root = document) {
    for (const node of root.querySelectorAll("[data-i18n]")) {
      const key = node.dataset.i18n ?? "";
      if (isKey(key)) node.textContent = t(key);
    }
    document.title = t(document.body.dataset.page === "teacher" ? "teacher_page" : "student_page");
  }
  function formatDate(iso) {
    if (!iso) return t("none");
    return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
  }

  // web/src/common.ts
  var api = createClient2({ auth: { session: true } });
  function byId(id) {
    const node = document.getElementById(id);
    if (!node) throw new Error(`#${id} is missing from the page`);
    return node;
  }
  function h(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === true) node.setAttribute(name, "");
      else if (value !== false) node.setAttribute(name, value);
    }
    for (const child of children) {
      if (child !== null && child !== void 0 && child !== false) node.append(child);
    }
    return node;
  }
  function errorMessage(error) {
    if (error instanceof ApiError) return error.fromServer ? error.message : t("error_http", { status: error.status });
    if (error instanceof TypeError) return t("error_network");
    return error instanceof Error ? error.message : String(error);
  }
  function showError(error) {
    const region = byId("error");
    region.textContent = error === null ? "" : errorMessage(error);
    region.hidden = error === null;
  }
  async function act(button, action) {
    showError(null);
    if (button) button.disabled = true;
    try {
      await action();
      return true;
    } catch (error) {
      showError(error);
      return false;
    } finally {
      if (button) button.disabled = false;
    }
  }
  function label(key) {
    return t(key);
  }
  function provenance(memory, me2) {
    const author = memory.author === null || memory.author === void 0 ? t("none") : memory.author === me2.id ? t("author_you") : t("author_teacher", { id: memory.author });
    const rows = [
      ["kind", label(`kind_${memory.kind}`)],
      ["source", label(`source_${memory.source}`)],
      ["author", author],
      ["visibility", label(`visibility_${memory.visibility ?? "student"}`)],
      ["status", label(`status_${memory.status ?? "active"}`)],
      ["confidence", memory.confidence === void 0 ? t("none") : `${Math.round(memory.confidence * 100)} %`],
      ["created", formatDate(memory.created_at)],
      ["updated", formatDate(memory.updated_at)]
    ];
    if (memory.source_conversation) {
      rows.push(["source_conversation", t("conversation_number", { id: memory.source_conversation })]);
    }
    if (memory.status === "archived") rows.push(["archived_reason", memory.archived_reason || t("none")]);
    if (memory.needs_review) rows.push(["needs_review", t("yes")]);
    const list = h("dl", { class: "provenance" });
    for (const [key, value] of rows) {
      list.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
    }
    return list;
  }
  async function run(page2) {
    translatePage();
    const loginSection = byId("login");
    const account = byId("account");
    const app = byId("app");
    const wrongPage = byId("wrong-page");
    const languageSelect = byId("language");
    const loading = byId("loading");
    let me2 = null;
    function showLanguage(lang) {
      setLanguage(lang);
      languageSelect.value = lang;
      translatePage();
      if (me2) byId("whoami").textContent = t("signed_in_as", { name: displayName(me2) });
      page2.redraw();
    }
    async function signedIn(user) {
      me2 = user;
      loginSection.hidden = true;
      account.hidden = false;
      showLanguage(user.language ?? "en");
      if ((user.role ?? "student") !== page2.role) {
        wrongPage.hidden = false;
        return;
      }
      app.hidden = false;
      await page2.start(user);
    }
    function signedOut() {
      me2 = null;
      account.hidden = true;
      app.hidden = true;
      wrongPage.hidden = true;
      loginSection.hidden = false;
      page2.reset();
      byId("username").focus();
    }
    byId("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const form = event.currentTarget;
      const username = byId("username").value;
      const password = byId("password");
      void act(form.querySelector("button"), async () => {
        unwrap(await api.GET("/api/v1/auth/csrf/"));
        const { user } = unwrap(await api.POST("/api/v1/auth/login/", { body: { username, password: password.value } }));
        password.value = "";
        await signedIn(user);
      });
    });
    byId("logout").addEventListener("click", (event) => {
      void act(event.currentTarget, async () => {
        unwrap(await api.POST("/api/v1/auth/logout/"));
        signedOut();
      });
    });
    languageSelect.addEventListener("change", () => {
      const lang = languageSelect.value === "fr" ? "fr" : "en";
      if (!me2) {
        showLanguage(lang);
        return;
      }
      void act(null, async () => {
        const user = unwrap(await api.PATCH("/api/v1/me/", { body: { language: lang } }));
        me2 = user;
        showLanguage(user.language ?? lang);
      }).then((ok) => {
        if (!ok) languageSelect.value = language();
      });
    });
    try {
      const result = await api.GET("/api/v1/me/");
      if (result.response.status === 401 || result.response.status === 403) signedOut();
      else await signedIn(unwrap(result));
    } catch (error) {
      signedOut();
      showError(error);
    } finally {
      loading.hidden = true;
    }
  }
  function displayName(user) {
    const full = [user.first_name, user.last_name].filter(Boolean).join(" ");
    return full ? `${full} (${user.username})` : user.username;
  }

  // web/src/safety.ts
  var PAGE_SIZE = 50;
  var CLOSED = /* @__PURE__ */ new Set(["resolved", "false_positive"]);
  var flags = [];
  var next = false;
  var page = 1;
  function announce(text) {
    byId("safety-status").textContent = text;
  }
  function studentName(flag) {
    const full = [flag.student.first_name, flag.student.last_name].filter(Boolean).join(" ");
    return full ? `${full} (${flag.student.username})` : flag.student.username;
  }
  function replace(updated) {
    flags = flags.map((f) => f.id === updated.id ? updated : f);
    draw();
    byId(`flag-${updated.id}`).focus();
  }
  function acknowledgeForm(flag) {
    const note = h("input", { name: "note", maxlength: "2000" });
    note.id = `acknowledge-${flag.id}-note`;
    const submit = h("button", { type: "submit" }, t("acknowledge"));
    const form = h(
      "form",
      { class: "acknowledge inline" },
      h("p", { class: "field" }, h("label", { for: note.id }, t("acknowledge_note")), note),
      submit
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void act(submit, async () => {
        const updated = unwrap(
          await api.POST("/api/v1/safety/flags/{flag_id}/acknowledge/", {
            params: { path: { flag_id: flag.id } },
            body: { note: note.value }
          })
        );
        replace(updated);
        announce(t("acknowledged"));
      });
    });
    return form;
  }
  function resolveForm(flag) {
    const note = h("textarea", { name: "note", rows: "2", maxlength: "2000", required: true });
    note.id = `resolve-${flag.id}-note`;
    const outcome = h(
      "select",
      { name: "outcome" },
      h("option", { value: "resolved" }, t("flag_status_resolved")),
      h("option", { value: "false_positive" }, t("flag_status_false_positive"))
    );
    outcome.id = `resolve-${flag.id}-outcome`;
    const submit = h("button", { type: "submit" }, t("resolve_confirm"));
    const form = h(
      "form",
      { class: "resolve" },
      h("p", { class: "field" }, h("label", { for: note.id }, t("resolve_note")), note),
      h("p", { class: "field" }, h("label", { for: outcome.id }, t("resolve_outcome")), outcome),
      submit
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void act(submit, async () => {
        const updated = unwrap(
          await api.POST("/api/v1/safety/flags/{flag_id}/resolve/", {
            params: { path: { flag_id: flag.id } },
            body: { note: note.value, outcome: outcome.value === "false_positive" ? "false_positive" : "resolved" }
          })
        );
        replace(updated);
        announce(t("resolved"));
      });
    });
    return h("details", { class: "action" }, h("summary", {}, t("resolve")), form);
  }
  function flagCard(flag) {
    const rows = [
      ["flag_student", studentName(flag)],
      ["flag_category", t(`category_${flag.category}`)],
      ["source", t(`source_${flag.source}`)],
      ["flag_when", formatDate(flag.created_at)],
      ["flag_status", t(`flag_status_${flag.status}`)]
    ];
    if (flag.outcome) rows.push(["flag_outcome", flag.outcome]);
    const details = h("dl", { class: "provenance" });
    for (const [key, value] of rows) {
      details.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
    }
    const closed = CLOSED.has(flag.status);
    return h(
      "li",
      { id: `flag-${flag.id}`, tabindex: "-1" },
      h(
        "article",
        {
          class: `flag severity-${flag.severity} flag-status-${flag.status}`,
          "data-flag": String(flag.id),
          "aria-labelledby": `flag-${flag.id}-title`
        },
        h(
          "h3",
          { id: `flag-${flag.id}-title` },
          h("span", { class: "severity" }, t(`severity_${flag.severity}`)),
          " ",
          t(`category_${flag.category}`)
        ),
        h("p", { class: "excerpt" }, flag.excerpt),
        details,
        flag.status === "open" && acknowledgeForm(flag),
        !closed && resolveForm(flag)
      )
    );
  }
  function draw() {
    byId("flag-count").textContent = flags.length ? "" : t("no_flags");
    byId("flags").replaceChildren(...flags.map(flagCard));
    byId("more-flags").hidden = !next;
  }
  function anchored() {
    const match = /^#flag-(\d+)$/.exec(window.location.hash);
    return match ? Number(match[1]) : null;
  }
  async function showAnchored() {
    const id = anchored();
    if (id === null) return;
    if (!flags.some((f) => f.id === id)) {
      const result = await api.GET("/api/v1/safety/flags/{flag_id}/", { params: { path: { flag_id: id } } });
      if (!result.data) return;
      flags = [result.data, ...flags];
      draw();
    }
    const item = byId(`flag-${id}`);
    item.scrollIntoView({ block: "start" });
    item.focus();
  }
  async function loadFlags(more = false) {
    const wanted = more ? page + 1 : 1;
    const data = unwrap(
      await api.GET("/api/v1/safety/flags/", {
        params: { query: { ordering: "severity", page: wanted, page_size: PAGE_SIZE } }
      })
    );
    const seen = new Set(data.results.map((f) => f.id));
    flags = more ? [...flags.filter((f) => !seen.has(f.id)), ...data.results] : data.results;
    page = wanted;
    next = Boolean(data.next);
    draw();
    if (!more) await showAnchored();
  }
  function redrawFlags() {
    draw();
  }
  function resetFlags() {
    flags = [];
    next = false;
    page = 1;
    announce("");
    draw();
  }
  byId("more-flags").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadFlags(true));
  });
  window.addEventListener("hashchange", () => {
    void act(null, showAnchored);
  });

  // web/src/teacher.ts
  var PAGE_SIZE2 = 50;
  var me = null;
  var students = [];
  var memories = [];
  var memoriesNext = false;
  var memoriesPage = 1;
  var studentSelect = () => byId("student");
  var statusSelect = () => byId("status");
  function selectedStudent() {
    return students.find((s) => String(s.id) === studentSelect().value);
  }
  function announce2(text) {
    byId("action-status").textContent = text;
  }
  function field(id, key, control) {
    control.id = id;
    return h("p", { class: "field" }, h("label", { for: id }, t(key)), control);
  }
  function visibilitySelect(value) {
    const select = h(
      "select",
      { name: "visibility" },
      h("option", { value: "teacher_only" }, t("visibility_teacher_only")),
      h("option", { value: "student" }, t("visibility_student"))
    );
    select.value = value;
    return select;
  }
  function correctForm(memory) {
    const prefix = `correct-${memory.id}`;
    const title = h("input", { name: "title", maxlength: "200", required: true });
    title.value = memory.title;
    const content = h("textarea", { name: "content", rows: "4", required: true });
    content.value = memory.content;
    const visibility = memory.kind === "teacher_note" ? visibilitySelect(memory.visibility ?? "student") : null;
    const submit = h("button", { type: "submit" }, t("save"));
    const form = h(
      "form",
      { class: "correct" },
      field(`${prefix}-title`, "title", title),
      field(`${prefix}-content`, "content", content),
      visibility && field(`${prefix}-visibility`, "visibility", visibility),
      submit
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const body = { title: title.value, content: content.value };
      if (visibility) body.visibility = visibility.value === "teacher_only" ? "teacher_only" : "student";
      void act(submit, async () => {
        unwrap(
          await api.PATCH("/api/v1/memories/{memory_id}/", {
            params: { path: { memory_id: memory.id } },
            body
          })
        );
        await loadMemories();
        announce2(t("corrected"));
      });
    });
    return h("details", { class: "action" }, h("summary", {}, t("correct")), form);
  }
  function archiveForm(memory) {
    const reason = h("input", { name: "reason", maxlength: "300", required: true });
    const submit = h("button", { type: "submit", class: "danger" }, t("archive_confirm"));
    const form = h("form", { class: "archive" }, field(`archive-${memory.id}-reason`, "archive_reason", reason), submit);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      void act(submit, async () => {
        unwrap(
          await api.POST("/api/v1/memories/{memory_id}/archive/", {
            params: { path: { memory_id: memory.id } },
            body: { reason: reason.value }
          })
        );
        await loadMemories();
        announce2(t("archived"));
      });
    });
    return h("details", { class: "action" }, h("summary", {}, t("archive")), form);
  }
  function memoryCard(memory, user) {
    const active = (memory.status ?? "active") === "active";
    return h(
      "li",
      {},
      h(
        "article",
        {
          class: `memory kind-${memory.kind} status-${memory.status ?? "active"}`,
          "data-memory": String(memory.id),
          "aria-labelledby": `memory-${memory.id}-title`
        },
        h("h3", { id: `memory-${memory.id}-title` }, memory.title),
        h("p", { class: "content" }, memory.content),
        provenance(memory, user),
        active && correctForm(memory),
        active && archiveForm(memory)
      )
    );
  }
  function drawStudents() {
    const select = studentSelect();
    const chosen = select.value;
    select.replaceChildren(...students.map((s) => h("option", { value: String(s.id) }, displayName(s))));
    if (chosen) select.value = chosen;
    byId("no-students").hidden = students.length > 0;
    byId("student-view").hidden = students.length === 0;
  }
  function drawMemories() {
    const student = selectedStudent();
    byId("memories-heading").textContent = student ? t("teacher_memories_heading", { name: displayName(student) }) : "";
    byId("memory-count").textContent = memories.length ? "" : t("no_memories");
    const list = byId("memories");
    list.replaceChildren(...me ? memories.map((m) => memoryCard(m, me)) : []);
    byId("more-memories").hidden = !memoriesNext;
  }
  async function loadStudents() {
    const all = [];
    for (let page2 = 1; ; page2++) {
      const data = unwrap(await api.GET("/api/v1/students/", { params: { query: { page: page2, page_size: 100 } } }));
      all.push(...data.results);
      if (!data.next) break;
    }
    students = all;
    drawStudents();
  }
  async function loadMemories(more = false) {
    const student = selectedStudent();
    if (!student) {
      memories = [];
      drawMemories();
      return;
    }
    const value = statusSelect().value;
    const status = value === "archived" || value === "all" ? value : "active";
    const page2 = more ? memoriesPage + 1 : 1;
    const data = unwrap(
      await api.GET("/api/v1/memories/", {
        params: { query: { student: student.id, status, page: page2, page_size: PAGE_SIZE2 } }
      })
    );
    memories = more ? [...memories, ...data.results] : data.results;
    memoriesPage = page2;
    memoriesNext = Boolean(data.next);
    drawMemories();
  }
  studentSelect().addEventListener("change", () => {
    announce2("");
    void act(null, () => loadMemories());
  });
  statusSelect().addEventListener("change", () => {
    announce2("");
    void act(null, () => loadMemories());
  });
  byId("more-memories").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadMemories(true));
  });
  byId("note-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const student = selectedStudent();
    const title = byId("note-title");
    const content = byId("note-content");
    const visibility = byId("note-visibility").value === "student" ? "student" : "teacher_only";
    if (!student) return;
    void act(event.currentTarget.querySelector("button"), async () => {
      unwrap(
        await api.POST("/api/v1/memories/", {
          body: { student: student.id, title: title.value, content: content.value, visibility }
        })
      );
      title.value = "";
      content.value = "";
      await loadMemories();
      announce2(t("note_added"));
    });
  });
  void run({
    role: "teacher",
    async start(user) {
      me = user;
      await loadFlags();
      await loadStudents();
      await loadMemories();
    },
    redraw() {
      redrawFlags();
      drawStudents();
      drawMemories();
    },
    reset() {
      me = null;
      students = [];
      memories = [];
      memoriesNext = false;
      announce2("");
      showError(null);
      resetFlags();
      drawStudents();
      drawMemories();
    }
  });
})();
