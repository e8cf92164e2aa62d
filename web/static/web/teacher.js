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
        fetch: fetch2 = baseFetch,
        Request = CustomRequest,
        headers: headers2,
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
        mergeHeaders(baseHeaders, headers2, params.header)
      );
      const finalHeaders = mergeHeaders(
        // with no body, we should not to set Content-Type
        serializedBody === void 0 || // if serialized body is FormData; browser will correctly set Content-Type & boundary expression
        serializedBody instanceof FormData ? {} : {
          "Content-Type": "application/json"
        },
        baseHeaders,
        headers2,
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
          fetch: fetch2,
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
          response = await fetch2(request, requestInitExt);
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
  function defaultBodySerializer(body, headers2) {
    if (body instanceof FormData) {
      return body;
    }
    if (headers2) {
      const contentType = headers2.get instanceof Function ? headers2.get("Content-Type") ?? headers2.get("content-type") : headers2["Content-Type"] ?? headers2["content-type"];
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
          const field2 = colon < 0 ? line : line.slice(0, colon);
          const raw = colon < 0 ? "" : line.slice(colon + 1);
          const text = raw.startsWith(" ") ? raw.slice(1) : raw;
          if (field2 === "event") event = text;
          else if (field2 === "data") data.push(text);
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
  function plural(count2) {
    return new Intl.PluralRules(current).select(count2) === "one" ? "one" : "other";
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
  function tokenAuthorization() {
    return launchToken === null ? null : `Token ${launchToken}`;
  }
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
  async function act(button2, action) {
    showError(null);
    if (button2) button2.disabled = true;
    try {
      await action();
      return true;
    } catch (error) {
      showError(error);
      return false;
    } finally {
      if (button2) button2.disabled = false;
    }
  }
  function label(key) {
    return t(key);
  }
  function provenance(memory, me3) {
    const author = memory.author === null || memory.author === void 0 ? t("none") : memory.author === me3.id ? t("author_you") : t("author_teacher", { id: memory.author });
    const rows2 = [
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
      rows2.push(["source_conversation", t("conversation_number", { id: memory.source_conversation })]);
    }
    if (memory.status === "archived") rows2.push(["archived_reason", memory.archived_reason || t("none")]);
    if (memory.needs_review) rows2.push(["needs_review", memory.review_reason || t("yes")]);
    const list = h("dl", { class: "provenance" });
    for (const [key, value] of rows2) {
      list.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
    }
    return list;
  }
  async function run(page3) {
    translatePage();
    const loginSection = byId("login");
    const account = byId("account");
    const app = byId("app");
    const wrongPage = byId("wrong-page");
    const languageSelect = byId("language");
    const loading = byId("loading");
    let me3 = null;
    function showLanguage(lang) {
      setLanguage(lang);
      languageSelect.value = lang;
      translatePage();
      if (me3) byId("whoami").textContent = t("signed_in_as", { name: displayName(me3) });
      page3.redraw();
    }
    async function signedIn(user) {
      me3 = user;
      loginSection.hidden = true;
      account.hidden = false;
      showLanguage(user.language ?? "en");
      if (!page3.roles.includes(user.role ?? "student")) {
        wrongPage.hidden = false;
        return;
      }
      app.hidden = false;
      await page3.start(user);
    }
    function signedOut() {
      me3 = null;
      launchToken = null;
      launched.classroom = null;
      launched.conversation = null;
      api = createClient2({ auth: { session: true } });
      account.hidden = true;
      app.hidden = true;
      wrongPage.hidden = true;
      loginSection.hidden = false;
      if (!providersAsked) void showProviders();
      page3.reset();
      byId("username").focus();
    }
    byId("login-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const form3 = event.currentTarget;
      const username = byId("username").value;
      const password = byId("password");
      void act(form3.querySelector("button"), async () => {
        unwrap(await api.GET("/api/v1/auth/csrf/"));
        const { user } = unwrap(await api.POST("/api/v1/auth/login/", { body: { username, password: password.value } }));
        password.value = "";
        await signedIn(user);
      });
    });
    async function launchSignIn(code) {
      const answer = unwrap(await createClient2().POST("/api/v1/lti/token/", { body: { code } }));
      launchToken = answer.token;
      api = createClient2({ auth: { token: answer.token } });
      launched.classroom = answer.classroom ?? null;
      launched.conversation = answer.conversation ?? null;
      await signedIn(answer.user);
    }
    async function codeSignIn(code) {
      unwrap(await api.GET("/api/v1/auth/csrf/"));
      const { user } = unwrap(await api.POST("/api/v1/auth/code/login/", { body: { code } }));
      await signedIn(user);
    }
    if (page3.signInWithCode) {
      byId("code-form").addEventListener("submit", (event) => {
        event.preventDefault();
        const form3 = event.currentTarget;
        const input = byId("sign-in-code");
        void act(form3.querySelector("button"), async () => {
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
      if (!me3) {
        showLanguage(lang);
        drawProviders();
        return;
      }
      void act(null, async () => {
        const user = unwrap(await api.PATCH("/api/v1/me/", { body: { language: lang } }));
        me3 = user;
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
      const code = page3.signInWithCode ? takeFromAddress("code") : null;
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

  // web/src/safety.ts
  var PAGE_SIZE = 50;
  var CLOSED = /* @__PURE__ */ new Set(["resolved", "false_positive"]);
  var flags = [];
  var next = false;
  var page = 1;
  var readConversation = () => void 0;
  function onReadConversation(listener) {
    readConversation = listener;
  }
  function conversationButton(flag) {
    if (flag.conversation === null || flag.conversation === void 0) return null;
    const button2 = h(
      "button",
      { type: "button", class: "secondary read-conversation", "aria-describedby": `flag-${flag.id}-title` },
      t("flag_read_conversation")
    );
    button2.addEventListener("click", () => readConversation(flag));
    return h("p", { class: "source-link" }, button2);
  }
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
    const form3 = h(
      "form",
      { class: "acknowledge inline" },
      h("p", { class: "field" }, h("label", { for: note.id }, t("acknowledge_note")), note),
      submit
    );
    form3.addEventListener("submit", (event) => {
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
    return form3;
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
    const form3 = h(
      "form",
      { class: "resolve" },
      h("p", { class: "field" }, h("label", { for: note.id }, t("resolve_note")), note),
      h("p", { class: "field" }, h("label", { for: outcome.id }, t("resolve_outcome")), outcome),
      submit
    );
    form3.addEventListener("submit", (event) => {
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
    return h("details", { class: "action" }, h("summary", {}, t("resolve")), form3);
  }
  function flagCard(flag) {
    const rows2 = [
      ["flag_student", studentName(flag)],
      ["flag_category", t(`category_${flag.category}`)],
      ["source", t(`source_${flag.source}`)],
      ["flag_when", formatDate(flag.created_at)],
      ["flag_status", t(`flag_status_${flag.status}`)]
    ];
    if (flag.quiet) rows2.push(["flag_alert", t("flag_quiet")]);
    if (flag.outcome) rows2.push(["flag_outcome", flag.outcome]);
    const details2 = h("dl", { class: "provenance" });
    for (const [key, value] of rows2) {
      details2.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
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
        flag.alert_unrouted && h("p", { class: "error unrouted" }, t("flag_unrouted")),
        h("p", { class: "excerpt" }, flag.excerpt),
        details2,
        conversationButton(flag),
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
    const item2 = byId(`flag-${id}`);
    item2.scrollIntoView({ block: "start" });
    item2.focus();
  }
  async function loadFlags(more2 = false) {
    const wanted = more2 ? page + 1 : 1;
    const data = unwrap(
      await api.GET("/api/v1/safety/flags/", {
        params: { query: { ordering: "severity", page: wanted, page_size: PAGE_SIZE } }
      })
    );
    const seen = new Set(data.results.map((f) => f.id));
    flags = more2 ? [...flags.filter((f) => !seen.has(f.id)), ...data.results] : data.results;
    page = wanted;
    next = Boolean(data.next);
    draw();
    if (!more2) await showAnchored();
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

  // web/src/teacher_api.ts
  var STUDENT_EDITABLE = ["goals", "interests", "level", "register"];
  var WRITES = /* @__PURE__ */ new Set(["POST", "PATCH", "PUT", "DELETE"]);
  function headers(method, accept = "application/json") {
    const result = new Headers({ Accept: accept });
    const token = tokenAuthorization();
    if (token) result.set("Authorization", token);
    if (WRITES.has(method)) {
      result.set("Content-Type", "application/json");
      const csrf = token ? null : cookie("csrftoken");
      if (csrf) result.set("X-CSRFToken", csrf);
    }
    return result;
  }
  async function failure(response) {
    const body = await response.json().catch(() => void 0);
    return new ApiError(response.status, body);
  }
  async function get(path) {
    const response = await fetch(`/api/v1${path}`, { headers: headers("GET"), credentials: "same-origin" });
    if (!response.ok) throw await failure(response);
    return await response.json();
  }
  async function every(path, maxPages = 20) {
    const items = [];
    const join = path.includes("?") ? "&" : "?";
    for (let page3 = 1; page3 <= maxPages; page3++) {
      const data = await get(`${path}${join}page=${page3}&page_size=100`);
      items.push(...data.results);
      if (!data.next) break;
    }
    return items;
  }
  async function* askStream(path, question) {
    const response = await fetch(`/api/v1${path}`, {
      method: "POST",
      headers: headers("POST", "text/event-stream"),
      credentials: "same-origin",
      body: JSON.stringify({ question })
    });
    if (!response.ok) throw await failure(response);
    if (!(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
      yield { event: "answer", answer: await response.json() };
      return;
    }
    if (!response.body) throw new ApiError(response.status, void 0);
    for await (const { event, data } of readServerSentEvents(response.body)) {
      if (event === "delta") yield { event, text: String(data.text ?? "") };
      else if (event === "answer") yield { event, answer: data };
      else if (event === "error") throw new ApiError(502, data);
    }
  }

  // web/src/teacher_ui.ts
  function field(id, key, control) {
    control.id = id;
    return h("p", { class: "field" }, h("label", { for: id }, t(key)), control);
  }
  function describe(rows2) {
    const list = h("dl", { class: "provenance" });
    for (const [key, value] of rows2) {
      list.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
    }
    return list;
  }
  function sectionError(section, error) {
    const region = byId(`${section}-error`);
    region.textContent = error === null ? "" : errorMessage(error);
    region.hidden = error === null;
  }
  function sectionStatus(section, text) {
    byId(`${section}-status`).textContent = text;
  }
  async function sectionAct(section, button2, action) {
    sectionError(section, null);
    if (button2) button2.disabled = true;
    try {
      await action();
      return true;
    } catch (error) {
      sectionError(section, error);
      return false;
    } finally {
      if (button2) button2.disabled = false;
    }
  }
  function showFieldErrors(form3, error) {
    clearFieldErrors(form3);
    if (!(error instanceof ApiError) || typeof error.details !== "object" || error.details === null) return false;
    let first = null;
    for (const [name, messages] of Object.entries(error.details)) {
      const control = form3.elements.namedItem(name);
      if (!(control instanceof HTMLElement) || !control.id) continue;
      const text = (Array.isArray(messages) ? messages : [messages]).map(String).join(" ");
      const note = h("span", { class: "field-error", id: `${control.id}-error` }, text);
      control.after(note);
      control.setAttribute("aria-invalid", "true");
      const described = control.getAttribute("aria-describedby");
      control.setAttribute("aria-describedby", [described, note.id].filter(Boolean).join(" "));
      first ?? (first = control);
    }
    first?.focus();
    return first !== null;
  }
  function clearFieldErrors(form3) {
    for (const note of form3.querySelectorAll(".field-error")) {
      const control = form3.querySelector(`[aria-describedby~="${note.id}"]`);
      if (control) {
        control.removeAttribute("aria-invalid");
        const rest = (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id && id !== note.id);
        if (rest.length) control.setAttribute("aria-describedby", rest.join(" "));
        else control.removeAttribute("aria-describedby");
      }
      note.remove();
    }
  }
  async function formAct(section, form3, button2, action) {
    sectionError(section, null);
    clearFieldErrors(form3);
    if (button2) button2.disabled = true;
    try {
      await action();
      return true;
    } catch (error) {
      if (!showFieldErrors(form3, error)) sectionError(section, error);
      return false;
    } finally {
      if (button2) button2.disabled = false;
    }
  }
  function notServed(error) {
    return error instanceof ApiError && error.status === 404;
  }
  function band(estimate) {
    if (estimate >= 0.95) return "mastered";
    if (estimate >= 0.7) return "near";
    if (estimate >= 0.4) return "learning";
    return "low";
  }
  var BANDS = ["low", "learning", "near", "mastered"];
  function percent(value) {
    return `${Math.round(value * 100)} %`;
  }
  function words(items) {
    return items.length ? items.join(", ") : t("none");
  }

  // web/src/teacher_ask.ts
  var REF_GROUP = /\[([^\]\n]{1,80})\]/g;
  function refsIn(group) {
    return group.split(/[,;]/).map((ref) => ref.trim()).filter(Boolean);
  }
  function withoutMarkers(text, answer) {
    const known2 = /* @__PURE__ */ new Set([...answer.citations.map((c) => c.ref), ...answer.dropped]);
    return text.replace(REF_GROUP, (whole, group) => refsIn(group).every((ref) => known2.has(ref)) ? "" : whole).replace(/\s+([.,;:!?])/g, "$1").replace(/\s{2,}/g, " ").trim();
  }
  var KIND_LABEL = {
    memory: "cite_memory",
    quiz: "cite_quiz",
    skill: "cite_skill",
    task: "cite_task",
    file: "cite_file",
    card: "cite_card"
  };
  function drawAnswer(answer, prefix, names, open3) {
    const numbers = new Map(answer.citations.map((c, i) => [c.ref, i + 1]));
    const links = (refs) => refs.filter((ref) => numbers.has(ref)).map((ref) => h("a", { href: `#${prefix}-cite-${numbers.get(ref)}`, class: "ref", "data-ref": ref }, `[${numbers.get(ref)}]`));
    const claims = answer.claims.length ? answer.claims.map(
      (claim) => h(
        "span",
        { class: claim.supported ? "claim" : "claim unsupported" },
        withoutMarkers(claim.text, answer),
        ...links(claim.refs),
        claim.supported ? null : h("em", { class: "no-evidence" }, ` (${t("claim_unsupported")})`),
        " "
      )
    ) : [withoutMarkers(answer.answer, answer)];
    const students2 = answer.students.length ? h(
      "div",
      { class: "named" },
      h("p", { class: "meta" }, t("answer_students")),
      h(
        "ul",
        {},
        ...answer.students.map((s) => {
          const button2 = h("button", { type: "button", class: "link" }, s.username);
          button2.addEventListener("click", () => open3?.(s.id));
          return h("li", { "data-student": String(s.id) }, open3 ? button2 : s.username, " ", ...links(s.refs));
        })
      )
    ) : null;
    return h(
      "div",
      { class: "answer", "data-answer": String(answer.id) },
      answer.insufficient ? h("p", { class: "insufficient" }, t("answer_insufficient")) : null,
      // An answer that cites nothing says so first: nothing in it can be checked.
      answer.citations.length === 0 && !answer.insufficient ? h("p", { class: "no-citation", role: "note" }, t("answer_no_citation")) : null,
      h("p", { class: "answer-text" }, ...claims),
      students2,
      answer.citations.length ? h(
        "div",
        { class: "citations" },
        h("p", { class: "meta" }, t("answer_citations")),
        h(
          "ol",
          {},
          ...answer.citations.map(
            (c, i) => h(
              "li",
              { id: `${prefix}-cite-${i + 1}`, "data-ref": c.ref, "data-kind": c.kind },
              h("span", { class: "kind" }, t(KIND_LABEL[c.kind])),
              answer.students.length ? ` · ${names(c.student)}` : "",
              " · ",
              h("strong", { class: "cite-title" }, c.title),
              c.excerpt ? h("span", { class: "cite-excerpt" }, ` — ${c.excerpt}`) : null
            )
          )
        )
      ) : null
    );
  }
  function askBox(prefix, target, names, open3) {
    const root = byId(prefix);
    const question = h("textarea", { name: "question", rows: "2", maxlength: "1000", required: true });
    question.id = `${prefix}-question`;
    const label2 = h("label", { for: question.id });
    const submit = h("button", { type: "submit" });
    const output = h("div", { class: "answer-area", "aria-live": "polite" });
    let answer = null;
    let streamed = "";
    let asking = false;
    function draw10() {
      label2.textContent = target()?.label ?? t("ask_question");
      submit.textContent = t("ask");
      if (answer) output.replaceChildren(drawAnswer(answer, prefix, names, open3));
      else if (streamed) output.replaceChildren(h("p", { class: "answer-text streaming" }, streamed));
      else if (asking) output.replaceChildren(h("p", { class: "thinking", role: "status" }, t("ask_thinking")));
      else output.replaceChildren();
    }
    const form3 = h("form", { class: "ask" }, h("p", { class: "field" }, label2, question), submit);
    form3.addEventListener("submit", (event) => {
      event.preventDefault();
      const chosen = target();
      if (!chosen) return;
      answer = null;
      streamed = "";
      asking = true;
      draw10();
      output.setAttribute("aria-busy", "true");
      void sectionAct(prefix, submit, async () => {
        for await (const e of askStream(chosen.path, question.value)) {
          if (e.event === "delta") streamed += e.text;
          else answer = e.answer;
          draw10();
        }
      }).finally(() => {
        asking = false;
        output.removeAttribute("aria-busy");
        draw10();
      });
    });
    root.replaceChildren(form3, output);
    draw10();
    return {
      clear() {
        answer = null;
        streamed = "";
        asking = false;
        question.value = "";
        draw10();
      },
      redraw: draw10
    };
  }

  // web/src/teacher_card.ts
  var SECTION = "card";
  var LISTS = ["goals", "accommodations", "interests"];
  var HISTORY_PAGES = 2;
  var student = null;
  var card = null;
  var changes = null;
  var onCard = () => void 0;
  function lines(text) {
    return text.split("\n").map((line) => line.trim()).filter(Boolean);
  }
  function same(a, b) {
    return a.length === b.length && a.every((item2, i) => item2 === b[i]);
  }
  function view(shown) {
    return describe([
      ["card_goals", words(shown.goals)],
      ["card_accommodations", words(shown.accommodations)],
      ["card_interests", words(shown.interests)],
      ["card_level", shown.level || t("none")],
      ["card_register", shown.register || t("none")],
      ["card_student_editable", words(shown.student_editable.map((f) => t(`card_${f}`)))],
      ["card_size", t("card_tokens", { percent: Math.round(100 * shown.token_count / Math.max(1, shown.token_limit)) })],
      ["updated", formatDate(shown.updated_at)]
    ]);
  }
  function form(shown) {
    const lists = Object.fromEntries(
      LISTS.map((name) => {
        const area = h("textarea", { name, rows: "3" });
        area.value = shown[name].join("\n");
        return [name, area];
      })
    );
    const level = h("input", { name: "level", maxlength: "200" });
    level.value = shown.level;
    const register = h("input", { name: "register", maxlength: "200" });
    register.value = shown.register;
    const editable = STUDENT_EDITABLE.map((name) => {
      const box = h("input", { type: "checkbox", name: "student_editable", value: name });
      box.id = `card-editable-${name}`;
      box.checked = shown.student_editable.includes(name);
      return h("p", { class: "check" }, box, h("label", { for: box.id }, t(`card_${name}`)));
    });
    const submit = h("button", { type: "submit" }, t("card_save"));
    const node = h(
      "form",
      { id: "card-form" },
      h("p", { class: "muted" }, t("card_one_per_line")),
      ...LISTS.map((name) => field(`card-${name}`, `card_${name}`, lists[name])),
      field("card-level", "card_level", level),
      field("card-register", "card_register", register),
      h("fieldset", {}, h("legend", {}, t("card_student_editable")), ...editable),
      submit
    );
    node.addEventListener("submit", (event) => {
      event.preventDefault();
      const patch = {};
      for (const name of LISTS) {
        const value = lines(lists[name].value);
        if (!same(value, shown[name])) patch[name] = value;
      }
      if (level.value.trim() !== shown.level) patch.level = level.value.trim();
      if (register.value.trim() !== shown.register) patch.register = register.value.trim();
      const chosen = editable.map((p) => p.querySelector("input")).filter((box) => box.checked).map((box) => box.value);
      if (!same(chosen, shown.student_editable)) patch.student_editable = chosen;
      void save(patch, submit);
    });
    return node;
  }
  async function save(patch, button2) {
    const who = student;
    if (!who) return;
    sectionStatus(SECTION, "");
    if (!Object.keys(patch).length) {
      sectionStatus(SECTION, t("card_unchanged"));
      return;
    }
    await sectionAct(SECTION, button2, async () => {
      card = unwrap(
        await api.PATCH("/api/v1/students/{student_id}/card/", { params: { path: { student_id: who.id } }, body: patch })
      );
      changes = null;
      draw2();
      onCard(card);
      sectionStatus(SECTION, t("card_saved"));
      await historyIfOpen();
    });
  }
  function changeValue(c) {
    const field2 = STUDENT_EDITABLE.find((name) => name === c.value);
    return c.field === "student_editable" && field2 ? t(`card_${field2}`) : c.value;
  }
  function change(c) {
    const who = c.actor ? c.actor.username : t(`card_source_${c.source}`);
    return h(
      "li",
      { "data-change": String(c.id) },
      h(
        "p",
        {},
        h("strong", {}, t(`card_${c.field}`)),
        " · ",
        t(`card_op_${c.op}`, { value: changeValue(c) }),
        " · ",
        h("span", { class: `change-${c.status}` }, t(`card_change_${c.status}`))
      ),
      h("p", { class: "meta" }, `${formatDate(c.created_at)} · ${who}${c.reason ? ` · ${c.reason}` : ""}`)
    );
  }
  function draw2() {
    byId("card-heading").textContent = student ? t("card_heading", { name: displayName(student) }) : t("card_heading_none");
    byId("card-view").replaceChildren(...card ? [view(card)] : []);
    const edit = byId("card-edit");
    edit.hidden = card === null;
    const open3 = edit.open;
    edit.replaceChildren(h("summary", {}, t("card_edit")), ...card ? [form(card)] : []);
    edit.open = open3;
    byId("card-history").hidden = card === null;
    byId("card-changes").replaceChildren(
      ...changes === null ? [] : changes.length ? changes.map(change) : [h("li", {}, t("card_no_changes"))]
    );
  }
  async function loadChanges() {
    const who = student;
    if (!who || changes !== null) return;
    await sectionAct(SECTION, null, async () => {
      const found = [];
      for (let page3 = 1; page3 <= HISTORY_PAGES; page3++) {
        const data = unwrap(
          await api.GET("/api/v1/students/{student_id}/card/changes/", {
            params: { path: { student_id: who.id }, query: { page: page3, page_size: 100 } }
          })
        );
        found.push(...data.results);
        if (!data.next) break;
      }
      changes = found;
      draw2();
    });
  }
  async function historyIfOpen() {
    if (byId("card-history").open) await loadChanges();
  }
  async function loadCard(who) {
    student = who;
    card = null;
    changes = null;
    sectionStatus(SECTION, "");
    sectionError(SECTION, null);
    draw2();
    if (!who) return onCard(null);
    await sectionAct(SECTION, null, async () => {
      card = unwrap(await api.GET("/api/v1/students/{student_id}/card/", { params: { path: { student_id: who.id } } }));
      draw2();
    });
    onCard(card);
    await historyIfOpen();
  }
  function startCard(listener) {
    onCard = listener;
  }
  function reloadCard() {
    return loadCard(student);
  }
  function redrawCard() {
    draw2();
  }
  byId("card-history").addEventListener("toggle", (event) => {
    if (event.currentTarget.open) void loadChanges();
  });

  // web/src/teacher_learning.ts
  var SECTION2 = "learning";
  var QUIZ_PAGE = 20;
  var TASK_PAGES = 10;
  var student2 = null;
  var skills = [];
  var reviews = null;
  var quizzes = [];
  var quizPage = 1;
  var moreQuizzes = false;
  var tasks = [];
  var details = /* @__PURE__ */ new Map();
  function mastery(estimate) {
    const b = band(estimate);
    return h(
      "span",
      { class: `mastery mastery-${b}` },
      h("span", { class: "value" }, percent(estimate)),
      " ",
      h("span", { class: "band" }, t(`mastery_${b}`))
    );
  }
  function reviewText(review) {
    if (!review) return t("none");
    if (review.overdue_days >= 1) return t("review_overdue", { days: Math.floor(review.overdue_days) });
    return new Date(review.due_at) <= /* @__PURE__ */ new Date() ? t("review_due_now") : t("review_next", { date: formatDate(review.due_at) });
  }
  function trend(value) {
    if (value > 0.02) return t("trend_up");
    if (value < -0.02) return t("trend_down");
    return t("trend_flat");
  }
  function skillRow(skill) {
    const review = [...reviews?.due ?? [], ...reviews?.upcoming ?? []].find((r) => r.skill === skill.skill);
    const due = Boolean(reviews?.due.some((r) => r.skill === skill.skill));
    return h(
      "tr",
      { "data-skill": skill.skill },
      h("th", { scope: "row" }, skill.skill),
      h("td", { class: `cell mastery-${band(skill.estimate)}` }, mastery(skill.estimate)),
      h("td", {}, trend(skill.trend)),
      h("td", {}, t("answers_right", { correct: skill.correct, total: skill.attempts })),
      h("td", {}, t("answers_right", { correct: skill.latest_correct, total: skill.latest_total })),
      h("td", { class: due ? "due" : "" }, reviewText(review))
    );
  }
  function skillTable() {
    const headers2 = ["skill", "mastery", "trend", "skill_answers", "latest_quiz", "review"];
    return h(
      "table",
      { class: "skills" },
      h("caption", {}, t("skills_caption")),
      h("thead", {}, h("tr", {}, ...headers2.map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...skills.map(skillRow))
    );
  }
  function score(quiz) {
    if (quiz.status === "graded" && quiz.correct !== null) {
      return t("quiz_score", { correct: quiz.correct, total: quiz.question_count });
    }
    return t(`quiz_status_${quiz.status}`);
  }
  function questions(quiz) {
    return h(
      "ol",
      { class: "questions" },
      ...quiz.questions.map((q) => {
        const answer = quiz.answers.find((a) => a.question === q.id);
        return h(
          "li",
          { class: answer ? `result-${answer.result}` : "" },
          h("p", {}, q.prompt),
          q.choices.length ? h("p", { class: "meta" }, t("quiz_choices", { choices: q.choices.join(" · ") })) : null,
          h("p", {}, t("quiz_expected", { answer: q.expected_answer ?? t("none") })),
          answer ? h("p", {}, t("quiz_given", { answer: answer.given || t("quiz_skipped") }), " · ", h("strong", {}, t(`result_${answer.result}`))) : h("p", { class: "meta" }, t("quiz_not_answered")),
          answer?.feedback ? h("p", { class: "meta" }, answer.feedback) : null,
          q.explanation ? h("p", { class: "meta" }, q.explanation) : null
        );
      })
    );
  }
  function quizItem(quiz) {
    const more2 = h("details", { class: "action" }, h("summary", {}, t("quiz_details")));
    const known2 = details.get(quiz.id);
    if (known2) more2.append(questions(known2));
    more2.addEventListener("toggle", () => {
      if (!more2.open || details.has(quiz.id)) return;
      void sectionAct(SECTION2, null, async () => {
        const detail = unwrap(await api.GET("/api/v1/quizzes/{quiz_id}/", { params: { path: { quiz_id: quiz.id } } }));
        details.set(quiz.id, detail);
        more2.append(questions(detail));
      });
    });
    return h(
      "li",
      { "data-quiz": String(quiz.id), class: `quiz quiz-${quiz.status}` },
      h("p", {}, h("strong", {}, quiz.topic), " · ", h("span", { class: "score" }, score(quiz))),
      h("p", { class: "meta" }, `${quiz.skill} · ${formatDate(quiz.created_at)}`),
      more2
    );
  }
  function taskItem(task) {
    const status = task.statuses.find((s) => s.student_id === student2?.id);
    const facts = [task.subject, task.due_at ? t("task_due", { date: formatDate(task.due_at) }) : t("task_no_due")];
    if (task.classroom !== null) facts.push(t("task_for_class"));
    return h(
      "li",
      { "data-task": String(task.id), class: status?.overdue ? "overdue" : "" },
      h(
        "p",
        {},
        h("strong", {}, task.title),
        " · ",
        h("span", { class: "task-status" }, status ? t(`task_status_${status.status}`) : t("none")),
        status?.overdue ? h("span", { class: "late" }, ` · ${t("task_overdue")}`) : null
      ),
      h("p", { class: "meta" }, facts.filter(Boolean).join(" · ")),
      task.instructions ? h("p", {}, task.instructions) : null,
      status?.set_by === "tutor" ? h("p", { class: "meta" }, t("task_set_by_tutor", { reason: status.reason || t("none") })) : null
    );
  }
  function draw3() {
    byId("learning-heading").textContent = student2 ? t("learning_heading", { name: displayName(student2) }) : "";
    byId("skills-empty").textContent = skills.length ? "" : t("no_skills");
    byId("skills-table").replaceChildren(...skills.length ? [skillTable()] : []);
    byId("quizzes-empty").textContent = quizzes.length ? "" : t("no_quizzes");
    byId("quiz-list").replaceChildren(...quizzes.map(quizItem));
    byId("more-quizzes").hidden = !moreQuizzes;
    byId("tasks-empty").textContent = tasks.length ? "" : t("no_tasks");
    byId("task-list").replaceChildren(...tasks.map(taskItem));
  }
  async function loadQuizzes(who, next2) {
    const page3 = next2 ? quizPage + 1 : 1;
    const data = unwrap(await api.GET("/api/v1/quizzes/", { params: { query: { student: who.id, page: page3, page_size: QUIZ_PAGE } } }));
    quizzes = next2 ? [...quizzes, ...data.results] : data.results;
    quizPage = page3;
    moreQuizzes = Boolean(data.next);
  }
  async function loadTasks(who) {
    const found = [];
    for (let page3 = 1; page3 <= TASK_PAGES; page3++) {
      const data = unwrap(await api.GET("/api/v1/tasks/", { params: { query: { page: page3, page_size: 100 } } }));
      found.push(...data.results.filter((task) => task.statuses.some((s) => s.student_id === who.id)));
      if (!data.next) break;
    }
    tasks = found;
  }
  async function loadLearning(who) {
    student2 = who;
    skills = [];
    reviews = null;
    quizzes = [];
    moreQuizzes = false;
    tasks = [];
    details.clear();
    draw3();
    if (!who) return;
    await sectionAct(SECTION2, null, async () => {
      const [rows2, schedule] = await Promise.all([
        api.GET("/api/v1/students/{student_id}/skills/", { params: { path: { student_id: who.id } } }),
        api.GET("/api/v1/students/{student_id}/reviews/", { params: { path: { student_id: who.id } } }).then(unwrap).catch((error) => ({ error })),
        loadQuizzes(who, false),
        loadTasks(who)
      ]);
      skills = unwrap(rows2);
      reviews = "error" in schedule ? null : schedule;
      draw3();
      if ("error" in schedule) throw schedule.error;
    });
  }
  function redrawLearning() {
    draw3();
  }
  byId("more-quizzes").addEventListener("click", (event) => {
    const who = student2;
    if (!who) return;
    void sectionAct(SECTION2, event.currentTarget, async () => {
      await loadQuizzes(who, true);
      draw3();
    });
  });

  // web/src/teacher_class.ts
  var SECTION3 = "class";
  var classrooms = [];
  var unavailable = false;
  var skills2 = null;
  var reviews2 = null;
  var pick = () => void 0;
  var changedClass = () => void 0;
  var loaded = () => void 0;
  var classSelect = () => byId("classroom");
  function selectedClassroom() {
    return classrooms.find((c) => String(c.id) === classSelect().value) ?? classrooms[0] ?? null;
  }
  function rows() {
    const found = /* @__PURE__ */ new Map();
    for (const skill of skills2?.skills ?? []) for (const s of skill.students) found.set(s.student_id, s.username);
    for (const s of reviews2?.students ?? []) found.set(s.id, s.username);
    return [...found].map(([id, username]) => ({ id, username })).sort((a, b) => a.username.localeCompare(b.username));
  }
  function dueFor(studentId, skill) {
    return reviews2?.students.find((s) => s.id === studentId)?.due.find((r) => r.skill === skill);
  }
  function cell(row2, skill) {
    const mastery2 = skill.students.find((s) => s.student_id === row2.id);
    const due = dueFor(row2.id, skill.skill);
    const mark = due ? h("span", { class: "due-mark", title: reviewText(due) }, t("due_mark")) : null;
    if (!mastery2) {
      return h("td", { class: "cell not-assessed" }, h("span", { class: "value" }, t("none")), h("span", { class: "sr-only" }, t("not_assessed")), mark);
    }
    const b = band(mastery2.estimate);
    return h(
      "td",
      { class: `cell mastery-${b}${due ? " due" : ""}`, "data-estimate": String(mastery2.estimate), title: t(`mastery_${b}`) },
      h("span", { class: "value" }, percent(mastery2.estimate)),
      h("span", { class: "sr-only" }, ` ${t(`mastery_${b}`)}`),
      mark && " ",
      mark
    );
  }
  function studentButton(row2) {
    const button2 = h("button", { type: "button", class: "link" }, row2.username);
    button2.addEventListener("click", () => pick(row2.id));
    return button2;
  }
  function table() {
    const columns = skills2?.skills ?? [];
    return h(
      "table",
      { class: "class-skills" },
      h("caption", {}, t("class_table_caption", { name: skills2?.name ?? "" })),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, t("student")),
          ...columns.map(
            (s) => h("th", { scope: "col" }, s.skill, h("span", { class: "average" }, t("class_average", { value: percent(s.class_average) })))
          )
        )
      ),
      h(
        "tbody",
        {},
        ...rows().map(
          (row2) => h("tr", { "data-student": String(row2.id) }, h("th", { scope: "row" }, studentButton(row2)), ...columns.map((s) => cell(row2, s)))
        )
      )
    );
  }
  function legend() {
    return h(
      "ul",
      { class: "legend", "aria-label": t("legend") },
      ...BANDS.map((b) => h("li", {}, h("span", { class: `swatch mastery-${b}`, "aria-hidden": "true" }), t(`legend_${b}`))),
      h("li", {}, h("span", { class: "due-mark" }, t("due_mark")), " ", t("legend_due"))
    );
  }
  function draw4() {
    const select = classSelect();
    const chosen = select.value;
    select.replaceChildren(...classrooms.map((c) => h("option", { value: String(c.id) }, c.name)));
    if (chosen) select.value = chosen;
    byId("classroom-field").hidden = classrooms.length < 2;
    const hasRows = Boolean(skills2?.skills.length) && rows().length > 0;
    byId("class-empty").textContent = unavailable ? t("class_unavailable") : skills2 && !hasRows ? t("class_no_skills") : "";
    byId("class-table").replaceChildren(...hasRows ? [table()] : []);
    byId("class-table").hidden = !hasRows;
    byId("class-legend").replaceChildren(...hasRows ? [legend()] : []);
    byId("class-ask-part").hidden = !classrooms.length;
    byId(SECTION3).hidden = !classrooms.length && !unavailable;
    const classroom3 = selectedClassroom();
    byId("class-cards").href = classroom3 ? `/app/teacher/classes/${classroom3.id}/cards/` : "";
    byId("class-cards-part").hidden = !classroom3;
  }
  async function loadClass() {
    const classroom3 = selectedClassroom();
    skills2 = null;
    reviews2 = null;
    draw4();
    changedClass(classroom3);
    if (!classroom3) return;
    const [figures, schedule] = await Promise.all([
      api.GET("/api/v1/classrooms/{classroom_id}/skills/", { params: { path: { classroom_id: classroom3.id } } }),
      api.GET("/api/v1/classrooms/{classroom_id}/reviews/", { params: { path: { classroom_id: classroom3.id } } }).then(unwrap).catch((error) => ({ error }))
    ]);
    skills2 = unwrap(figures);
    reviews2 = "error" in schedule ? null : schedule;
    draw4();
    if ("error" in schedule) throw schedule.error;
  }
  async function loadClasses() {
    await sectionAct(SECTION3, null, async () => {
      try {
        classrooms = await every("/classrooms/", 5);
        unavailable = false;
      } catch (error) {
        if (!notServed(error)) throw error;
        classrooms = [];
        unavailable = true;
      }
      draw4();
      loaded();
      await loadClass();
    });
  }
  function classroomList() {
    return classrooms;
  }
  async function chooseClassroom(id) {
    if (!classrooms.some((c) => c.id === id)) return;
    classSelect().value = String(id);
    await sectionAct(SECTION3, null, loadClass);
  }
  function startClasses(onPick, onClass, onList = () => void 0) {
    pick = onPick;
    changedClass = onClass;
    loaded = onList;
  }
  function redrawClasses() {
    draw4();
  }
  function resetClasses() {
    classrooms = [];
    unavailable = false;
    skills2 = null;
    reviews2 = null;
    draw4();
  }
  classSelect().addEventListener("change", () => {
    void sectionAct(SECTION3, null, loadClass);
  });

  // web/src/teacher_transcript.ts
  var SECTION4 = "conversations";
  var PAGE_SIZE2 = 20;
  var MESSAGES = 100;
  var student3 = null;
  var conversations = [];
  var page2 = 1;
  var more = false;
  var open = null;
  function title(conversation) {
    return conversation.subject ? t("conversation_title_subject", { subject: conversation.subject, date: formatDate(conversation.created_at) }) : t("conversation_title", { date: formatDate(conversation.created_at) });
  }
  function item(conversation) {
    const read = h("button", { type: "button", class: "secondary" }, t("read_conversation"));
    read.addEventListener("click", () => void openConversation(conversation.id, read));
    const current2 = open?.conversation.id === conversation.id;
    return h(
      "li",
      { "data-conversation": String(conversation.id), class: current2 ? "current" : "" },
      h("p", { class: "conversation-title" }, title(conversation)),
      h(
        "p",
        { class: "meta" },
        t(`conversation_status_${conversation.status}`),
        " · ",
        t(`message_count_${plural(conversation.message_count)}`, { count: conversation.message_count }),
        conversation.ended_at ? ` · ${t("ended_on", { date: formatDate(conversation.ended_at) })}` : ""
      ),
      read
    );
  }
  function message(m) {
    const who = m.role === "student" ? student3 ? displayName(student3) : t("student") : t("tutor");
    const marked = open?.marked === m.id;
    return h(
      "li",
      { class: `message ${m.role}${marked ? " marked" : ""}`, "data-message": String(m.id) },
      h("span", { class: "who" }, who, " · ", formatDate(m.created_at)),
      h("p", { class: "text" }, m.content)
    );
  }
  function draw5() {
    byId("conversation-count").textContent = conversations.length ? "" : t("no_conversations");
    byId("conversation-list").replaceChildren(...conversations.map(item));
    byId("more-conversations").hidden = !more;
    const panel = byId("transcript");
    panel.hidden = open === null;
    if (!open) return;
    byId("transcript-heading").textContent = title(open.conversation);
    const count2 = open.conversation.message_count;
    byId("transcript-meta").textContent = `${t(`conversation_status_${open.conversation.status}`)} · ${t(`message_count_${plural(count2)}`, { count: count2 })}`;
    byId("transcript-messages").replaceChildren(...open.messages.map(message));
    byId("transcript-empty").textContent = open.messages.length ? "" : t("no_messages");
    byId("older-messages").hidden = open.before === null;
  }
  async function loadPage(next2) {
    if (!student3) return;
    const wanted = next2 ? page2 + 1 : 1;
    const data = unwrap(
      await api.GET("/api/v1/conversations/", {
        params: { query: { student: student3.id, page: wanted, page_size: PAGE_SIZE2 } }
      })
    );
    conversations = next2 ? [...conversations, ...data.results] : data.results;
    page2 = wanted;
    more = Boolean(data.next);
    draw5();
  }
  async function openConversation(id, button2 = null, marked = null) {
    await sectionAct(SECTION4, button2, async () => {
      const data = unwrap(
        await api.GET("/api/v1/conversations/{conversation_id}/", {
          params: { path: { conversation_id: id }, query: { limit: MESSAGES } }
        })
      );
      const { messages, ...conversation } = data;
      open = { conversation, messages: [...messages.results].reverse(), before: messages.next_before, marked };
      draw5();
      const panel = byId("transcript");
      const message2 = marked === null ? null : panel.querySelector(`[data-message="${marked}"]`);
      (message2 ?? panel).scrollIntoView({ block: message2 ? "center" : "start" });
      panel.focus({ preventScroll: true });
    });
  }
  async function loadOlder(button2) {
    const shown = open;
    if (!shown || shown.before === null) return;
    await sectionAct(SECTION4, button2, async () => {
      const data = unwrap(
        await api.GET("/api/v1/conversations/{conversation_id}/messages/", {
          params: { path: { conversation_id: shown.conversation.id }, query: { before: shown.before ?? 0, limit: MESSAGES } }
        })
      );
      shown.messages = [...[...data.results].reverse(), ...shown.messages];
      shown.before = data.next_before;
      draw5();
    });
  }
  async function loadConversations(who) {
    if (who?.id !== student3?.id) open = null;
    student3 = who;
    conversations = [];
    more = false;
    draw5();
    await sectionAct(SECTION4, null, () => loadPage(false));
  }
  function redrawConversations() {
    draw5();
  }
  byId("more-conversations").addEventListener("click", (event) => {
    void sectionAct(SECTION4, event.currentTarget, () => loadPage(true));
  });
  byId("older-messages").addEventListener("click", (event) => {
    void loadOlder(event.currentTarget);
  });
  byId("close-transcript").addEventListener("click", () => {
    const id = open?.conversation.id;
    open = null;
    draw5();
    if (id !== void 0) document.querySelector(`[data-conversation="${id}"] button`)?.focus();
  });

  // web/src/teacher_evidence.ts
  var EXCERPT_CHARS = 240;
  var known = /* @__PURE__ */ new Map();
  function excerpt(text, chars = EXCERPT_CHARS) {
    return text.length > chars ? `${text.slice(0, chars).trimEnd()}…` : text;
  }
  async function fetchEvidence(memories2) {
    const shown = new Set(memories2.map((m) => m.id));
    for (const m of memories2) known.set(m.id, m);
    const missing = [...new Set(memories2.flatMap((m) => m.evidence))].filter((id) => !known.has(id) && !shown.has(id));
    await Promise.all(
      missing.map(async (id) => {
        const result = await api.GET("/api/v1/memories/{memory_id}/", { params: { path: { memory_id: id } } });
        if (result.response.status === 404) known.set(id, null);
        else known.set(id, unwrap(result));
      })
    );
  }
  function forgetEvidence() {
    known.clear();
  }
  function conversationButton2(id) {
    const button2 = h("button", { type: "button", class: "link" }, t("open_conversation", { id }));
    button2.addEventListener("click", () => void openConversation(id, button2));
    return button2;
  }
  function source(id) {
    const memory = known.get(id);
    if (!memory) {
      return h("li", { "data-evidence": String(id) }, h("p", { class: "meta" }, t("evidence_unavailable", { id })));
    }
    return h(
      "li",
      { "data-evidence": String(id) },
      h(
        "p",
        { class: "evidence-title" },
        h("span", { class: "kind" }, t(`kind_${memory.kind}`)),
        " · ",
        h("strong", {}, memory.title)
      ),
      h("p", { class: "evidence-excerpt" }, excerpt(memory.content)),
      h(
        "p",
        { class: "meta" },
        formatDate(memory.created_at),
        memory.status === "active" ? "" : ` · ${t(`status_${memory.status ?? "active"}`)}`,
        memory.source_conversation ? " · " : "",
        memory.source_conversation ? conversationButton2(memory.source_conversation) : ""
      )
    );
  }
  function evidenceList(memory) {
    if (!memory.evidence.length) return null;
    return h(
      "div",
      { class: "evidence" },
      h("p", { class: "evidence-heading" }, t("evidence_heading", { count: memory.evidence.length })),
      h("ul", {}, ...memory.evidence.map(source))
    );
  }

  // web/src/teacher_memories.ts
  var PAGE_SIZE3 = 50;
  var me = null;
  var student4 = null;
  var memories = [];
  var memoriesNext = false;
  var memoriesPage = 1;
  var changed = () => void 0;
  var statusSelect = () => byId("status");
  function announce2(text) {
    byId("action-status").textContent = text;
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
  function correctForm(memory, prefix, done) {
    const id = `${prefix}-${memory.id}`;
    const title2 = h("input", { name: "title", maxlength: "200", required: true });
    title2.value = memory.title;
    const content = h("textarea", { name: "content", rows: "4", required: true });
    content.value = memory.content;
    const visibility = memory.kind === "teacher_note" ? visibilitySelect(memory.visibility ?? "student") : null;
    const submit = h("button", { type: "submit" }, t("save"));
    const form3 = h(
      "form",
      { class: "correct" },
      field(`${id}-title`, "title", title2),
      field(`${id}-content`, "content", content),
      visibility && field(`${id}-visibility`, "visibility", visibility),
      submit
    );
    form3.addEventListener("submit", (event) => {
      event.preventDefault();
      const body = { title: title2.value, content: content.value };
      if (visibility) body.visibility = visibility.value === "teacher_only" ? "teacher_only" : "student";
      void act(submit, async () => {
        unwrap(await api.PATCH("/api/v1/memories/{memory_id}/", { params: { path: { memory_id: memory.id } }, body }));
        await done(t("corrected"));
      });
    });
    return h("details", { class: "action" }, h("summary", {}, t("correct")), form3);
  }
  function archiveForm(memory, prefix, done) {
    const reason = h("input", { name: "reason", maxlength: "300", required: true });
    const submit = h("button", { type: "submit", class: "danger" }, t("archive_confirm"));
    const form3 = h("form", { class: "archive" }, field(`${prefix}-${memory.id}-reason`, "archive_reason", reason), submit);
    form3.addEventListener("submit", (event) => {
      event.preventDefault();
      void act(submit, async () => {
        unwrap(
          await api.POST("/api/v1/memories/{memory_id}/archive/", {
            params: { path: { memory_id: memory.id } },
            body: { reason: reason.value }
          })
        );
        await done(t("archived"));
      });
    });
    return h("details", { class: "action" }, h("summary", {}, t("archive")), form3);
  }
  async function afterChange(text) {
    await loadMemories(student4);
    announce2(text);
    changed();
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
        evidenceList(memory),
        provenance(memory, user),
        memory.source_conversation ? h("p", { class: "source-link" }, conversationButton2(memory.source_conversation)) : null,
        active && correctForm(memory, "correct", afterChange),
        active && archiveForm(memory, "archive", afterChange)
      )
    );
  }
  function draw6() {
    byId("memories-heading").textContent = student4 ? t("teacher_memories_heading", { name: displayName(student4) }) : "";
    byId("memory-count").textContent = memories.length ? "" : t("no_memories");
    byId("memories").replaceChildren(...me ? memories.map((m) => memoryCard(m, me)) : []);
    byId("more-memories").hidden = !memoriesNext;
  }
  async function loadMemories(who, more2 = false) {
    student4 = who;
    if (!who) {
      memories = [];
      draw6();
      return;
    }
    const value = statusSelect().value;
    const status = value === "archived" || value === "all" ? value : "active";
    const page3 = more2 ? memoriesPage + 1 : 1;
    const data = unwrap(
      await api.GET("/api/v1/memories/", {
        params: { query: { student: who.id, status, page: page3, page_size: PAGE_SIZE3 } }
      })
    );
    const shown = more2 ? [...memories, ...data.results] : data.results;
    await fetchEvidence(shown);
    memories = shown;
    memoriesPage = page3;
    memoriesNext = Boolean(data.next);
    draw6();
  }
  function startMemories(user, onChange) {
    me = user;
    changed = onChange;
  }
  function redrawMemories() {
    draw6();
  }
  function resetMemories() {
    me = null;
    student4 = null;
    memories = [];
    memoriesNext = false;
    announce2("");
    draw6();
  }
  statusSelect().addEventListener("change", () => {
    announce2("");
    void act(null, () => loadMemories(student4));
  });
  byId("more-memories").addEventListener("click", (event) => {
    void act(event.currentTarget, () => loadMemories(student4, true));
  });
  byId("note-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form3 = event.currentTarget;
    const title2 = byId("note-title");
    const content = byId("note-content");
    const visibility = byId("note-visibility").value === "student" ? "student" : "teacher_only";
    const who = student4;
    if (!who) return;
    void formAct("note", form3, form3.querySelector("button"), async () => {
      unwrap(
        await api.POST("/api/v1/memories/", {
          body: { student: who.id, title: title2.value, content: content.value, visibility }
        })
      );
      title2.value = "";
      content.value = "";
      await afterChange(t("note_added"));
    });
  });

  // web/src/teacher_review.ts
  var SECTION5 = "review";
  var MAX_PAGES = 10;
  var student5 = null;
  var pending = [];
  var pairs = [];
  var flagged = [];
  var changed2 = () => void 0;
  function buttons(...items) {
    return h("p", { class: "buttons" }, ...items);
  }
  function button(label2, onClick, secondary = false) {
    const node = h("button", { type: "button", class: secondary ? "secondary" : "" }, label2);
    node.addEventListener("click", () => void sectionAct(SECTION5, node, () => onClick(node)));
    return node;
  }
  function cardItem(c) {
    const decide = (verdict) => async () => {
      const params = { path: { change_id: c.id } };
      unwrap(
        verdict === "accept" ? await api.POST("/api/v1/card-changes/{change_id}/accept/", { params }) : await api.POST("/api/v1/card-changes/{change_id}/reject/", { params })
      );
      sectionStatus(SECTION5, t(verdict === "accept" ? "card_accepted" : "card_rejected"));
      changed2("card");
    };
    const facts = [t(`card_source_${c.source}`)];
    if (c.confidence !== null) facts.push(t("confidence_value", { value: percent(c.confidence) }));
    if (c.memory !== null) facts.push(t("proposed_by_memory", { id: c.memory }));
    facts.push(formatDate(c.created_at));
    return h(
      "li",
      { class: "review-item", "data-card-change": String(c.id) },
      h("h3", {}, t("review_card_change", { field: t(`card_${c.field}`) })),
      h("p", {}, t(`card_op_${c.op}`, { value: changeValue(c) })),
      c.reason ? h("p", { class: "reason" }, c.reason) : null,
      h("p", { class: "meta" }, facts.join(" · ")),
      buttons(button(t("card_change_accept"), decide("accept")), button(t("card_change_reject"), decide("reject"), true))
    );
  }
  function side(key, memory) {
    return h(
      "div",
      { class: "side" },
      h("p", { class: "meta" }, `${t(key)} · ${t(`kind_${memory.kind}`)} · ${formatDate(memory.created_at)}`),
      h("p", {}, h("strong", {}, memory.title)),
      h("p", {}, excerpt(memory.content))
    );
  }
  function pairItem(pair) {
    const decide = (verdict) => async () => {
      const params = { path: { review_id: pair.id } };
      unwrap(
        verdict === "apply" ? await api.POST("/api/v1/memory-reviews/{review_id}/apply/", { params }) : await api.POST("/api/v1/memory-reviews/{review_id}/dismiss/", { params })
      );
      sectionStatus(SECTION5, t(verdict === "apply" ? "review_applied" : "review_dismissed"));
      changed2("memories");
    };
    return h(
      "li",
      { class: "review-item", "data-supersession": String(pair.id) },
      h("h3", {}, t("review_supersession")),
      h("div", { class: "pair" }, side("review_older", pair.older), side("review_newer", pair.newer)),
      h("p", { class: "reason" }, pair.reason),
      h("p", { class: "meta" }, t("confidence_value", { value: percent(pair.confidence) })),
      buttons(button(t("review_apply"), decide("apply")), button(t("review_dismiss"), decide("dismiss"), true))
    );
  }
  function flaggedItem(memory) {
    const done = async (text) => {
      sectionStatus(SECTION5, text);
      changed2("memories");
    };
    const confirm = async () => {
      unwrap(
        await api.PATCH("/api/v1/memories/{memory_id}/", {
          params: { path: { memory_id: memory.id } },
          body: { title: memory.title }
        })
      );
      await done(t("review_confirmed"));
    };
    return h(
      "li",
      { class: "review-item", "data-review-memory": String(memory.id) },
      h("h3", {}, t("review_needs_review", { title: memory.title })),
      memory.review_reason ? h("p", { class: "review-reason" }, memory.review_reason) : null,
      h("p", {}, memory.content),
      h("p", { class: "meta" }, `${t(`kind_${memory.kind}`)} · ${t(`source_${memory.source}`)} · ${formatDate(memory.created_at)}`),
      buttons(button(t("review_confirm"), confirm)),
      correctForm(memory, "review-correct", done),
      archiveForm(memory, "review-archive", done)
    );
  }
  function draw7() {
    const items = [...pending.map(cardItem), ...pairs.map(pairItem), ...flagged.map(flaggedItem)];
    byId("review-count").textContent = student5 ? items.length ? t("review_count", { count: items.length }) : t("review_empty") : "";
    byId("review-items").replaceChildren(...items);
  }
  async function flaggedMemories(who) {
    const found = [];
    for (let page3 = 1; page3 <= MAX_PAGES; page3++) {
      const data = unwrap(
        await api.GET("/api/v1/memories/", { params: { query: { student: who.id, status: "active", page: page3, page_size: 100 } } })
      );
      found.push(...data.results.filter((m) => m.needs_review));
      if (!data.next) break;
    }
    return found;
  }
  async function loadReviews(who) {
    if (who?.id !== student5?.id) pending = [];
    student5 = who;
    pairs = [];
    flagged = [];
    draw7();
    if (!who) return;
    await sectionAct(SECTION5, null, async () => {
      const [open3, memories2] = await Promise.all([
        api.GET("/api/v1/memory-reviews/", { params: { query: { student: who.id, status: "open", page_size: 100 } } }),
        flaggedMemories(who)
      ]);
      pairs = unwrap(open3).results;
      flagged = memories2;
      draw7();
    });
  }
  function showCardPending(card2) {
    pending = card2 && card2.student === student5?.id ? card2.pending : [];
    draw7();
  }
  function startReviews(listener) {
    changed2 = listener;
  }
  function redrawReviews() {
    draw7();
  }

  // web/src/teacher_roster.ts
  var SECTION6 = "roster";
  var SVG = "http://www.w3.org/2000/svg";
  var MAX_BARS = 12;
  var BAR = 6;
  var GAP = 2;
  var HEIGHT = 24;
  var classroom = null;
  var roster = null;
  var open2 = () => void 0;
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
    node.append(...children);
    return node;
  }
  function masteryChart(student6) {
    if (!student6.skills.length) return h("span", { class: "not-assessed" }, t("not_assessed"));
    const skills3 = student6.skills.slice(0, MAX_BARS);
    const width = skills3.length * (BAR + GAP) - GAP;
    const average = student6.mastery_average ?? 0;
    const label2 = t(`roster_chart_label_${plural(student6.skills.length)}`, { count: student6.skills.length, average: percent(average) });
    const chart = svg(
      "svg",
      { class: "spark", viewBox: `0 0 ${width} ${HEIGHT}`, width: String(width * 2), height: String(HEIGHT), role: "img", "aria-label": label2 },
      svg("title", {}, label2),
      svg("line", { class: "baseline", x1: "0", y1: String(HEIGHT - 0.5), x2: String(width), y2: String(HEIGHT - 0.5) }),
      ...skills3.map((skill, i) => {
        const height = Math.max(1, Math.round(skill.estimate * HEIGHT));
        return svg(
          "rect",
          {
            class: `bar mastery-${band(skill.estimate)}`,
            x: String(i * (BAR + GAP)),
            y: String(HEIGHT - height),
            width: String(BAR),
            height: String(height),
            "data-skill": skill.skill
          },
          svg("title", {}, `${skill.skill}: ${percent(skill.estimate)}`)
        );
      })
    );
    return h(
      "span",
      { class: "mastery-glance" },
      chart,
      " ",
      h("span", { class: `average mastery-text-${band(average)}` }, percent(average))
    );
  }
  function count(value, zero, some) {
    return h("span", { class: value ? "count some" : "count" }, value ? t(some, { count: value }) : t(zero));
  }
  function row(student6) {
    const name = h("button", { type: "button", class: "link student-name" }, displayName(student6));
    name.addEventListener("click", () => open2(student6.id));
    return h(
      "tr",
      { "data-student": String(student6.id) },
      h("th", { scope: "row", "data-label": t("student") }, name),
      h(
        "td",
        { "data-label": t("roster_last_activity"), "data-field": "last_activity" },
        student6.last_activity_at ? formatDate(student6.last_activity_at) : t("roster_never")
      ),
      h("td", { "data-label": t("roster_flags"), "data-field": "open_flags" }, count(student6.open_flags, "roster_no_flags", "roster_flags_count")),
      h("td", { "data-label": t("roster_reviews"), "data-field": "reviews_due" }, count(student6.reviews_due, "roster_no_reviews", "roster_reviews_count")),
      h("td", { "data-label": t("roster_mastery"), "data-field": "mastery" }, masteryChart(student6))
    );
  }
  function table2(data) {
    const headers2 = ["student", "roster_last_activity", "roster_flags", "roster_reviews", "roster_mastery"];
    return h(
      "table",
      { class: "roster" },
      h("caption", {}, t(`roster_caption_${plural(data.students.length)}`, { name: data.name, count: data.students.length })),
      h("thead", {}, h("tr", {}, ...headers2.map((key) => h("th", { scope: "col" }, t(key))))),
      h("tbody", {}, ...data.students.map(row))
    );
  }
  function draw8() {
    const data = roster;
    const has = Boolean(data?.students.length);
    byId("roster-empty").textContent = !classroom ? t("no_classes") : data && !has ? t("roster_empty") : "";
    byId("roster").replaceChildren(...data && has ? [table2(data)] : []);
    byId("homework").hidden = !classroom;
    const teachers = data?.teachers.map((p) => displayName(p)) ?? [];
    byId("overview-heading").textContent = data ? t("overview_heading", { name: data.name }) : t("class_heading");
    byId("overview-heading").title = teachers.length ? t("roster_teachers", { names: teachers.join(", ") }) : "";
  }
  async function loadRoster(chosen) {
    classroom = chosen;
    roster = null;
    draw8();
    if (!chosen) return;
    await sectionAct(SECTION6, null, async () => {
      const data = unwrap(await api.GET("/api/v1/classrooms/{classroom_id}/roster/", { params: { path: { classroom_id: chosen.id } } }));
      if (classroom?.id !== chosen.id) return;
      roster = data;
      draw8();
    });
  }
  function startRoster(onOpen) {
    open2 = onOpen;
  }
  function redrawRoster() {
    draw8();
  }
  function resetRoster() {
    classroom = null;
    roster = null;
    sectionStatus(SECTION6, "");
    draw8();
  }
  var form2 = byId("homework-form");
  form2.addEventListener("submit", (event) => {
    event.preventDefault();
    const target = classroom;
    if (!target) return;
    const value = (name) => form2.elements.namedItem(name).value;
    const due = value("due_at");
    sectionStatus("homework", "");
    void formAct("homework", form2, form2.querySelector("button"), async () => {
      const task = unwrap(
        await api.POST("/api/v1/tasks/", {
          body: {
            classroom: target.id,
            title: value("title"),
            instructions: value("instructions"),
            subject: value("subject"),
            due_at: due ? new Date(due).toISOString() : null
          }
        })
      );
      form2.reset();
      sectionStatus("homework", t("homework_done", { title: task.title, name: target.name }));
    });
  });

  // web/src/teacher_routes.ts
  var SECTIONS = ["ask", "card", "review", "learning", "conversations", "note", "memories"];
  var SECTION_IDS = {
    ask: "ask",
    card: "card",
    review: "review",
    learning: "learning",
    conversations: "conversations",
    note: "note",
    memories: "memories-section"
  };
  function parseRoute(hash) {
    const student6 = /^#student\/(\d+)(?:\/([a-z]+))?$/.exec(hash);
    if (student6) {
      const section = SECTIONS.find((s) => s === student6[2]) ?? null;
      return { view: "student", student: Number(student6[1]), section };
    }
    if (hash === "#school") return { view: "school" };
    return { view: "overview" };
  }
  function routeHash(route2) {
    if (route2.view === "student") return `#student/${route2.student}${route2.section ? `/${route2.section}` : ""}`;
    return `#${route2.view}`;
  }
  var show = async () => void 0;
  function onRoute(apply) {
    show = apply;
  }
  async function go(route2) {
    const hash = routeHash(route2);
    if (window.location.hash !== hash) window.history.pushState(null, "", hash);
    await show();
  }
  function currentRoute() {
    return parseRoute(window.location.hash);
  }

  // web/src/teacher_school.ts
  function classesTable() {
    const classes = classroomList();
    if (!classes.length) return h("p", {}, t("school_no_classes"));
    return h(
      "table",
      { class: "school-classes" },
      h("caption", {}, t("school_classes_caption", { count: classes.length })),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("classroom")))),
      h(
        "tbody",
        {},
        ...classes.map((c) => {
          const open3 = h("button", { type: "button", class: "link" }, c.name);
          open3.addEventListener("click", () => {
            void chooseClassroom(c.id);
            void go({ view: "overview" });
          });
          return h("tr", { "data-classroom": String(c.id) }, h("th", { scope: "row" }, open3));
        })
      )
    );
  }
  function draw9() {
    byId("school-classes").replaceChildren(classesTable());
  }
  function redrawSchool() {
    draw9();
  }
  function resetSchool() {
    byId("school-classes").replaceChildren();
  }

  // web/src/teacher.ts
  var me2 = null;
  var students = [];
  var classroom2 = null;
  var loaded2 = null;
  var route = { view: "overview" };
  var studentSelect = () => byId("student");
  var isAdministrator = () => me2?.role === "administrator";
  function selectedStudent() {
    return students.find((s) => String(s.id) === studentSelect().value) ?? null;
  }
  function nameOf(id) {
    const student6 = students.find((s) => s.id === id);
    return student6 ? displayName(student6) : t("student_number", { id });
  }
  function drawStudents() {
    const select = studentSelect();
    const chosen = select.value;
    select.replaceChildren(...students.map((s) => h("option", { value: String(s.id) }, displayName(s))));
    if (chosen) select.value = chosen;
  }
  function drawStudentHead() {
    const student6 = selectedStudent();
    byId("students-heading").textContent = student6 ? displayName(student6) : "";
    const current2 = route.view === "student" ? route.section : null;
    for (const link of byId("section-nav").querySelectorAll("a[data-section]")) {
      const section = link.dataset.section;
      if (student6) link.href = routeHash({ view: "student", student: student6.id, section });
      if (section === current2) link.setAttribute("aria-current", "location");
      else link.removeAttribute("aria-current");
    }
  }
  function drawViews() {
    const view2 = route.view;
    byId("overview-view").hidden = view2 !== "overview";
    byId("student-view").hidden = view2 !== "student";
    byId("school-view").hidden = view2 !== "school";
    byId("views").hidden = !isAdministrator();
    for (const link of byId("views").querySelectorAll("a[data-view]")) {
      if (link.dataset.view === view2) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    drawStudentHead();
  }
  async function loadStudents() {
    const all = [];
    for (let page3 = 1; ; page3++) {
      const data = unwrap(await api.GET("/api/v1/students/", { params: { query: { page: page3, page_size: 100 } } }));
      all.push(...data.results);
      if (!data.next) break;
    }
    students = all;
    drawStudents();
  }
  var studentAsk = askBox(
    "student-ask",
    () => {
      const student6 = selectedStudent();
      return student6 ? { path: `/students/${student6.id}/ask/`, label: t("ask_about_student", { name: displayName(student6) }) } : null;
    },
    nameOf
  );
  var classAsk = askBox(
    "class-ask",
    () => classroom2 ? { path: `/classrooms/${classroom2.id}/ask/`, label: t("ask_about_class", { name: classroom2.name }) } : null,
    nameOf,
    (id) => void go({ view: "student", student: id, section: null })
  );
  async function loadStudent() {
    const student6 = selectedStudent();
    loaded2 = student6?.id ?? null;
    studentAsk.clear();
    byId("action-status").textContent = "";
    await Promise.all([
      act(null, () => loadMemories(student6)),
      loadReviews(student6),
      loadCard(student6),
      loadLearning(student6),
      loadConversations(student6)
    ]);
  }
  function scrollToRoute() {
    if (route.view !== "student" || !route.section) {
      window.scrollTo({ top: 0 });
      return;
    }
    const target = byId(SECTION_IDS[route.section]);
    const nav = byId("section-nav").getBoundingClientRect().height;
    window.scrollTo({ top: target.getBoundingClientRect().top + window.scrollY - nav - 8 });
  }
  async function applyRoute() {
    const before = route;
    route = !window.location.hash && isAdministrator() ? { view: "school" } : currentRoute();
    if (route.view === "school" && !isAdministrator()) route = { view: "overview" };
    if (route.view === "student") {
      const id = route.student;
      if (students.some((s) => s.id === id)) studentSelect().value = String(id);
      else route = { view: "overview" };
    }
    drawViews();
    const moved = route.view !== before.view || route.view === "student";
    if (moved) scrollToRoute();
    if (route.view === "student" && selectedStudent()?.id !== loaded2) {
      await loadStudent();
      scrollToRoute();
    }
  }
  onRoute(applyRoute);
  window.addEventListener("popstate", () => void applyRoute());
  window.addEventListener("hashchange", () => void applyRoute());
  document.addEventListener("click", (event) => {
    const link = event.target?.closest?.("a[href^='#']");
    if (!(link instanceof HTMLAnchorElement) || !link.closest("#views, #section-nav, .student-head")) return;
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    void go(parseRoute(link.getAttribute("href") ?? ""));
  });
  onReadConversation((flag) => {
    if (flag.conversation === null || flag.conversation === void 0) return;
    const conversation = flag.conversation;
    void (async () => {
      await go({ view: "student", student: flag.student.id, section: "conversations" });
      await openConversation(conversation, null, flag.message ?? null);
    })();
  });
  startCard(showCardPending);
  startReviews((what) => {
    if (what === "card") void reloadCard();
    else void Promise.all([act(null, () => loadMemories(selectedStudent())), loadReviews(selectedStudent())]);
  });
  startRoster((id) => void go({ view: "student", student: id, section: null }));
  startClasses(
    (id) => void go({ view: "student", student: id, section: null }),
    (chosen) => {
      classroom2 = chosen;
      classAsk.clear();
      void loadRoster(chosen);
    },
    redrawSchool
  );
  studentSelect().addEventListener("change", () => {
    const id = Number(studentSelect().value);
    void go({ view: "student", student: id, section: route.view === "student" ? route.section : null });
  });
  void run({
    roles: ["teacher", "administrator"],
    async start(user) {
      me2 = user;
      startMemories(user, () => void loadReviews(selectedStudent()));
      drawViews();
      await Promise.all([loadFlags(), loadStudents().then(applyRoute), loadClasses()]);
      if (launched.classroom !== null) await chooseClassroom(launched.classroom);
    },
    redraw() {
      redrawFlags();
      drawStudents();
      drawViews();
      redrawClasses();
      redrawRoster();
      redrawSchool();
      classAsk.redraw();
      studentAsk.redraw();
      redrawCard();
      redrawReviews();
      redrawLearning();
      redrawConversations();
      redrawMemories();
    },
    reset() {
      me2 = null;
      students = [];
      classroom2 = null;
      loaded2 = null;
      showError(null);
      resetFlags();
      resetClasses();
      resetRoster();
      resetSchool();
      resetMemories();
      forgetEvidence();
      drawStudents();
      drawViews();
      classAsk.clear();
      studentAsk.clear();
      void loadStudent();
    }
  });
})();
