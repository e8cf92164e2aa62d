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
  function newClientMessageId() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }
  async function* turnStream(client, conversationId, body, init = {}) {
    const result = await client.POST("/api/v1/conversations/{conversation_id}/messages/", {
      params: { path: { conversation_id: conversationId } },
      body,
      headers: { Accept: "text/event-stream" },
      parseAs: "stream",
      ...init.signal ? { signal: init.signal } : {}
    });
    const stream = unwrap(result);
    if (!stream) throw new ApiError(result.response.status, void 0);
    yield* readTurnEvents(stream);
  }
  async function* readTurnEvents(stream) {
    const reader = stream.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let event = "message";
    let data = [];
    try {
      for (; ; ) {
        const { value, done } = await reader.read();
        buffer += decoder.decode(value, { stream: !done });
        if (done) buffer += "\n\n";
        let newline;
        while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
          if (!done && newline === buffer.length - 1 && buffer.endsWith("\r")) break;
          const line = buffer.slice(0, newline);
          buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
          if (line === "") {
            if (data.length && KNOWN_EVENTS.has(event)) {
              yield { event, data: JSON.parse(data.join("\n")) };
            }
            event = "message";
            data = [];
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const raw = colon < 0 ? "" : line.slice(colon + 1);
          const text = raw.startsWith(" ") ? raw.slice(1) : raw;
          if (field === "event") event = text;
          else if (field === "data") data.push(text);
        }
        if (done) break;
      }
    } finally {
      await reader.cancel().catch(() => void 0);
    }
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
  async function run(page) {
    translatePage();
    const loginSection = byId("login");
    const account = byId("account");
    const app = byId("app");
    const wrongPage = byId("wrong-page");
    const languageSelect = byId("language");
    const loading = byId("loading");
    let me = null;
    function showLanguage(lang) {
      setLanguage(lang);
      languageSelect.value = lang;
      translatePage();
      if (me) byId("whoami").textContent = t("signed_in_as", { name: displayName(me) });
      page.redraw();
    }
    async function signedIn(user) {
      me = user;
      loginSection.hidden = true;
      account.hidden = false;
      showLanguage(user.language ?? "en");
      if ((user.role ?? "student") !== page.role) {
        wrongPage.hidden = false;
        return;
      }
      app.hidden = false;
      await page.start(user);
    }
    function signedOut() {
      me = null;
      account.hidden = true;
      app.hidden = true;
      wrongPage.hidden = true;
      loginSection.hidden = false;
      page.reset();
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
      if (!me) {
        showLanguage(lang);
        return;
      }
      void act(null, async () => {
        const user = unwrap(await api.PATCH("/api/v1/me/", { body: { language: lang } }));
        me = user;
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

  // web/src/student.ts
  var SUMMARY_POLL_MS = 1500;
  var SUMMARY_WAIT_MS = 12e4;
  var PAGE_SIZE = 50;
  var conversation = null;
  var messages = [];
  var memories = [];
  var memoriesNext = false;
  var memoriesPage = 1;
  var pending = null;
  var summaryWatch = 0;
  var messageList = () => byId("messages");
  var sendForm = () => byId("send-form");
  function messageItem(role, content) {
    return h(
      "li",
      { class: `message ${role}` },
      h("span", { class: "who" }, t(role === "student" ? "you" : "tutor")),
      h("p", { class: "text" }, content)
    );
  }
  function drawConversation() {
    const status = byId("conversation-status");
    const list = messageList();
    list.replaceChildren(...messages.map((m) => messageItem(m.role === "student" ? "student" : "tutor", m.content)));
    if (!conversation) {
      status.textContent = t("no_conversation");
    } else if (conversation.status === "ended") {
      status.textContent = t("conversation_ended");
    } else {
      const date = formatDate(conversation.created_at);
      status.textContent = conversation.subject ? t("conversation_open_subject", { subject: conversation.subject, date }) : t("conversation_open", { date });
    }
    list.hidden = messages.length === 0;
    const open = conversation !== null && conversation.status === "active";
    sendForm().hidden = !open;
    byId("new-conversation").hidden = open;
  }
  function drawMemories() {
    const list = byId("memories");
    list.replaceChildren(
      ...memories.map(
        (memory) => h(
          "li",
          { class: `memory kind-${memory.kind}`, "data-memory": String(memory.id) },
          h("h3", {}, memory.title),
          h("p", {}, memory.content),
          h(
            "p",
            { class: "meta" },
            h("span", { class: "kind" }, label(`kind_${memory.kind}`)),
            " · ",
            h("span", { class: "source" }, label(`source_${memory.source}`)),
            ` · ${formatDate(memory.created_at)}`
          )
        )
      )
    );
    byId("memories-empty").hidden = memories.length > 0;
    byId("more-memories").hidden = !memoriesNext;
  }
  async function loadMemories(more = false) {
    const page = more ? memoriesPage + 1 : 1;
    const data = unwrap(await api.GET("/api/v1/memories/", { params: { query: { page, page_size: PAGE_SIZE } } }));
    memories = more ? [...memories, ...data.results] : data.results;
    memoriesPage = page;
    memoriesNext = Boolean(data.next);
    drawMemories();
  }
  async function resumeConversation() {
    const before = conversation;
    const latest = unwrap(await api.GET("/api/v1/conversations/", { params: { query: { page_size: 1 } } })).results[0];
    const detail = latest && latest.status === "active" ? unwrap(
      await api.GET("/api/v1/conversations/{conversation_id}/", {
        params: { path: { conversation_id: latest.id } }
      })
    ) : null;
    if (conversation !== before) return;
    conversation = detail;
    messages = detail ? [...detail.messages.results].reverse() : [];
  }
  async function send(content) {
    if (!conversation) return;
    const id = pending?.content === content ? pending.id : newClientMessageId();
    pending = { content, id };
    const list = messageList();
    const button = byId("send");
    const status = byId("turn-status");
    let reply = null;
    button.disabled = true;
    list.setAttribute("aria-busy", "true");
    status.textContent = t("sending");
    showError(null);
    try {
      for await (const event of turnStream(api, conversation.id, { content, client_message_id: id })) {
        if (event.event === "message") {
          if (!messages.some((m) => m.id === event.data.id)) {
            messages.push(event.data);
            list.append(messageItem("student", event.data.content));
            list.hidden = false;
          }
          byId("message").value = "";
        } else if (event.event === "delta") {
          if (!reply) {
            const item = messageItem("tutor", "");
            item.classList.add("streaming");
            list.append(item);
            reply = item.querySelector(".text");
          }
          reply?.append(event.data.content);
        } else if (event.event === "memory") {
          status.textContent = t("memory_saved", { title: event.data.title });
          memories = [event.data, ...memories.filter((m) => m.id !== event.data.id)];
          drawMemories();
        } else if (event.event === "done") {
          if (!reply) {
            list.append(messageItem("tutor", ""));
            reply = list.lastElementChild?.querySelector(".text") ?? null;
          }
          if (reply) reply.textContent = event.data.content;
          reply?.parentElement?.classList.remove("streaming");
          messages.push(event.data);
          if (!reply?.isConnected) drawConversation();
          pending = null;
          status.textContent = "";
          return;
        } else {
          throw new ApiError(0, event.data);
        }
      }
      throw new Error(t("error_stream"));
    } catch (error) {
      reply?.closest("li")?.remove();
      status.textContent = "";
      const box = byId("message");
      if (!box.value) box.value = content;
      showError(error);
    } finally {
      list.setAttribute("aria-busy", "false");
      button.disabled = false;
    }
  }
  function watchForSummary(conversationId) {
    const status = byId("memories-status");
    const watch = ++summaryWatch;
    const deadline = Date.now() + SUMMARY_WAIT_MS;
    status.textContent = t("summary_pending");
    const poll = async () => {
      if (watch !== summaryWatch) return;
      try {
        await loadMemories();
      } catch {
      }
      if (memories.some((m) => m.kind === "summary" && m.source_conversation === conversationId)) {
        status.textContent = t("summary_ready");
      } else if (Date.now() > deadline) {
        status.textContent = t("summary_late");
      } else {
        window.setTimeout(() => void poll(), SUMMARY_POLL_MS);
      }
    };
    window.setTimeout(() => void poll(), SUMMARY_POLL_MS);
  }
  byId("new-conversation").addEventListener("submit", (event) => {
    event.preventDefault();
    const subject = byId("subject");
    void act(event.currentTarget.querySelector("button"), async () => {
      conversation = unwrap(await api.POST("/api/v1/conversations/", { body: { subject: subject.value.trim() } }));
      messages = [];
      pending = null;
      subject.value = "";
      drawConversation();
      byId("message").focus();
    });
  });
  sendForm().addEventListener("submit", (event) => {
    event.preventDefault();
    const content = byId("message").value;
    if (content.trim()) void send(content);
  });
  byId("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      sendForm().requestSubmit();
    }
  });
  byId("end").addEventListener("click", (event) => {
    const current2 = conversation;
    if (!current2) return;
    void act(event.currentTarget, async () => {
      conversation = unwrap(
        await api.POST("/api/v1/conversations/{conversation_id}/end/", {
          params: { path: { conversation_id: current2.id } }
        })
      );
      pending = null;
      drawConversation();
      watchForSummary(current2.id);
    });
  });
  byId("refresh-memories").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadMemories());
  });
  byId("more-memories").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadMemories(true));
  });
  void run({
    role: "student",
    async start() {
      await Promise.all([resumeConversation(), loadMemories()]);
      drawConversation();
    },
    redraw() {
      drawConversation();
      drawMemories();
    },
    reset() {
      conversation = null;
      messages = [];
      memories = [];
      memoriesNext = false;
      pending = null;
      summaryWatch++;
      byId("memories-status").textContent = "";
      byId("turn-status").textContent = "";
      drawConversation();
      drawMemories();
    }
  });
})();
