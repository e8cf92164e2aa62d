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
    for await (const { event, data } of readServerSentEvents(stream)) {
      if (KNOWN_EVENTS.has(event)) yield { event, data };
    }
  }
  async function* readServerSentEvents(stream) {
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
            if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
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
    code_heading: "Or with your sign-in card",
    code_label: "The code on your card",
    code_login: "Sign in with the code",
    sso_heading: "Or with your school account",
    sso_sign_in: "Sign in with {name}",
    sso_sign_in_school: "Sign in with {name} ({school})",
    wrong_page_student: "This page is for students. Teachers have their own page:",
    guardian_page: "My child's tutor",
    wrong_page_guardian: "This page is for guardians. Students have their own page:",
    guardian_children_heading: "My child",
    guardian_no_children: "No child is linked to your account yet: ask their school.",
    guardian_child: "Child",
    guardian_export: "Download all their data",
    guardian_memories_heading: "What the tutor remembers",
    guardian_learning_heading: "Learning",
    guardian_no_skills: "No skill assessed yet.",
    guardian_erasure_heading: "Erase my child's data",
    guardian_erasure_intro: "Ask the school to erase everything the tutor holds about your child. The school decides.",
    guardian_erasure_reason: "Why",
    guardian_erasure_send: "Send the request",
    guardian_erasure_pending: "Waiting for the school's decision",
    guardian_erasure_approved: "Approved: the data was erased",
    guardian_erasure_refused: "Refused",
    wrong_page_teacher: "This page is for teachers. Students have their own page:",
    go_student_page: "the student page",
    go_teacher_page: "the teacher page",
    error_network: "The server could not be reached. Check your connection and try again.",
    error_http: "Something went wrong (HTTP {status}). Try again in a moment.",
    error_stream: "The reply was cut off. Send your message again.",
    demo_model_title: "Demo model.",
    demo_model_text: "The tutor's replies are scripted, to show how its memory works: it is not a real tutor. To plug in a real model, set LLM_BASE_URL and LLM_MODEL (or LLM_API_KEY for OpenAI) and run make run again.",
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
    note_title_rule: "4 to 10 words, saying what the note is about.",
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
    flag_alert: "Alert",
    flag_quiet: "None: a less certain finding, waiting here for a teacher to look",
    flag_unrouted: "None of this student's teachers or safety contacts could be alerted (no email address, or every alert failed): the alert went to the school's safety lead or staff instead. Add an email address or a safety contact for the class.",
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
    source_pattern: "Pattern across conversations",
    // teacher page (issue 24)
    student_number: "student #{id}",
    jump_to: "Go to:",
    // the class
    // Teacher: the workspace (the class overview, a student's view, the school)
    views_label: "Workspace",
    view_class: "Class overview",
    view_school: "My school",
    overview_heading: "Class {name}",
    class_skills_heading: "Skills of the class",
    roster_caption_one: "{name}: {count} student",
    roster_caption_other: "{name}: {count} students",
    roster_empty: "No student is enrolled in this class yet.",
    roster_teachers: "Teachers: {names}",
    roster_last_activity: "Last activity",
    roster_never: "no conversation yet",
    roster_flags: "Open flags",
    roster_no_flags: "none",
    roster_flags_count: "{count} open",
    roster_reviews: "Reviews due",
    roster_no_reviews: "none",
    roster_reviews_count: "{count} due",
    roster_mastery: "Mastery",
    roster_chart_label_one: "{count} skill assessed, {average}",
    roster_chart_label_other: "{count} skills assessed, {average} on average",
    homework_heading: "Set homework for the class",
    homework_instructions: "Instructions (optional)",
    homework_due: "Due (optional)",
    homework_set: "Set the homework",
    homework_done: "“{title}” was set for {name}.",
    back_to_class: "← Back to the class",
    student_switch: "Another student",
    note_short: "Add a note",
    school_heading: "My school",
    school_no_classes: "Your school has no class yet.",
    school_classes_caption: "Classes ({count})",
    class_heading: "My class",
    classroom: "Class",
    no_classes: "You have no class yet.",
    class_cards: "Print the class's sign-in cards",
    class_unavailable: "The list of your classes cannot be read from this server.",
    class_no_skills: "No skill has been assessed in this class yet.",
    class_table_caption: "Mastery per student and skill, {name}",
    class_average: "class average {value}",
    legend: "Legend",
    legend_low: "below 40 %: needs help",
    legend_learning: "40 to 69 %: learning",
    legend_near: "70 to 94 %: nearly there",
    legend_mastered: "95 % or more: mastered",
    legend_due: "a review of this skill is due",
    due_mark: "review due",
    not_assessed: "not assessed",
    mastery_low: "needs help",
    mastery_learning: "learning",
    mastery_near: "nearly there",
    mastery_mastered: "mastered",
    // asking
    ask_heading: "Ask about this student",
    ask_class_heading: "Ask about the class",
    ask_intro: "A question in plain words; the answer cites the memories, quizzes and skills it rests on.",
    ask_question: "Your question",
    ask_about_student: "Your question about {name}",
    ask_about_class: "Your question about the class {name}",
    ask: "Ask",
    answer_insufficient: "What is known about this does not answer the question.",
    answer_citations: "Evidence cited:",
    answer_students: "Students named:",
    claim_unsupported: "no evidence cited",
    ask_thinking: "Reading what is known and writing the answer…",
    answer_no_citation: "This answer cites no evidence: check it before relying on it.",
    flag_read_conversation: "Read the conversation",
    cite_memory: "Memory",
    cite_quiz: "Quiz",
    cite_skill: "Skill",
    cite_task: "Task",
    cite_file: "File",
    cite_card: "Student card",
    // the card
    card_short: "Card",
    card_heading: "Card of {name}",
    card_heading_none: "Student card",
    card_intro: "What the tutor always sees first about this student.",
    card_goals: "Goals",
    card_accommodations: "Accommodations",
    card_interests: "Interests",
    card_level: "Level",
    card_register: "Preferred register",
    card_student_editable: "The student may edit",
    card_size: "Room used",
    card_tokens: "{percent} % of the room the tutor keeps for the card",
    card_edit: "Edit the card",
    card_one_per_line: "Goals, accommodations and interests: one per line.",
    card_save: "Save the card",
    card_saved: "Card saved.",
    card_unchanged: "Nothing changed.",
    card_history: "History of changes",
    card_no_changes: "No change yet.",
    card_op_add: "added “{value}”",
    card_op_remove: "removed “{value}”",
    card_op_set: "set to “{value}”",
    card_change_applied: "applied",
    card_change_pending: "waiting for a teacher",
    card_change_rejected: "rejected",
    card_source_teacher: "a teacher",
    card_source_student: "the student",
    card_source_extraction: "proposed by the tutor from the conversations",
    card_source_staff: "staff",
    card_change_accept: "Accept",
    card_change_reject: "Reject",
    card_accepted: "Change accepted.",
    card_rejected: "Change rejected.",
    // the review queue
    review_heading: "To review",
    review_intro: "Changes the tutor proposed and memories that wait for a teacher's decision.",
    review_empty: "Nothing to review.",
    review_count: "{count} to review",
    review_card_change: "Proposed change to the card: {field}",
    review_supersession: "Possible update of a memory",
    review_older: "Older",
    review_newer: "Newer",
    review_apply: "Replace the older memory",
    review_dismiss: "Keep both",
    review_applied: "The older memory was replaced.",
    review_dismissed: "Both memories kept.",
    review_needs_review: "To check: {title}",
    review_confirm: "Confirm as it is",
    review_confirmed: "Memory confirmed.",
    confidence_value: "confidence {value}",
    proposed_by_memory: "from memory #{id}",
    // learning
    learning_short: "Learning",
    learning_heading: "Learning of {name}",
    skills_heading: "Skills",
    skills_caption: "Mastery per skill, with the next review",
    no_skills: "No skill assessed yet.",
    skill: "Skill",
    mastery: "Mastery",
    trend: "Trend",
    skill_answers: "Right answers",
    latest_quiz: "Latest quiz",
    review: "Review",
    answers_right: "{correct} of {total}",
    trend_up: "improving",
    trend_down: "slipping",
    trend_flat: "steady",
    review_overdue: "due, {days} days late",
    review_due_now: "due now",
    review_next: "next on {date}",
    quizzes_heading: "Quizzes",
    no_quizzes: "No quiz yet.",
    quiz_score: "{correct} of {total} right",
    quiz_status_open: "not answered yet",
    quiz_status_grading: "being graded",
    quiz_status_graded: "graded",
    quiz_details: "Questions and answers",
    quiz_choices: "Choices: {choices}",
    quiz_expected: "Expected: {answer}",
    quiz_given: "Answered: {answer}",
    quiz_skipped: "(skipped)",
    quiz_not_answered: "Not answered.",
    result_correct: "right",
    result_incorrect: "wrong",
    result_pending: "being graded",
    result_ungraded: "could not be graded",
    tasks_heading: "Tasks",
    no_tasks: "No task.",
    task_status_todo: "to do",
    task_status_in_progress: "in progress",
    task_status_done: "done",
    task_overdue: "late",
    task_due: "due {date}",
    task_no_due: "no due date",
    task_for_class: "for the whole class",
    task_set_by_tutor: "Status set by the tutor: {reason}",
    // conversations
    conversations_heading: "Conversations",
    no_conversations: "No conversation yet.",
    conversation_title: "Conversation of {date}",
    conversation_title_subject: "{subject}, {date}",
    conversation_status_active: "Open",
    conversation_status_ended: "Ended",
    message_count_one: "{count} message",
    message_count_other: "{count} messages",
    ended_on: "ended {date}",
    read_conversation: "Read the conversation",
    older_messages: "Show older messages",
    close_transcript: "Close the conversation",
    no_messages: "No message.",
    open_conversation: "Open conversation #{id}",
    // memories and their evidence
    memories_short: "Memories",
    evidence_heading: "Drawn from ({count}):",
    evidence_unavailable: "Memory #{id}, no longer available.",
    // student page (issue 24)
    student_conversations_heading: "Your conversations",
    student_no_conversations: "No conversation yet.",
    student_conversation_untitled: "Conversation of {date}",
    student_conversation_state_active: "Open",
    student_conversation_state_ended: "Ended",
    student_conversation_started: "started {date}",
    student_message_count_one: "{count} message",
    student_message_count_other: "{count} messages",
    student_open: "Open",
    student_end: "End",
    student_on_screen: "On screen",
    student_conversation_end_done: "The conversation “{title}” has ended.",
    student_older_messages: "Show earlier messages",
    student_message_unanswered: "The tutor has not answered this message.",
    student_retry: "Send again",
    student_files_heading: "Files in this conversation",
    student_no_files: "No file shared yet.",
    student_file_choose: "Share a file (PDF, text or picture)",
    student_file_upload: "Send the file",
    student_file_uploaded: "“{name}” is shared with your tutor.",
    student_file_status_pending: "Being read…",
    student_file_status_ready: "Ready",
    student_file_status_unreadable: "Could not be read",
    student_file_ready_pages: "Ready ({pages} p.)",
    student_file_unreadable_because: "Could not be read: {reason}",
    student_file_reason_malformed: "the file is damaged",
    student_file_reason_encrypted: "the file is protected by a password",
    student_file_reason_no_text: "no text was found in it",
    student_file_reason_missing: "the file is missing",
    student_file_reason_extraction_failed: "reading it failed",
    student_file_reason_too_large: "it is too long to read",
    student_file_reason_too_slow: "it took too long to read",
    student_quizzes_heading: "Quizzes",
    student_no_open_quizzes: "No quiz to answer.",
    student_quizzes_done_heading: "Quizzes answered",
    student_quiz_title: "Quiz: {topic}",
    student_quiz_to_answer_one: "{count} question to answer",
    student_quiz_to_answer_other: "{count} questions to answer",
    student_quiz_grading: "Some answers are being graded…",
    student_quiz_score: "{correct} of {total} right",
    student_quiz_number_answer: "Your answer (a number or a fraction)",
    student_quiz_text_answer: "Your answer",
    student_quiz_skip_hint: "A question left blank counts as skipped.",
    student_quiz_submit: "Send my answers",
    student_quiz_answer: "Answer the quiz",
    student_quiz_see_answers: "See the answers",
    student_quiz_your_answer: "Your answer:",
    student_quiz_skipped: "(skipped)",
    student_quiz_expected: "Expected answer:",
    student_quiz_sent: "Your answers are graded.",
    student_quiz_sent_grading: "Your answers are sent; some are being graded.",
    student_quiz_graded: "The quiz “{topic}” is graded.",
    student_quiz_made: "The tutor made a quiz: {topic}",
    student_quiz_result_correct: "Right",
    student_quiz_result_incorrect: "Wrong",
    student_quiz_result_pending: "Being graded…",
    student_quiz_result_ungraded: "Could not be graded",
    student_quiz_mark_correct: "✓",
    student_quiz_mark_incorrect: "✗",
    student_quiz_mark_pending: "…",
    student_quiz_mark_ungraded: "?",
    student_tasks_heading: "Your tasks",
    student_no_tasks: "No task for now.",
    student_task_status: "Where you are",
    student_task_todo: "To do",
    student_task_in_progress: "In progress",
    student_task_done: "Done",
    student_task_due: "due {date}",
    student_task_overdue: "Late",
    student_task_saved: "“{title}”: {status}.",
    student_task_set_by_tutor: "Set by the tutor: {reason}",
    student_ask_heading: "What does my tutor know about me?",
    student_ask_intro: "Ask your tutor what it knows about you, and see where each thing comes from.",
    student_ask_about_me: "What do you know about me?",
    student_ask_about_me_question: "What do you know about me?",
    student_ask_thinking: "Your tutor is gathering what it knows…",
    student_ask_no_citation: "Your tutor could not say where this comes from: it may be wrong.",
    student_card_heading: "About me",
    student_card_intro: "What your tutor keeps in mind about you in every conversation.",
    student_card_you_may_edit: "You may change: {fields}.",
    student_card_edit: "Change what your tutor knows about you",
    student_card_one_per_line: "One per line.",
    student_card_save: "Save",
    student_card_saved: "Saved: your tutor will keep this in mind.",
    student_card_unchanged: "Nothing changed.",
    student_ask_done: "Here is what your tutor knows.",
    student_ask_insufficient: "Your tutor does not know much about you yet.",
    student_ask_sources: "Where it comes from",
    student_ask_source_number: "source {n}",
    student_citation_memory: "Memory",
    student_citation_quiz: "Quiz",
    student_citation_skill: "Skill",
    student_citation_task: "Task",
    student_citation_file: "File",
    student_citation_card: "Your profile",
    student_safety_notice_heading: "Help is available right now",
    student_safety_call: "Call",
    student_later: "later",
    student_error_unavailable: "The tutor is not available right now. Try again later.",
    student_error_unavailable_kept: "The tutor is not available right now. Your message is kept; try again later.",
    student_error_budget: "You have reached the limit of time with the tutor for now. You can go on from {date}.",
    student_error_throttled_kept: "You are sending messages a bit fast. Your message is kept; wait a moment, then send it again.",
    student_error_busy: "The tutor is still answering your previous message. Wait for its answer, then send this one again.",
    student_error_cut: "The answer was cut off. Your message is kept; send it again.",
    student_error_network_kept: "The server could not be reached. Your message is kept; check your connection and send it again."
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
    code_heading: "Ou avec ta carte de connexion",
    code_label: "Le code de ta carte",
    code_login: "Se connecter avec le code",
    sso_heading: "Ou avec le compte de l'école",
    sso_sign_in: "Se connecter avec {name}",
    sso_sign_in_school: "Se connecter avec {name} ({school})",
    wrong_page_student: "Cette page est celle des élèves. Les enseignants ont la leur :",
    guardian_page: "Le tuteur de mon enfant",
    wrong_page_guardian: "Cette page est celle des parents. Les élèves ont la leur :",
    guardian_children_heading: "Mon enfant",
    guardian_no_children: "Aucun enfant n'est encore lié à votre compte : demandez à son école.",
    guardian_child: "Enfant",
    guardian_export: "Télécharger toutes ses données",
    guardian_memories_heading: "Ce dont le tuteur se souvient",
    guardian_learning_heading: "Apprentissages",
    guardian_no_skills: "Aucune compétence évaluée pour l'instant.",
    guardian_erasure_heading: "Effacer les données de mon enfant",
    guardian_erasure_intro: "Demandez à l'école d'effacer tout ce que le tuteur garde de votre enfant. L'école décide.",
    guardian_erasure_reason: "Pourquoi",
    guardian_erasure_send: "Envoyer la demande",
    guardian_erasure_pending: "En attente de la décision de l'école",
    guardian_erasure_approved: "Acceptée : les données ont été effacées",
    guardian_erasure_refused: "Refusée",
    wrong_page_teacher: "Cette page est celle des enseignants. Les élèves ont la leur :",
    go_student_page: "la page des élèves",
    go_teacher_page: "la page des enseignants",
    error_network: "Le serveur est injoignable. Vérifiez votre connexion et réessayez.",
    error_http: "Une erreur est survenue (HTTP {status}). Réessayez dans un instant.",
    error_stream: "La réponse a été interrompue. Renvoyez votre message.",
    demo_model_title: "Modèle de démonstration.",
    demo_model_text: "Les réponses du tuteur sont préparées d'avance, pour montrer comment fonctionne sa mémoire : ce n'est pas un vrai tuteur. Pour brancher un vrai modèle, définissez LLM_BASE_URL et LLM_MODEL (ou LLM_API_KEY pour OpenAI) puis relancez make run.",
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
    note_title_rule: "4 à 10 mots, qui disent de quoi parle la note.",
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
    flag_alert: "Alerte",
    flag_quiet: "Aucune : un signal moins sûr, qui attend ici qu'un enseignant le lise",
    flag_unrouted: "Aucun enseignant ni contact de sécurité de cet élève n'a pu être alerté (pas d'adresse e-mail, ou chaque alerte a échoué) : l'alerte est allée au référent sécurité de l'établissement ou à l'équipe. Ajoutez une adresse e-mail ou un contact de sécurité pour la classe.",
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
    source_pattern: "Tendance sur plusieurs conversations",
    // teacher page (issue 24)
    student_number: "élève n° {id}",
    jump_to: "Aller à :",
    // Enseignant : l'espace de travail (la classe, la vue d'un élève, l'établissement)
    views_label: "Espace de travail",
    view_class: "Vue de la classe",
    view_school: "Mon établissement",
    overview_heading: "Classe {name}",
    class_skills_heading: "Compétences de la classe",
    roster_caption_one: "{name} : {count} élève",
    roster_caption_other: "{name} : {count} élèves",
    roster_empty: "Aucun élève n'est encore inscrit dans cette classe.",
    roster_teachers: "Enseignants : {names}",
    roster_last_activity: "Dernière activité",
    roster_never: "aucune conversation",
    roster_flags: "Signalements ouverts",
    roster_no_flags: "aucun",
    roster_flags_count: "{count} ouvert(s)",
    roster_reviews: "Révisions dues",
    roster_no_reviews: "aucune",
    roster_reviews_count: "{count} due(s)",
    roster_mastery: "Maîtrise",
    roster_chart_label_one: "{count} compétence évaluée, {average}",
    roster_chart_label_other: "{count} compétences évaluées, {average} en moyenne",
    homework_heading: "Donner un devoir à la classe",
    homework_instructions: "Consignes (facultatif)",
    homework_due: "À rendre le (facultatif)",
    homework_set: "Donner le devoir",
    homework_done: "« {title} » a été donné à {name}.",
    back_to_class: "← Retour à la classe",
    student_switch: "Un autre élève",
    note_short: "Ajouter une note",
    school_heading: "Mon établissement",
    school_no_classes: "Votre établissement n'a pas encore de classe.",
    school_classes_caption: "Classes ({count})",
    class_heading: "Ma classe",
    classroom: "Classe",
    no_classes: "Vous n'avez pas encore de classe.",
    class_cards: "Imprimer les cartes de connexion de la classe",
    class_unavailable: "La liste de vos classes ne peut pas être lue sur ce serveur.",
    class_no_skills: "Aucune compétence n'a encore été évaluée dans cette classe.",
    class_table_caption: "Maîtrise par élève et par compétence, {name}",
    class_average: "moyenne de la classe {value}",
    legend: "Légende",
    legend_low: "moins de 40 % : a besoin d'aide",
    legend_learning: "de 40 à 69 % : en apprentissage",
    legend_near: "de 70 à 94 % : presque acquis",
    legend_mastered: "95 % ou plus : acquis",
    legend_due: "une révision de cette compétence est due",
    due_mark: "à réviser",
    not_assessed: "non évalué",
    mastery_low: "a besoin d'aide",
    mastery_learning: "en apprentissage",
    mastery_near: "presque acquis",
    mastery_mastered: "acquis",
    ask_heading: "Poser une question sur cet élève",
    ask_class_heading: "Poser une question sur la classe",
    ask_intro: "Une question en langage courant ; la réponse cite les mémoires, quiz et compétences sur lesquels elle s'appuie.",
    ask_question: "Votre question",
    ask_about_student: "Votre question sur {name}",
    ask_about_class: "Votre question sur la classe {name}",
    ask: "Demander",
    answer_insufficient: "Ce que l'on sait ne permet pas de répondre à cette question.",
    answer_citations: "Éléments cités :",
    answer_students: "Élèves cités :",
    claim_unsupported: "aucune source citée",
    ask_thinking: "Lecture de ce qui est connu et rédaction de la réponse…",
    answer_no_citation: "Cette réponse ne cite aucune source : vérifiez-la avant de vous y fier.",
    flag_read_conversation: "Lire la conversation",
    cite_memory: "Mémoire",
    cite_quiz: "Quiz",
    cite_skill: "Compétence",
    cite_task: "Tâche",
    cite_file: "Fichier",
    cite_card: "Fiche de l'élève",
    card_short: "Fiche",
    card_heading: "Fiche de {name}",
    card_heading_none: "Fiche de l'élève",
    card_intro: "Ce que le tuteur voit toujours en premier sur cet élève.",
    card_goals: "Objectifs",
    card_accommodations: "Aménagements",
    card_interests: "Centres d'intérêt",
    card_level: "Niveau",
    card_register: "Registre de langue préféré",
    card_student_editable: "L'élève peut modifier",
    card_size: "Place occupée",
    card_tokens: "{percent} % de la place que le tuteur réserve à la fiche",
    card_edit: "Modifier la fiche",
    card_one_per_line: "Objectifs, aménagements et centres d'intérêt : un par ligne.",
    card_save: "Enregistrer la fiche",
    card_saved: "Fiche enregistrée.",
    card_unchanged: "Rien n'a changé.",
    card_history: "Historique des modifications",
    card_no_changes: "Aucune modification pour l'instant.",
    card_op_add: "ajout de « {value} »",
    card_op_remove: "retrait de « {value} »",
    card_op_set: "remplacé par « {value} »",
    card_change_applied: "appliquée",
    card_change_pending: "en attente d'un enseignant",
    card_change_rejected: "refusée",
    card_source_teacher: "un enseignant",
    card_source_student: "l'élève",
    card_source_extraction: "proposée par le tuteur d'après les conversations",
    card_source_staff: "l'administration",
    card_change_accept: "Accepter",
    card_change_reject: "Refuser",
    card_accepted: "Modification acceptée.",
    card_rejected: "Modification refusée.",
    review_heading: "À examiner",
    review_intro: "Les modifications proposées par le tuteur et les mémoires qui attendent la décision d'un enseignant.",
    review_empty: "Rien à examiner.",
    review_count: "{count} à examiner",
    review_card_change: "Modification proposée pour la fiche : {field}",
    review_supersession: "Mise à jour possible d'une mémoire",
    review_older: "Ancienne",
    review_newer: "Nouvelle",
    review_apply: "Remplacer l'ancienne mémoire",
    review_dismiss: "Garder les deux",
    review_applied: "L'ancienne mémoire a été remplacée.",
    review_dismissed: "Les deux mémoires sont gardées.",
    review_needs_review: "À vérifier : {title}",
    review_confirm: "Confirmer telle quelle",
    review_confirmed: "Mémoire confirmée.",
    confidence_value: "confiance {value}",
    proposed_by_memory: "d'après la mémoire n° {id}",
    learning_short: "Apprentissages",
    learning_heading: "Apprentissages de {name}",
    skills_heading: "Compétences",
    skills_caption: "Maîtrise par compétence, avec la prochaine révision",
    no_skills: "Aucune compétence évaluée pour l'instant.",
    skill: "Compétence",
    mastery: "Maîtrise",
    trend: "Tendance",
    skill_answers: "Bonnes réponses",
    latest_quiz: "Dernier quiz",
    review: "Révision",
    answers_right: "{correct} sur {total}",
    trend_up: "en progrès",
    trend_down: "en recul",
    trend_flat: "stable",
    review_overdue: "due, {days} jours de retard",
    review_due_now: "due maintenant",
    review_next: "prochaine le {date}",
    quizzes_heading: "Quiz",
    no_quizzes: "Aucun quiz pour l'instant.",
    quiz_score: "{correct} bonnes réponses sur {total}",
    quiz_status_open: "pas encore répondu",
    quiz_status_grading: "en cours de correction",
    quiz_status_graded: "corrigé",
    quiz_details: "Questions et réponses",
    quiz_choices: "Choix : {choices}",
    quiz_expected: "Attendu : {answer}",
    quiz_given: "Répondu : {answer}",
    quiz_skipped: "(sans réponse)",
    quiz_not_answered: "Pas de réponse.",
    result_correct: "juste",
    result_incorrect: "faux",
    result_pending: "en cours de correction",
    result_ungraded: "n'a pas pu être corrigée",
    tasks_heading: "Tâches",
    no_tasks: "Aucune tâche.",
    task_status_todo: "à faire",
    task_status_in_progress: "en cours",
    task_status_done: "faite",
    task_overdue: "en retard",
    task_due: "pour le {date}",
    task_no_due: "sans échéance",
    task_for_class: "pour toute la classe",
    task_set_by_tutor: "Statut indiqué par le tuteur : {reason}",
    conversations_heading: "Conversations",
    no_conversations: "Aucune conversation pour l'instant.",
    conversation_title: "Conversation du {date}",
    conversation_title_subject: "{subject}, {date}",
    conversation_status_active: "Ouverte",
    conversation_status_ended: "Terminée",
    message_count_one: "{count} message",
    message_count_other: "{count} messages",
    ended_on: "terminée le {date}",
    read_conversation: "Lire la conversation",
    older_messages: "Afficher les messages plus anciens",
    close_transcript: "Fermer la conversation",
    no_messages: "Aucun message.",
    open_conversation: "Ouvrir la conversation n° {id}",
    memories_short: "Mémoires",
    evidence_heading: "Tirée de ({count}) :",
    evidence_unavailable: "Mémoire n° {id}, plus disponible.",
    // student page (issue 24)
    student_conversations_heading: "Vos conversations",
    student_no_conversations: "Aucune conversation pour l'instant.",
    student_conversation_untitled: "Conversation du {date}",
    student_conversation_state_active: "En cours",
    student_conversation_state_ended: "Terminée",
    student_conversation_started: "commencée le {date}",
    student_message_count_one: "{count} message",
    student_message_count_other: "{count} messages",
    student_open: "Ouvrir",
    student_end: "Terminer",
    student_on_screen: "Affichée",
    student_conversation_end_done: "La conversation « {title} » est terminée.",
    student_older_messages: "Afficher les messages précédents",
    student_message_unanswered: "Le tuteur n'a pas répondu à ce message.",
    student_retry: "Renvoyer",
    student_files_heading: "Fichiers de cette conversation",
    student_no_files: "Aucun fichier partagé pour l'instant.",
    student_file_choose: "Partager un fichier (PDF, texte ou image)",
    student_file_upload: "Envoyer le fichier",
    student_file_uploaded: "« {name} » est partagé avec votre tuteur.",
    student_file_status_pending: "Lecture en cours…",
    student_file_status_ready: "Prêt",
    student_file_status_unreadable: "Illisible",
    student_file_ready_pages: "Prêt ({pages} p.)",
    student_file_unreadable_because: "Illisible : {reason}",
    student_file_reason_malformed: "le fichier est abîmé",
    student_file_reason_encrypted: "le fichier est protégé par un mot de passe",
    student_file_reason_no_text: "aucun texte n'y a été trouvé",
    student_file_reason_missing: "le fichier est introuvable",
    student_file_reason_extraction_failed: "sa lecture a échoué",
    student_file_reason_too_large: "il est trop long à lire",
    student_file_reason_too_slow: "sa lecture a pris trop de temps",
    student_quizzes_heading: "Quiz",
    student_no_open_quizzes: "Aucun quiz à faire.",
    student_quizzes_done_heading: "Quiz faits",
    student_quiz_title: "Quiz : {topic}",
    student_quiz_to_answer_one: "{count} question à faire",
    student_quiz_to_answer_other: "{count} questions à faire",
    student_quiz_grading: "Certaines réponses sont en cours de correction…",
    student_quiz_score: "{correct} sur {total} justes",
    student_quiz_number_answer: "Votre réponse (un nombre ou une fraction)",
    student_quiz_text_answer: "Votre réponse",
    student_quiz_skip_hint: "Une question laissée vide compte comme passée.",
    student_quiz_submit: "Envoyer mes réponses",
    student_quiz_answer: "Faire le quiz",
    student_quiz_see_answers: "Voir les réponses",
    student_quiz_your_answer: "Votre réponse :",
    student_quiz_skipped: "(passée)",
    student_quiz_expected: "Réponse attendue :",
    student_quiz_sent: "Vos réponses sont corrigées.",
    student_quiz_sent_grading: "Vos réponses sont envoyées ; certaines sont en cours de correction.",
    student_quiz_graded: "Le quiz « {topic} » est corrigé.",
    student_quiz_made: "Le tuteur a préparé un quiz : {topic}",
    student_quiz_result_correct: "Juste",
    student_quiz_result_incorrect: "Faux",
    student_quiz_result_pending: "En cours de correction…",
    student_quiz_result_ungraded: "N'a pas pu être corrigée",
    student_quiz_mark_correct: "✓",
    student_quiz_mark_incorrect: "✗",
    student_quiz_mark_pending: "…",
    student_quiz_mark_ungraded: "?",
    student_tasks_heading: "Vos devoirs",
    student_no_tasks: "Aucun devoir pour l'instant.",
    student_task_status: "Où vous en êtes",
    student_task_todo: "À faire",
    student_task_in_progress: "En cours",
    student_task_done: "Fait",
    student_task_due: "pour le {date}",
    student_task_overdue: "En retard",
    student_task_saved: "« {title} » : {status}.",
    student_task_set_by_tutor: "Indiqué par le tuteur : {reason}",
    student_ask_heading: "Que sait mon tuteur de moi ?",
    student_ask_intro: "Demandez à votre tuteur ce qu'il sait de vous, et voyez d'où vient chaque chose.",
    student_ask_about_me: "Que sais-tu de moi ?",
    student_ask_about_me_question: "Que sais-tu de moi ?",
    student_ask_thinking: "Votre tuteur rassemble ce qu'il sait…",
    student_ask_no_citation: "Votre tuteur n'a pas pu dire d'où cela vient : c'est peut-être faux.",
    student_card_heading: "À propos de moi",
    student_card_intro: "Ce que votre tuteur garde en tête à votre sujet à chaque conversation.",
    student_card_you_may_edit: "Vous pouvez modifier : {fields}.",
    student_card_edit: "Modifier ce que votre tuteur sait de vous",
    student_card_one_per_line: "Un par ligne.",
    student_card_save: "Enregistrer",
    student_card_saved: "Enregistré : votre tuteur en tiendra compte.",
    student_card_unchanged: "Rien n'a changé.",
    student_ask_done: "Voici ce que sait votre tuteur.",
    student_ask_insufficient: "Votre tuteur ne sait pas encore grand-chose de vous.",
    student_ask_sources: "D'où ça vient",
    student_ask_source_number: "source {n}",
    student_citation_memory: "Mémoire",
    student_citation_quiz: "Quiz",
    student_citation_skill: "Compétence",
    student_citation_task: "Devoir",
    student_citation_file: "Fichier",
    student_citation_card: "Votre profil",
    student_safety_notice_heading: "De l'aide, tout de suite",
    student_safety_call: "Appeler le",
    student_later: "plus tard",
    student_error_unavailable: "Le tuteur n'est pas disponible pour le moment. Réessayez plus tard.",
    student_error_unavailable_kept: "Le tuteur n'est pas disponible pour le moment. Votre message est gardé ; réessayez plus tard.",
    student_error_budget: "Vous avez atteint la limite d'utilisation du tuteur pour le moment. Vous pourrez reprendre à partir du {date}.",
    student_error_throttled_kept: "Vous envoyez des messages un peu vite. Votre message est gardé ; attendez un instant, puis renvoyez-le.",
    student_error_busy: "Le tuteur répond encore à votre message précédent. Attendez sa réponse, puis renvoyez celui-ci.",
    student_error_cut: "La réponse a été coupée. Votre message est gardé ; renvoyez-le.",
    student_error_network_kept: "Le serveur est injoignable. Votre message est gardé ; vérifiez votre connexion et renvoyez-le."
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
  function plural(count) {
    return new Intl.PluralRules(current).select(count) === "one" ? "one" : "other";
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
  var launchToken = null;
  var launched = {
    classroom: null,
    conversation: null
  };
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
  var pageErrorText = () => null;
  function setErrorText(text) {
    pageErrorText = text;
  }
  function errorMessage(error) {
    const own = pageErrorText(error);
    if (own !== null) return own;
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
  async function run(page2) {
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
      page2.redraw();
    }
    async function signedIn(user) {
      me = user;
      loginSection.hidden = true;
      account.hidden = false;
      showLanguage(user.language ?? "en");
      if (!page2.roles.includes(user.role ?? "student")) {
        wrongPage.hidden = false;
        return;
      }
      app.hidden = false;
      await page2.start(user);
    }
    function signedOut() {
      me = null;
      launchToken = null;
      launched.classroom = null;
      launched.conversation = null;
      api = createClient2({ auth: { session: true } });
      account.hidden = true;
      app.hidden = true;
      wrongPage.hidden = true;
      loginSection.hidden = false;
      if (!providersAsked) void showProviders();
      page2.reset();
      byId("username").focus();
    }
    byId("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const form2 = event.currentTarget;
      const username = byId("username").value;
      const password = byId("password");
      void act(form2.querySelector("button"), async () => {
        unwrap(await api.GET("/api/v1/auth/csrf/"));
        const { user } = unwrap(await api.POST("/api/v1/auth/login/", { body: { username, password: password.value } }));
        password.value = "";
        await signedIn(user);
      });
    });
    async function launchSignIn(code) {
      const answer2 = unwrap(await createClient2().POST("/api/v1/lti/token/", { body: { code } }));
      launchToken = answer2.token;
      api = createClient2({ auth: { token: answer2.token } });
      launched.classroom = answer2.classroom ?? null;
      launched.conversation = answer2.conversation ?? null;
      await signedIn(answer2.user);
    }
    async function codeSignIn(code) {
      unwrap(await api.GET("/api/v1/auth/csrf/"));
      const { user } = unwrap(await api.POST("/api/v1/auth/code/login/", { body: { code } }));
      await signedIn(user);
    }
    if (page2.signInWithCode) {
      byId("code-form").addEventListener("submit", (event) => {
        event.preventDefault();
        const form2 = event.currentTarget;
        const input = byId("sign-in-code");
        void act(form2.querySelector("button"), async () => {
          await codeSignIn(input.value);
          input.value = "";
        });
      });
    }
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
        drawProviders();
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
      const launchCode = takeFromAddress("lti");
      if (launchCode !== null) {
        await launchSignIn(launchCode);
        return;
      }
      const code = page2.signInWithCode ? takeFromAddress("code") : null;
      if (code !== null) {
        await codeSignIn(code);
        return;
      }
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
  var providers = [];
  var providersAsked = false;
  async function showProviders() {
    providersAsked = true;
    const school = new URLSearchParams(window.location.search).get("school");
    const query = school !== null && /^[1-9][0-9]{0,17}$/.test(school) ? { school: Number(school) } : {};
    try {
      providers = unwrap(await api.GET("/api/v1/auth/providers/", { params: { query } })).results;
    } catch {
      providers = [];
    }
    drawProviders();
  }
  function drawProviders() {
    const list = byId("sso-providers");
    const schools = new Set(providers.map((provider) => provider.school));
    const next2 = window.location.pathname + window.location.hash;
    list.replaceChildren(
      ...providers.map((provider) => {
        const name = schools.size > 1 ? t("sso_sign_in_school", { name: provider.name, school: provider.school_name }) : t("sso_sign_in", { name: provider.name });
        const href = `${provider.login_url}?${new URLSearchParams({ next: next2 }).toString()}`;
        return h("li", {}, h("a", { class: "button", href }, name));
      })
    );
    byId("sso").hidden = providers.length === 0;
  }
  function takeFromAddress(name) {
    const code = new URLSearchParams(window.location.hash.slice(1)).get(name);
    if (code === null) return null;
    history.replaceState(history.state, "", window.location.pathname + window.location.search);
    return code;
  }
  function displayName(user) {
    const full = [user.first_name, user.last_name].filter(Boolean).join(" ");
    return full ? `${full} (${user.username})` : user.username;
  }

  // web/src/student_state.ts
  var state = { me: null, conversation: null };
  var ANNOUNCE_MS = 8e3;
  var announced = /* @__PURE__ */ new Map();
  function announce(section, text) {
    const region = byId(`${section}-status`);
    region.textContent = text;
    const shown2 = (announced.get(section) ?? 0) + 1;
    announced.set(section, shown2);
    window.setTimeout(() => {
      if (announced.get(section) === shown2) region.textContent = "";
    }, ANNOUNCE_MS);
  }
  function isOpen(conversation = state.conversation) {
    return conversation !== null && conversation.status === "active";
  }

  // web/src/student_ask.ts
  var MARKER = /\s?\[([^[\]\n]{1,200})\]/g;
  var answer = null;
  function citationId(index) {
    return `ask-citation-${index + 1}`;
  }
  function answerText(shown2) {
    const number = new Map(shown2.citations.map((c, index) => [c.ref.toLowerCase(), index]));
    const paragraph = h("p", { class: "ask-text" });
    let last = 0;
    for (const match of shown2.answer.matchAll(MARKER)) {
      const ref = (match[1] ?? "").trim().toLowerCase();
      const index = number.get(ref);
      if (index === void 0) continue;
      paragraph.append(
        shown2.answer.slice(last, match.index),
        h(
          "sup",
          {},
          h(
            "a",
            { href: `#${citationId(index)}`, "aria-label": t("student_ask_source_number", { n: index + 1 }) },
            `[${index + 1}]`
          )
        )
      );
      last = (match.index ?? 0) + match[0].length;
    }
    paragraph.append(shown2.answer.slice(last));
    return paragraph;
  }
  function draw() {
    const box = byId("ask-answer");
    box.hidden = answer === null;
    if (!answer) {
      box.replaceChildren();
      return;
    }
    const parts = [
      // An answer that cites nothing says so first: nothing in it can be checked.
      answer.citations.length === 0 && !answer.insufficient ? h("p", { class: "no-citation", role: "note" }, t("student_ask_no_citation")) : null,
      answerText(answer),
      answer.insufficient ? h("p", { class: "muted" }, t("student_ask_insufficient")) : null,
      answer.citations.length > 0 ? h("h3", {}, t("student_ask_sources")) : null,
      answer.citations.length > 0 ? h(
        "ol",
        { class: "citations" },
        ...answer.citations.map(
          (citation, index) => h(
            "li",
            { id: citationId(index), "data-citation": citation.ref },
            h("span", { class: "citation-kind" }, t(`student_citation_${citation.kind}`)),
            " · ",
            h("strong", { class: "citation-title" }, citation.title),
            citation.excerpt ? h("p", { class: "citation-excerpt" }, citation.excerpt) : null
          )
        )
      ) : null
    ];
    box.replaceChildren(...parts.filter((part) => part !== null));
  }
  function redrawAsk() {
    draw();
  }
  function resetAsk() {
    answer = null;
    byId("ask-status").textContent = "";
    draw();
  }
  byId("ask-about-me").addEventListener("click", (event) => {
    const me = state.me;
    if (!me) return;
    const status = byId("ask-status");
    void act(event.currentTarget, async () => {
      status.textContent = t("student_ask_thinking");
      try {
        const answered = unwrap(
          await api.POST("/api/v1/students/{student_id}/ask/", {
            params: { path: { student_id: me.id } },
            body: { question: t("student_ask_about_me_question") },
            headers: { Accept: "application/json" }
          })
        );
        if (state.me?.id !== me.id) return;
        answer = answered;
        draw();
        status.textContent = t("student_ask_done");
      } catch (error) {
        status.textContent = "";
        throw error;
      }
    });
  });

  // web/src/student_card.ts
  var LISTS = ["goals", "interests"];
  var FIELDS = ["goals", "interests", "level", "register"];
  var card = null;
  function label2(field) {
    return `card_${field}`;
  }
  function lines(text) {
    return text.split("\n").map((line) => line.trim()).filter(Boolean);
  }
  function shownValue(shown2, field) {
    const value = shown2[field];
    return Array.isArray(value) ? value.join(", ") : value;
  }
  function view(shown2) {
    const list = h("dl", { class: "provenance" });
    const fields = [...FIELDS, "accommodations"];
    for (const field of fields) {
      const value = shownValue(shown2, field);
      if (field === "accommodations" && !value) continue;
      list.append(h("div", { "data-field": field }, h("dt", {}, t(label2(field))), h("dd", {}, value || t("none"))));
    }
    return list;
  }
  function showError2(error) {
    const region = byId("card-error");
    region.textContent = error === null ? "" : errorMessage(error);
    region.hidden = error === null;
  }
  function form(shown2) {
    const editable = FIELDS.filter((field) => shown2.student_editable.includes(field));
    const controls = /* @__PURE__ */ new Map();
    for (const field of editable) {
      const isList = LISTS.includes(field);
      const control = isList ? h("textarea", { name: field, rows: "3" }) : h("input", { name: field, maxlength: "200" });
      control.id = `my-card-${field}`;
      control.value = isList ? shown2[field].join("\n") : shownValue(shown2, field);
      controls.set(field, control);
    }
    const submit2 = h("button", { type: "submit" }, t("student_card_save"));
    const node = h(
      "form",
      { id: "my-card-form" },
      ...[...controls].map(
        ([field, control]) => h(
          "p",
          { class: "field" },
          h("label", { for: control.id }, t(label2(field))),
          LISTS.includes(field) ? h("span", { class: "hint" }, t("student_card_one_per_line")) : null,
          control
        )
      ),
      submit2
    );
    node.addEventListener("submit", (event) => {
      event.preventDefault();
      const patch = {};
      for (const [field, control] of controls) {
        if (LISTS.includes(field)) {
          const value = lines(control.value);
          if (value.join("\n") !== shown2[field].join("\n")) patch[field] = value;
        } else if (control.value.trim() !== shownValue(shown2, field)) {
          patch[field] = control.value.trim();
        }
      }
      void save(patch, submit2);
    });
    return node;
  }
  async function save(patch, button) {
    const me = state.me;
    if (!me) return;
    showError2(null);
    if (!Object.keys(patch).length) {
      announce("card", t("student_card_unchanged"));
      return;
    }
    button.disabled = true;
    try {
      card = unwrap(
        await api.PATCH("/api/v1/students/{student_id}/card/", { params: { path: { student_id: me.id } }, body: patch })
      );
      draw2();
      announce("card", t("student_card_saved"));
    } catch (error) {
      showError2(error);
    } finally {
      button.disabled = false;
    }
  }
  function draw2() {
    const section = byId("about-me");
    section.hidden = card === null;
    byId("card-view").replaceChildren(...card ? [view(card)] : []);
    const edit = byId("card-edit");
    const editable = card ? FIELDS.filter((field) => card?.student_editable.includes(field)) : [];
    edit.hidden = editable.length === 0;
    byId("card-editable").textContent = editable.length ? t("student_card_you_may_edit", { fields: editable.map((field) => t(label2(field)).toLowerCase()).join(", ") }) : "";
    const open = edit.open;
    edit.replaceChildren(h("summary", {}, t("student_card_edit")), ...card && editable.length ? [form(card)] : []);
    edit.open = open;
  }
  async function loadCard() {
    const me = state.me;
    if (!me) return;
    const result = await api.GET("/api/v1/students/{student_id}/card/", { params: { path: { student_id: me.id } } });
    if (state.me?.id !== me.id) return;
    card = result.data ?? null;
    draw2();
  }
  function redrawCard() {
    draw2();
  }
  function resetCard() {
    card = null;
    showError2(null);
    draw2();
  }

  // web/src/student_errors.ts
  var StreamCut = class extends Error {
    constructor() {
      super("the reply's stream ended early");
      this.name = "StreamCut";
    }
  };
  var UNAVAILABLE = /* @__PURE__ */ new Set([
    "model_not_configured",
    "model_unavailable",
    "model_bad_response",
    "turn_failed",
    "service_unavailable",
    "server_shutting_down",
    "database_unavailable"
  ]);
  function studentErrorText(error, kept = false) {
    if (error instanceof StreamCut) return t("student_error_cut");
    if (error instanceof TypeError) return t(kept ? "student_error_network_kept" : "error_network");
    if (!(error instanceof ApiError)) return null;
    if (error.code === "budget_exceeded") {
      const details = error.details;
      const date = typeof details.resets_at === "string" ? formatDate(details.resets_at) : t("student_later");
      return t("student_error_budget", { date });
    }
    if (error.code === "throttled") return kept ? t("student_error_throttled_kept") : null;
    if (error.code === "conversation_busy") return t("student_error_busy");
    if (UNAVAILABLE.has(error.code) || error.status >= 500) {
      return t(kept ? "student_error_unavailable_kept" : "student_error_unavailable");
    }
    return null;
  }
  function canRetry(error) {
    if (error instanceof StreamCut || error instanceof TypeError) return true;
    return error instanceof ApiError && (error.retrySafe || UNAVAILABLE.has(error.code) || error.status >= 500);
  }

  // web/src/student_memories.ts
  var SUMMARY_POLL_MS = 1500;
  var SUMMARY_WAIT_MS = 12e4;
  var PAGE_SIZE = 50;
  var memories = [];
  var memoriesNext = false;
  var memoriesPage = 1;
  var summaryWatch = 0;
  function draw3() {
    byId("memories").replaceChildren(
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
    const page2 = more ? memoriesPage + 1 : 1;
    const data = unwrap(await api.GET("/api/v1/memories/", { params: { query: { page: page2, page_size: PAGE_SIZE } } }));
    memories = more ? [...memories, ...data.results] : data.results;
    memoriesPage = page2;
    memoriesNext = Boolean(data.next);
    draw3();
  }
  function memoryAdded(memory) {
    memories = [memory, ...memories.filter((m) => m.id !== memory.id)];
    draw3();
  }
  function watchForSummary(conversationId) {
    const status = byId("memories-status");
    const watch2 = ++summaryWatch;
    const deadline = Date.now() + SUMMARY_WAIT_MS;
    status.textContent = t("summary_pending");
    const poll = async () => {
      if (watch2 !== summaryWatch) return;
      try {
        await loadMemories();
      } catch {
      }
      if (watch2 !== summaryWatch) return;
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
  function redrawMemories() {
    draw3();
  }
  function resetMemories() {
    memories = [];
    memoriesNext = false;
    summaryWatch++;
    byId("memories-status").textContent = "";
    draw3();
  }
  byId("refresh-memories").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadMemories());
  });
  byId("more-memories").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadMemories(true));
  });

  // web/src/student_quizzes.ts
  var GRADING_POLL_MS = 1500;
  var GRADING_WAIT_MS = 12e4;
  var LIST_SIZE = 20;
  var quizzes = /* @__PURE__ */ new Map();
  var attempts = /* @__PURE__ */ new Map();
  var watched = /* @__PURE__ */ new Set();
  var listed = [];
  var generation = 0;
  var isFull = (quiz) => "questions" in quiz;
  function quizRemember(quiz) {
    quizzes.set(quiz.id, quiz);
    redrawQuiz(quiz.id);
    if (quiz.status === "grading") watchGrading(quiz.id);
  }
  async function quizFetch(id) {
    return unwrap(await api.GET("/api/v1/quizzes/{quiz_id}/", { params: { path: { quiz_id: id } } }));
  }
  async function conversationQuizzes(conversationId) {
    const page2 = unwrap(
      await api.GET("/api/v1/quizzes/", { params: { query: { conversation: conversationId, page_size: LIST_SIZE } } })
    );
    const full = await Promise.all(page2.results.map((q) => quizFetch(q.id)));
    for (const quiz of full) quizzes.set(quiz.id, quiz);
    for (const quiz of full) if (quiz.status === "grading") watchGrading(quiz.id);
    return full.reverse();
  }
  function score(quiz) {
    const count = quiz.question_count;
    if (quiz.status === "open") return t(`student_quiz_to_answer_${plural(count)}`, { count });
    if (quiz.status === "grading") return t("student_quiz_grading");
    return t("student_quiz_score", { correct: quiz.correct ?? 0, total: quiz.question_count });
  }
  function questionField(question, prefix) {
    const name = `${prefix}-q${question.id}`;
    const legend = h("legend", {}, `${question.position}. ${question.prompt}`);
    if (question.kind === "multiple_choice") {
      return h(
        "fieldset",
        { class: "question", "data-question": String(question.id) },
        legend,
        ...question.choices.map(
          (choice, index) => h(
            "label",
            { class: "choice" },
            h("input", { type: "radio", name, value: choice, id: `${name}-c${index}` }),
            h("span", {}, choice)
          )
        )
      );
    }
    const input = h("input", {
      type: "text",
      name,
      id: name,
      maxlength: "1000",
      autocomplete: "off",
      ...question.kind === "numeric" ? { inputmode: "decimal" } : {}
    });
    return h(
      "fieldset",
      { class: "question", "data-question": String(question.id) },
      legend,
      h(
        "p",
        { class: "field" },
        h("label", { for: name }, t(`student_quiz_${question.kind === "numeric" ? "number" : "text"}_answer`)),
        input
      )
    );
  }
  function given(form2, question, prefix) {
    const name = `${prefix}-q${question.id}`;
    const field = form2.elements.namedItem(name);
    if (field instanceof RadioNodeList) return field.value;
    if (!(field instanceof HTMLInputElement)) return "";
    return field.type === "radio" && !field.checked ? "" : field.value;
  }
  async function submit(quiz, form2, prefix, place) {
    const answers = quiz.questions.map((q) => ({ question: q.id, answer: given(form2, q, prefix) }));
    const attempt = attempts.get(quiz.id) ?? newClientMessageId();
    attempts.set(quiz.id, attempt);
    const session = generation;
    const sent = await api.POST("/api/v1/quizzes/{quiz_id}/answers/", {
      params: { path: { quiz_id: quiz.id } },
      body: { client_attempt_id: attempt, answers }
    });
    if (sent.response.status === 409 && session === generation) {
      attempts.delete(quiz.id);
      quizRemember(await quizFetch(quiz.id));
    }
    const result = unwrap(sent);
    if (session !== generation) return;
    attempts.delete(quiz.id);
    quizRemember(result.quiz);
    announce("quizzes", result.quiz.status === "grading" ? t("student_quiz_sent_grading") : t("student_quiz_sent"));
    document.querySelector(`[data-quiz="${quiz.id}"][data-place="${place}"] .quiz-score`)?.focus();
  }
  function quizForm(quiz, place) {
    const prefix = `${place}-quiz-${quiz.id}`;
    const button = h("button", { type: "submit" }, t("student_quiz_submit"));
    const form2 = h(
      "form",
      { class: "quiz-form" },
      ...quiz.questions.map((q) => questionField(q, prefix)),
      h("p", { class: "muted" }, t("student_quiz_skip_hint")),
      button
    );
    form2.addEventListener("submit", (event) => {
      event.preventDefault();
      void act(button, () => submit(quiz, form2, prefix, place));
    });
    return form2;
  }
  function answerItem(question, answer2) {
    const result = answer2?.result ?? "ungraded";
    return h(
      "li",
      { class: `answer result-${result}`, "data-question": String(question.id) },
      h("p", { class: "prompt" }, question.prompt),
      h(
        "p",
        {},
        `${t("student_quiz_your_answer")} `,
        h("span", { class: "given" }, answer2?.given ? answer2.given : t("student_quiz_skipped"))
      ),
      h(
        "p",
        { class: "verdict" },
        h("span", { "aria-hidden": "true" }, t(`student_quiz_mark_${result}`)),
        ` ${t(`student_quiz_result_${result}`)}`
      ),
      question.expected_answer && result !== "correct" ? h("p", {}, `${t("student_quiz_expected")} `, h("span", { class: "expected" }, question.expected_answer)) : null,
      question.explanation ? h("p", { class: "explanation" }, question.explanation) : null,
      answer2?.feedback ? h("p", { class: "feedback" }, answer2.feedback) : null
    );
  }
  function quizResult(quiz) {
    const byQuestion = new Map(quiz.answers.map((a) => [a.question, a]));
    return h("ol", { class: "answers" }, ...quiz.questions.map((q) => answerItem(q, byQuestion.get(q.id))));
  }
  function loadButton(quiz) {
    const text = t(quiz.status === "open" ? "student_quiz_answer" : "student_quiz_see_answers");
    const button = h("button", { type: "button", class: "secondary" }, text);
    button.addEventListener("click", () => {
      void act(button, async () => quizRemember(await quizFetch(quiz.id)));
    });
    return button;
  }
  function quizCard(id, place) {
    const quiz = quizzes.get(id);
    const card2 = h("article", { class: "quiz", "data-quiz": String(id), "data-place": place });
    if (!quiz) return card2;
    card2.classList.add(`quiz-${quiz.status}`);
    const titleId = `${place}-quiz-${id}-title`;
    card2.setAttribute("aria-labelledby", titleId);
    let body;
    if (!isFull(quiz)) body = loadButton(quiz);
    else if (quiz.status === "open") body = quizForm(quiz, place);
    else body = quizResult(quiz);
    card2.append(
      h("h3", { id: titleId }, t("student_quiz_title", { topic: quiz.topic })),
      h("p", { class: "meta" }, [quiz.skill, formatDate(quiz.created_at)].filter(Boolean).join(" · ")),
      h("p", { class: "quiz-score", tabindex: "-1" }, score(quiz)),
      body
    );
    return card2;
  }
  function redrawQuiz(id) {
    for (const node of document.querySelectorAll(`[data-quiz="${id}"]`)) {
      node.replaceWith(quizCard(id, node.dataset.place ?? "list"));
    }
    if (listed.includes(id)) drawList();
  }
  function watchGrading(id) {
    if (watched.has(id)) return;
    watched.add(id);
    const session = generation;
    const deadline = Date.now() + GRADING_WAIT_MS;
    const poll = async () => {
      if (session !== generation) return;
      try {
        const quiz = await quizFetch(id);
        if (session !== generation) return;
        if (quiz.status !== "grading") {
          watched.delete(id);
          quizRemember(quiz);
          announce("quizzes", t("student_quiz_graded", { topic: quiz.topic }));
          return;
        }
      } catch {
      }
      if (Date.now() < deadline) window.setTimeout(() => void poll(), GRADING_POLL_MS);
      else watched.delete(id);
    };
    window.setTimeout(() => void poll(), GRADING_POLL_MS);
  }
  function listCard(id, fresh) {
    const shown2 = fresh ? null : document.querySelector(`#quizzes [data-quiz="${id}"]`);
    return h("li", {}, shown2 ?? quizCard(id, "list"));
  }
  function drawList(fresh = false) {
    const items = listed.map((id) => quizzes.get(id)).filter((q) => q !== void 0);
    const open = items.filter((q) => q.status === "open");
    const done = items.filter((q) => q.status !== "open");
    byId("quizzes-open").replaceChildren(...open.map((q) => listCard(q.id, fresh)));
    byId("quizzes-done").replaceChildren(...done.map((q) => listCard(q.id, fresh)));
    byId("quizzes-open-empty").hidden = open.length > 0;
    byId("quizzes-done-heading").hidden = done.length === 0;
  }
  async function loadQuizzes() {
    const session = generation;
    const page2 = unwrap(await api.GET("/api/v1/quizzes/", { params: { query: { page_size: LIST_SIZE } } }));
    const open = page2.results.filter((q) => q.status !== "graded" && !isFullKnown(q.id));
    const full = await Promise.all(open.map((q) => quizFetch(q.id)));
    if (session !== generation) return;
    for (const summary of page2.results) if (!isFullKnown(summary.id)) quizzes.set(summary.id, summary);
    for (const quiz of full) quizzes.set(quiz.id, quiz);
    for (const quiz of full) if (quiz.status === "grading") watchGrading(quiz.id);
    listed = page2.results.map((q) => q.id);
    drawList();
  }
  function isFullKnown(id) {
    const known2 = quizzes.get(id);
    return known2 !== void 0 && isFull(known2);
  }
  function quizListed(quiz) {
    if (!listed.includes(quiz.id)) listed = [quiz.id, ...listed];
    quizRemember(quiz);
    drawList();
  }
  function redrawQuizzes() {
    drawList(true);
    for (const node of document.querySelectorAll("#messages [data-quiz]")) {
      node.replaceWith(quizCard(Number(node.dataset.quiz), node.dataset.place ?? "chat"));
    }
  }
  function resetQuizzes() {
    generation++;
    quizzes.clear();
    attempts.clear();
    watched.clear();
    listed = [];
    drawList();
  }

  // web/src/student_safety.ts
  var shown = null;
  function webAddress(url) {
    try {
      const parsed = new URL(url);
      return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
    } catch {
      return null;
    }
  }
  function phoneLinks(phone) {
    const parts = [];
    phone.split(/\s*[/,;]\s*/).forEach((part, index) => {
      if (index > 0) parts.push(" / ");
      const dial = (/^\+?[\d][\d\s.-]*/.exec(part)?.[0] ?? "").replace(/[^\d+]/g, "");
      parts.push(dial.length >= 2 ? h("a", { href: `tel:${dial}` }, part) : part);
    });
    return parts;
  }
  function resourceItem(resource) {
    const url = resource.url ? webAddress(resource.url) : null;
    return h(
      "li",
      { class: "resource" },
      h("strong", { class: "resource-name" }, resource.name),
      resource.text && h("p", { class: "resource-text" }, resource.text),
      resource.phone && h("p", { class: "resource-phone" }, `${t("student_safety_call")} `, ...phoneLinks(resource.phone)),
      url && h("p", { class: "resource-url" }, h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, url))
    );
  }
  function draw4() {
    const box = byId("safety-notice");
    box.hidden = shown === null;
    if (!shown) {
      box.replaceChildren();
      return;
    }
    box.replaceChildren(
      h("h2", { id: "safety-heading", tabindex: "-1" }, t("student_safety_notice_heading")),
      h("p", { class: "safety-message" }, shown.message)
    );
    if (shown.resources.length > 0) box.append(h("ul", { class: "resources" }, ...shown.resources.map(resourceItem)));
  }
  function showSafety(notice) {
    shown = notice;
    draw4();
    const heading = byId("safety-heading");
    heading.scrollIntoView({ block: "start" });
    heading.focus();
  }
  function withoutShownResources(text) {
    const resources = shown?.resources ?? [];
    if (resources.length === 0) return text;
    const cut = text.lastIndexOf("\n\n");
    if (cut < 0) return text;
    const lines2 = text.slice(cut + 2).split("\n").slice(1);
    const same = lines2.length === resources.length && lines2.every((line, i) => line.startsWith(`- ${resources[i]?.name}`));
    return same ? text.slice(0, cut) : text;
  }
  function redrawSafety() {
    draw4();
  }
  function resetSafety() {
    shown = null;
    draw4();
  }

  // web/src/student_chat.ts
  var messages = [];
  var nextBefore = null;
  var quizzes2 = [];
  var failed = /* @__PURE__ */ new Map();
  var sending = null;
  var turnEnded = () => void 0;
  var messageAdded = () => void 0;
  function onTurnEnd(listener) {
    turnEnded = listener;
  }
  function onMessageAdded(listener) {
    messageAdded = listener;
  }
  var log = () => byId("messages");
  function messageItem(role, content) {
    return h(
      "li",
      { class: `message ${role}` },
      h("span", { class: "who" }, t(role === "student" ? "you" : "tutor")),
      h("p", { class: "text" }, role === "tutor" ? withoutShownResources(content) : content)
    );
  }
  function retryButton(content, id, note) {
    const button = h(
      "button",
      { type: "button", class: "secondary retry", "aria-describedby": note },
      t("student_retry")
    );
    button.disabled = sending !== null;
    button.addEventListener("click", () => void send(content, id));
    return button;
  }
  function unansweredItem(content, id, error) {
    const item2 = messageItem("student", content);
    item2.classList.add("unanswered");
    const note = `unanswered-${id ?? "unknown"}`;
    if (id) item2.dataset.clientMessageId = id;
    item2.append(
      h(
        "p",
        { class: "unanswered-note", id: note },
        h("span", { class: "mark", "aria-hidden": "true" }, "!"),
        ` ${error}`
      )
    );
    if (id && isOpen()) item2.append(retryButton(content, id, note));
    return item2;
  }
  function studentItem(message, answered) {
    const id = message.client_message_id;
    if (answered.has(message.id) || id !== null && id === sending) return messageItem("student", message.content);
    const error = id !== null && failed.get(id)?.error || t("student_message_unanswered");
    return unansweredItem(message.content, id, error);
  }
  function quizItem(id) {
    return h("li", { class: "message quiz-message" }, quizCard(id, "chat"));
  }
  function drawChat() {
    const conversation = state.conversation;
    const status = byId("conversation-status");
    if (!conversation) {
      status.textContent = t("no_conversation");
    } else if (conversation.status === "ended") {
      status.textContent = t("conversation_ended");
    } else {
      const date = formatDate(conversation.created_at);
      status.textContent = conversation.subject ? t("conversation_open_subject", { subject: conversation.subject, date }) : t("conversation_open", { date });
    }
    const answered = new Set(messages.map((m) => m.reply_to).filter((id) => id !== null));
    const entries = [
      ...messages.map((m) => ({
        at: Date.parse(m.created_at),
        order: m.seq,
        node: () => m.role === "student" ? studentItem(m, answered) : messageItem("tutor", m.content)
      })),
      ...quizzes2.map((q) => ({ at: Date.parse(q.at), order: Number.MAX_SAFE_INTEGER, node: () => quizItem(q.id) }))
    ];
    entries.sort((a, b) => a.at - b.at || a.order - b.order);
    const stored = new Set(messages.map((m) => m.client_message_id));
    const unsent = [...failed].filter(
      ([id, f]) => f.conversation === conversation?.id && !stored.has(id) && id !== sending
    );
    const list = log();
    list.replaceChildren(
      ...entries.map((e) => e.node()),
      ...unsent.map(([id, f]) => unansweredItem(f.content, id, f.error))
    );
    list.hidden = list.childElementCount === 0;
    byId("older-messages").hidden = nextBefore === null;
    byId("send-form").hidden = !isOpen();
  }
  function showChat(latest, before, made) {
    messages = [...latest].reverse();
    nextBefore = before;
    quizzes2 = made.map((q) => ({ id: q.id, at: q.created_at }));
    drawChat();
  }
  function resetChat() {
    messages = [];
    nextBefore = null;
    quizzes2 = [];
    failed.clear();
    byId("turn-status").textContent = "";
    drawChat();
  }
  async function olderMessages() {
    const conversation = state.conversation;
    if (!conversation || nextBefore === null) return;
    const page2 = unwrap(
      await api.GET("/api/v1/conversations/{conversation_id}/messages/", {
        params: { path: { conversation_id: conversation.id }, query: { before: nextBefore } }
      })
    );
    if (state.conversation?.id !== conversation.id) return;
    const known2 = new Set(messages.map((m) => m.id));
    messages = [...page2.results.filter((m) => !known2.has(m.id)).reverse(), ...messages];
    nextBefore = page2.next_before;
    drawChat();
  }
  async function send(content, id) {
    const conversation = state.conversation;
    if (!conversation || sending !== null) return;
    sending = id;
    const list = log();
    const button = byId("send");
    const box = byId("message");
    const status = byId("turn-status");
    let reply = null;
    let written = "";
    button.disabled = true;
    drawChat();
    list.setAttribute("aria-busy", "true");
    status.textContent = t("sending");
    showError(null);
    try {
      for await (const event of turnStream(api, conversation.id, { content, client_message_id: id })) {
        if (state.conversation?.id !== conversation.id) return;
        if (event.event === "message") {
          if (!messages.some((m) => m.id === event.data.id)) {
            messages.push(event.data);
            list.append(messageItem("student", event.data.content));
            list.hidden = false;
            messageAdded(conversation.id);
          }
          if (box.value === content) box.value = "";
        } else if (event.event === "delta") {
          if (!reply) {
            const item2 = messageItem("tutor", "");
            item2.classList.add("streaming");
            list.append(item2);
            reply = item2.querySelector(".text");
            messageAdded(conversation.id);
          }
          written += event.data.content;
          if (reply) reply.textContent = withoutShownResources(written);
        } else if (event.event === "reply_replaced") {
          written = event.data.content;
          if (reply) reply.textContent = withoutShownResources(written);
        } else if (event.event === "memory") {
          status.textContent = t("memory_saved", { title: event.data.title });
          memoryAdded(event.data);
        } else if (event.event === "quiz") {
          quizzes2.push({ id: event.data.id, at: event.data.created_at });
          quizListed(event.data);
          const item2 = quizItem(event.data.id);
          if (reply) reply.closest("li")?.before(item2);
          else list.append(item2);
          status.textContent = t("student_quiz_made", { topic: event.data.topic });
        } else if (event.event === "safety") {
          showSafety(event.data);
        } else if (event.event === "done") {
          if (!reply) {
            list.append(messageItem("tutor", ""));
            reply = list.lastElementChild?.querySelector(".text") ?? null;
            messageAdded(conversation.id);
          }
          if (reply) reply.textContent = withoutShownResources(event.data.content);
          reply?.parentElement?.classList.remove("streaming");
          messages.push(event.data);
          failed.delete(id);
          sending = null;
          if (!reply?.isConnected) drawChat();
          status.textContent = "";
          return;
        } else {
          throw new ApiError(0, event.data);
        }
      }
      throw new StreamCut();
    } catch (error) {
      reply?.closest("li")?.remove();
      status.textContent = "";
      sending = null;
      if (canRetry(error)) {
        const text = studentErrorText(error, true) ?? t("student_message_unanswered");
        failed.set(id, { conversation: conversation.id, content, error: text });
        if (box.value === content) box.value = "";
        const active = document.activeElement;
        const atForm = active === document.body || Boolean(active?.closest("#send-form, .retry"));
        if (state.conversation?.id !== conversation.id) return;
        drawChat();
        if (atForm) list.querySelector(`[data-client-message-id="${CSS.escape(id)}"] .retry`)?.focus();
      } else {
        failed.delete(id);
        if (!box.value) box.value = content;
        showError(error);
        if (state.conversation?.id === conversation.id) drawChat();
      }
    } finally {
      if (sending === id) sending = null;
      list.setAttribute("aria-busy", "false");
      button.disabled = false;
      turnEnded(conversation.id);
    }
  }
  byId("send-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const content = byId("message").value;
    if (content.trim()) void send(content, newClientMessageId());
  });
  byId("message").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      byId("send-form").requestSubmit();
    }
  });
  byId("older-messages").addEventListener("click", (event) => {
    const button = event.currentTarget;
    button.disabled = true;
    olderMessages().catch(showError).finally(() => {
      button.disabled = false;
    });
  });

  // web/src/student_files.ts
  var POLL_MS = 1500;
  var WAIT_MS = 9e4;
  var files = [];
  var shownFor = null;
  var watch = 0;
  function size(bytes) {
    const kilobytes = bytes / 1024;
    const [value, unit] = kilobytes < 1024 ? [kilobytes, "kilobyte"] : [kilobytes / 1024, "megabyte"];
    return new Intl.NumberFormat(language(), { style: "unit", unit, maximumFractionDigits: value < 10 ? 1 : 0 }).format(
      value
    );
  }
  function statusText(file) {
    if (file.status === "unreadable") {
      return file.reason ? t("student_file_unreadable_because", { reason: t(`student_file_reason_${file.reason}`) }) : t("student_file_status_unreadable");
    }
    if (file.status === "ready" && file.pages) return t("student_file_ready_pages", { pages: file.pages });
    return t(`student_file_status_${file.status}`);
  }
  function draw5() {
    const section = byId("files-section");
    section.hidden = state.conversation === null;
    byId("file-form").hidden = !isOpen();
    byId("files-empty").hidden = files.length > 0;
    byId("files").replaceChildren(
      ...files.map(
        (file) => h(
          "li",
          { class: `file file-${file.status}`, "data-file": String(file.id) },
          h("span", { class: "file-name" }, file.name),
          h("span", { class: "meta" }, ` · ${size(file.size)} · `),
          h("span", { class: "file-status" }, statusText(file))
        )
      )
    );
  }
  async function load(conversationId) {
    const list = unwrap(
      await api.GET("/api/v1/conversations/{conversation_id}/files/", {
        params: { path: { conversation_id: conversationId } }
      })
    );
    if (shownFor !== conversationId) return;
    files = list;
    draw5();
    if (files.some((f) => f.status === "pending")) follow(conversationId);
  }
  function follow(conversationId) {
    const token = ++watch;
    const deadline = Date.now() + WAIT_MS;
    const poll = async () => {
      if (token !== watch || shownFor !== conversationId) return;
      try {
        const list = unwrap(
          await api.GET("/api/v1/conversations/{conversation_id}/files/", {
            params: { path: { conversation_id: conversationId } }
          })
        );
        if (token !== watch || shownFor !== conversationId) return;
        files = list;
        draw5();
        if (!files.some((f) => f.status === "pending")) return;
      } catch {
      }
      if (Date.now() < deadline) window.setTimeout(() => void poll(), POLL_MS);
    };
    window.setTimeout(() => void poll(), POLL_MS);
  }
  async function showFiles() {
    const conversation = state.conversation;
    shownFor = conversation?.id ?? null;
    watch++;
    files = [];
    draw5();
    if (conversation) await load(conversation.id);
  }
  function redrawFiles() {
    draw5();
  }
  function resetFiles() {
    shownFor = null;
    watch++;
    files = [];
    draw5();
  }
  byId("file-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const input = byId("file-input");
    const chosen = input.files?.[0];
    const conversation = state.conversation;
    if (!chosen || !conversation) return;
    void act(event.currentTarget.querySelector("button"), async () => {
      const form2 = new FormData();
      form2.append("file", chosen);
      const stored = unwrap(
        await api.POST("/api/v1/conversations/{conversation_id}/files/", {
          params: { path: { conversation_id: conversation.id } },
          // The typed body names the field; the request sends the FormData (multipart) itself.
          body: { file: chosen.name },
          bodySerializer: () => form2
        })
      );
      if (shownFor !== conversation.id) return;
      input.value = "";
      files = [...files.filter((f) => f.id !== stored.id), stored];
      draw5();
      announce("files", t("student_file_uploaded", { name: stored.name }));
      if (stored.status === "pending") follow(conversation.id);
    });
  });

  // web/src/student_conversations.ts
  var PAGE_SIZE2 = 20;
  var conversations = [];
  var page = 1;
  var next = false;
  var opening = 0;
  function conversationTitle(conversation) {
    return conversation.subject || t("student_conversation_untitled", { date: formatDate(conversation.created_at) });
  }
  function known(updated) {
    conversations = conversations.some((c) => c.id === updated.id) ? conversations.map((c) => c.id === updated.id ? updated : c) : [updated, ...conversations];
  }
  function item(conversation) {
    const titleId = `conversation-${conversation.id}-title`;
    const current2 = state.conversation?.id === conversation.id;
    const button = (label3) => h("button", { type: "button", class: "secondary", "aria-describedby": titleId }, label3);
    const open = button(t("student_open"));
    open.disabled = current2;
    open.addEventListener("click", () => void act(open, () => openConversation(conversation.id)));
    const end = isOpen(conversation) ? button(t("student_end")) : null;
    end?.addEventListener("click", () => void act(end, () => endConversation(conversation)));
    const facts = [
      t(conversation.status === "active" ? "student_conversation_state_active" : "student_conversation_state_ended"),
      t("student_conversation_started", { date: formatDate(conversation.created_at) }),
      t(`student_message_count_${plural(conversation.message_count)}`, { count: conversation.message_count })
    ];
    return h(
      "li",
      {
        class: `conversation conversation-${conversation.status}`,
        "data-conversation": String(conversation.id),
        ...current2 ? { "aria-current": "true" } : {}
      },
      h("h3", { id: titleId }, conversationTitle(conversation)),
      h("p", { class: "meta" }, facts.join(" · ")),
      h("div", { class: "buttons" }, current2 ? h("span", { class: "current" }, t("student_on_screen")) : open, end)
    );
  }
  function drawConversations() {
    byId("conversations").replaceChildren(...conversations.map(item));
    byId("conversations-empty").hidden = conversations.length > 0;
    byId("more-conversations").hidden = !next;
  }
  async function loadConversations(more = false) {
    const wanted = more ? page + 1 : 1;
    const data = unwrap(
      await api.GET("/api/v1/conversations/", { params: { query: { page: wanted, page_size: PAGE_SIZE2 } } })
    );
    const seen = new Set(data.results.map((c) => c.id));
    conversations = more ? [...conversations.filter((c) => !seen.has(c.id)), ...data.results] : data.results;
    page = wanted;
    next = Boolean(data.next);
    drawConversations();
  }
  async function openConversation(id) {
    const request = ++opening;
    const [detail, quizzes3] = await Promise.all([
      api.GET("/api/v1/conversations/{conversation_id}/", { params: { path: { conversation_id: id } } }).then(unwrap),
      conversationQuizzes(id)
    ]);
    if (request !== opening) return;
    const { messages: messages2, ...conversation } = detail;
    state.conversation = conversation;
    known(conversation);
    showChat(messages2.results, messages2.next_before, quizzes3);
    drawConversations();
    await showFiles();
  }
  async function resumeConversation() {
    const request = opening;
    await loadConversations();
    const latest = conversations.find((c) => c.id === launched.conversation) ?? conversations.find((c) => c.status === "active");
    if (latest && request === opening && state.conversation === null) await openConversation(latest.id);
  }
  async function endConversation(conversation) {
    const ended = unwrap(
      await api.POST("/api/v1/conversations/{conversation_id}/end/", {
        params: { path: { conversation_id: conversation.id } }
      })
    );
    known(ended);
    if (state.conversation?.id === ended.id) {
      state.conversation = ended;
      drawChat();
      redrawFiles();
    }
    drawConversations();
    announce("conversations", t("student_conversation_end_done", { title: conversationTitle(ended) }));
    watchForSummary(ended.id);
  }
  function resetConversations() {
    conversations = [];
    page = 1;
    next = false;
    opening++;
    state.conversation = null;
    resetChat();
    resetFiles();
    drawConversations();
  }
  onMessageAdded((id) => {
    const shown2 = conversations.find((c) => c.id === id);
    if (!shown2) return;
    const counted = { ...shown2, message_count: shown2.message_count + 1 };
    known(counted);
    if (state.conversation?.id === id) state.conversation = counted;
    drawConversations();
  });
  onTurnEnd((id) => {
    api.GET("/api/v1/conversations/{conversation_id}/", { params: { path: { conversation_id: id }, query: { limit: 1 } } }).then(unwrap).then(({ messages: _latest, ...conversation }) => {
      known(conversation);
      if (state.conversation?.id === id) {
        const changed = state.conversation.status !== conversation.status;
        state.conversation = conversation;
        if (changed) drawChat();
      }
      drawConversations();
    }).catch(() => void 0);
  });
  byId("new-conversation").addEventListener("submit", (event) => {
    event.preventDefault();
    const subject = byId("subject");
    void act(event.currentTarget.querySelector("button"), async () => {
      const created = unwrap(await api.POST("/api/v1/conversations/", { body: { subject: subject.value.trim() } }));
      opening++;
      state.conversation = created;
      known(created);
      subject.value = "";
      showChat([], null, []);
      drawConversations();
      await loadConversations();
      await showFiles();
      byId("message").focus();
    });
  });
  byId("end").addEventListener("click", (event) => {
    const current2 = state.conversation;
    if (!current2) return;
    void act(event.currentTarget, () => endConversation(current2));
  });
  byId("more-conversations").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadConversations(true));
  });

  // web/src/student_tasks.ts
  var PROGRESS = ["todo", "in_progress", "done"];
  var PAGE_SIZE3 = 50;
  var tasks = [];
  function mine(task) {
    return task.statuses.find((s) => s.student_id === state.me?.id) ?? task.statuses[0];
  }
  function statusSelect(task, current2) {
    const id = `task-${task.id}-status`;
    const select = h(
      "select",
      { id, name: "status" },
      ...PROGRESS.map((value) => h("option", { value, selected: value === current2 }, t(`student_task_${value}`)))
    );
    select.addEventListener("change", () => {
      const chosen = PROGRESS.find((p) => p === select.value) ?? "todo";
      void act(null, async () => {
        select.disabled = true;
        try {
          const updated = unwrap(
            await api.POST("/api/v1/tasks/{task_id}/status/", {
              params: { path: { task_id: task.id } },
              body: { status: chosen }
            })
          );
          tasks = tasks.map((each) => each.id === updated.id ? updated : each);
          draw6();
          announce("tasks", t("student_task_saved", { title: updated.title, status: t(`student_task_${chosen}`) }));
          byId(id).focus();
        } finally {
          select.disabled = false;
        }
      }).then((ok) => {
        if (!ok) select.value = current2;
      });
    });
    return h("p", { class: "field" }, h("label", { for: id }, t("student_task_status")), select);
  }
  function taskItem(task) {
    const status = mine(task);
    const current2 = status?.status ?? "todo";
    const due = task.due_at ? t("student_task_due", { date: formatDate(task.due_at) }) : "";
    const facts = [task.subject, due].filter(Boolean);
    return h(
      "li",
      { class: `task task-${current2}`, "data-task": String(task.id) },
      h("h3", {}, task.title),
      (facts.length > 0 || status?.overdue) && h(
        "p",
        { class: "meta" },
        facts.join(" · "),
        status?.overdue ? h("strong", { class: "overdue" }, ` ${t("student_task_overdue")}`) : null
      ),
      task.instructions && h("p", { class: "instructions" }, task.instructions),
      status?.set_by === "tutor" && h("p", { class: "muted" }, t("student_task_set_by_tutor", { reason: status.reason || t("none") })),
      statusSelect(task, current2)
    );
  }
  function draw6() {
    byId("tasks").replaceChildren(...tasks.map(taskItem));
    byId("tasks-empty").hidden = tasks.length > 0;
  }
  async function loadTasks() {
    tasks = unwrap(await api.GET("/api/v1/tasks/", { params: { query: { page_size: PAGE_SIZE3 } } })).results;
    draw6();
  }
  function redrawTasks() {
    draw6();
  }
  function resetTasks() {
    tasks = [];
    draw6();
  }

  // web/src/student.ts
  setErrorText((error) => studentErrorText(error));
  void run({
    roles: ["student"],
    signInWithCode: true,
    async start(me) {
      state.me = me;
      const loads = await Promise.allSettled([
        resumeConversation(),
        loadMemories(),
        loadQuizzes(),
        loadTasks(),
        loadCard()
      ]);
      const failed2 = loads.find((load2) => load2.status === "rejected");
      if (failed2) showError(failed2.reason);
    },
    redraw() {
      drawConversations();
      drawChat();
      redrawFiles();
      redrawQuizzes();
      redrawTasks();
      redrawCard();
      redrawAsk();
      redrawMemories();
      redrawSafety();
    },
    reset() {
      state.me = null;
      resetConversations();
      resetQuizzes();
      resetTasks();
      resetCard();
      resetAsk();
      resetMemories();
      resetSafety();
    }
  });
})();
