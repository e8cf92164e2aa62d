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
  function h(tag, attrs = {}, ...children2) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === true) node.setAttribute(name, "");
      else if (value !== false) node.setAttribute(name, value);
    }
    for (const child2 of children2) {
      if (child2 !== null && child2 !== void 0 && child2 !== false) node.append(child2);
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
      if (!page.roles.includes(user.role ?? "student")) {
        wrongPage.hidden = false;
        return;
      }
      app.hidden = false;
      await page.start(user);
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
    if (page.signInWithCode) {
      byId("code-form").addEventListener("submit", (event) => {
        event.preventDefault();
        const form = event.currentTarget;
        const input = byId("sign-in-code");
        void act(form.querySelector("button"), async () => {
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
      const code = page.signInWithCode ? takeFromAddress("code") : null;
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
    const next = window.location.pathname + window.location.hash;
    list.replaceChildren(
      ...providers.map((provider) => {
        const name = schools.size > 1 ? t("sso_sign_in_school", { name: provider.name, school: provider.school_name }) : t("sso_sign_in", { name: provider.name });
        const href = `${provider.login_url}?${new URLSearchParams({ next }).toString()}`;
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

  // web/src/guardian.ts
  var children = [];
  var child = null;
  var memories = [];
  var skills = [];
  var quizzes = [];
  var requests = [];
  function draw() {
    const select = byId("child");
    select.replaceChildren(
      ...children.map((c) => h("option", { value: String(c.id), selected: c.id === child }, c.first_name || c.username))
    );
    byId("children-empty").hidden = children.length > 0;
    const exportLink = byId("export");
    exportLink.hidden = child === null;
    if (child !== null) exportLink.href = `/api/v1/students/${child}/export/`;
    byId("guardian-memories").replaceChildren(
      ...memories.map(
        (m) => h(
          "li",
          { class: `memory kind-${m.kind}`, "data-memory": String(m.id) },
          h("h3", {}, m.title),
          h("p", {}, m.content),
          h("p", { class: "meta" }, label(`kind_${m.kind}`), ` · ${formatDate(m.created_at)}`)
        )
      )
    );
    byId("guardian-memories-empty").hidden = memories.length > 0;
    byId("guardian-skills").replaceChildren(
      ...skills.map((s) => h("li", { class: "skill" }, `${s.skill}: ${Math.round(s.estimate * 100)}%`))
    );
    byId("guardian-skills-empty").hidden = skills.length > 0;
    byId("guardian-quizzes").replaceChildren(
      ...quizzes.map((q) => h("li", { class: "quiz" }, `${q.topic} · ${formatDate(q.created_at)}`))
    );
    byId("erasure-requests").replaceChildren(
      ...requests.filter((r) => r.student === child || r.student === null).map(
        (r) => h(
          "li",
          { class: `erasure-request status-${r.status}` },
          `${formatDate(r.requested_at)} · ${t(`guardian_erasure_${r.status}`)}`,
          r.decision_reason ? ` · ${r.decision_reason}` : ""
        )
      )
    );
  }
  async function loadChild() {
    if (child === null) {
      memories = [];
      skills = [];
      quizzes = [];
    } else {
      const query = { student: child, page_size: 100 };
      const [m, s, q] = await Promise.all([
        api.GET("/api/v1/memories/", { params: { query } }),
        api.GET("/api/v1/students/{student_id}/skills/", { params: { path: { student_id: child } } }),
        api.GET("/api/v1/quizzes/", { params: { query } })
      ]);
      memories = unwrap(m).results;
      skills = unwrap(s);
      quizzes = unwrap(q).results;
    }
    requests = unwrap(await api.GET("/api/v1/erasure-requests/", {})).results;
    draw();
  }
  byId("child").addEventListener("change", (event) => {
    child = Number(event.target.value);
    loadChild().catch(showError);
  });
  byId("erasure-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.target;
    const reason = byId("erasure-reason");
    void act(form.querySelector("button"), async () => {
      if (child === null) return;
      unwrap(
        await api.POST("/api/v1/students/{student_id}/erasure-requests/", {
          params: { path: { student_id: child } },
          body: { reason: reason.value }
        })
      );
      reason.value = "";
      await loadChild();
    });
  });
  void run({
    roles: ["guardian"],
    async start() {
      children = unwrap(await api.GET("/api/v1/students/", { params: { query: { page_size: 100 } } })).results;
      child = children[0]?.id ?? null;
      await loadChild();
    },
    redraw: draw,
    reset() {
      children = [];
      child = null;
      memories = [];
      skills = [];
      quizzes = [];
      requests = [];
    }
  });
})();
