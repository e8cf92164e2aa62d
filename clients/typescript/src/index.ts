/**
 * A typed client for the Tutor API.
 *
 * `createClient` is openapi-fetch over the types generated from the server's OpenAPI schema
 * (`schema.d.ts`, written by `npm run generate` from `openapi.yaml`), signed in either with a
 * token (mobile apps, scripts) or with a Django session (a web page on the same origin), in
 * which case every write carries the `X-CSRFToken` header the server requires.
 * `turnStream` sends a chat message with `Accept: text/event-stream` and yields the turn's
 * Server-Sent Events as typed `TurnEvent`s. Errors are thrown as `ApiError`, built from the
 * envelope every error answers with: its `message` is already in the user's language.
 */
import createFetchClient, { type Client, type ClientOptions, type Middleware } from "openapi-fetch";

import { TURN_EVENT_NAMES } from "./events";
import type { components, paths } from "./schema";

export type { components, paths };
export type Schemas = components["schemas"];
export type TutorClient = Client<paths>;

export type User = Schemas["UserOutput"];
export type Language = Schemas["LanguageEnum"];
export type Conversation = Schemas["ConversationOutput"];
export type ConversationDetail = Schemas["ConversationDetailOutput"];
export type Message = Schemas["MessageOutput"];
export type Memory = Schemas["MemoryOutput"];
export type ErrorEnvelope = Schemas["ErrorEnvelope"];
export type Flag = Schemas["FlagOutput"];
export type FlagDetail = Schemas["FlagDetailOutput"];

// The turn's events: the schema's TurnEvent, a oneOf discriminated by `event`.
export type TurnEvent = Schemas["TurnEvent"];
export type MessageEvent = Extract<TurnEvent, { event: "message" }>;
export type DeltaEvent = Extract<TurnEvent, { event: "delta" }>;
export type MemoryEvent = Extract<TurnEvent, { event: "memory" }>;
export type QuizEvent = Extract<TurnEvent, { event: "quiz" }>;
export type DoneEvent = Extract<TurnEvent, { event: "done" }>;
export type ErrorEvent = Extract<TurnEvent, { event: "error" }>;
export type TurnEventName = TurnEvent["event"];
export { TURN_EVENT_NAMES };

// Both come from the schema (events.ts from its TurnEvent discriminator, TurnEvent from its
// oneOf): the type check fails if they ever disagree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const namesMatchTheEvents: Same<(typeof TURN_EVENT_NAMES)[number], TurnEventName> = true;
void namesMatchTheEvents;

const KNOWN_EVENTS: ReadonlySet<string> = new Set<TurnEventName>(TURN_EVENT_NAMES);

/** An error answered by the API (the envelope), or an answer that is not one (`code` "http_<status>"). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: unknown;
  readonly retrySafe: boolean;

  constructor(status: number, body: unknown) {
    const error = isEnvelope(body) ? body.error : undefined;
    super(error?.message ?? `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = error?.code ?? `http_${status}`;
    this.details = error?.details ?? {};
    this.retrySafe = error?.retry_safe ?? false;
  }

  /** True when the server sent the envelope, whose message is meant for the user. */
  get fromServer(): boolean {
    return !this.code.startsWith("http_");
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== "object" || body === null || !("error" in body)) return false;
  const error = (body as { error: unknown }).error;
  return typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string";
}

/** Token: `Authorization: Token <token>`. Session: the browser's cookies, and the CSRF token
 * (by default the `csrftoken` cookie's value) in `X-CSRFToken` on every write. */
export type Auth = { token: string } | { session: true; csrfToken?: () => string | null };

export interface TutorClientOptions {
  /** The server's origin, e.g. "https://tutor.example.org"; "" (the default) for the page's own. */
  baseUrl?: string;
  auth?: Auth;
  /** "include" for a session on another origin (the server must allow it: CORS_ALLOW_CREDENTIALS). */
  credentials?: RequestCredentials;
  fetch?: ClientOptions["fetch"];
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function cookie(name: string): string | null {
  if (typeof document === "undefined") return null;
  for (const part of document.cookie.split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return null;
}

export function createClient(options: TutorClientOptions = {}): TutorClient {
  const auth = options.auth;
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl ?? "",
    credentials: options.credentials ?? "same-origin",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const authenticate: Middleware = {
    onRequest({ request }) {
      if (auth && "token" in auth) {
        request.headers.set("Authorization", `Token ${auth.token}`);
      } else if (auth && !SAFE_METHODS.has(request.method)) {
        const csrf = (auth.csrfToken ?? (() => cookie("csrftoken")))();
        if (csrf) request.headers.set("X-CSRFToken", csrf);
      }
      return request;
    },
  };
  client.use(authenticate);
  return client;
}

/** The data of an openapi-fetch answer, or its error thrown as an ApiError. */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    throw new ApiError(result.response.status, result.error);
  }
  return result.data as T;
}

/** A fresh `client_message_id`. Random, without `crypto.randomUUID` (secure contexts only). */
export function newClientMessageId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Send a student message and follow the turn as Server-Sent Events: `message` (the stored
 * student message), `delta`* (chunks of the reply), `memory`* (notes the tutor saved), `quiz`*
 * (quizzes the tutor made, without their answers), then `done` (the stored reply) or `error`
 * (the envelope, with `retry_safe`): every event of the schema (`TURN_EVENT_NAMES`). An error
 * before the stream starts (validation, not found, throttled...) is thrown as an ApiError. Sending again
 * with the same `client_message_id` never stores the message twice nor asks the model twice.
 */
export async function* turnStream(
  client: TutorClient,
  conversationId: number,
  body: Schemas["MessagesInputRequest"],
  init: { signal?: AbortSignal } = {},
): AsyncGenerator<TurnEvent, void, undefined> {
  const result = await client.POST("/api/v1/conversations/{conversation_id}/messages/", {
    params: { path: { conversation_id: conversationId } },
    body,
    headers: { Accept: "text/event-stream" },
    parseAs: "stream",
    ...(init.signal ? { signal: init.signal } : {}),
  });
  // With parseAs "stream" the data is the body itself, whatever the schema says it carries.
  const stream = unwrap(result) as unknown as ReadableStream<Uint8Array> | null;
  if (!stream) throw new ApiError(result.response.status, undefined);
  yield* readTurnEvents(stream);
}

/** The turn's events from a `text/event-stream` body. Every event the schema names is yielded;
 * events a newer server may add that this client's schema does not name are skipped. */
export async function* readTurnEvents(stream: ReadableStream<Uint8Array>): AsyncGenerator<TurnEvent, void, undefined> {
  for await (const { event, data } of readServerSentEvents(stream)) {
    if (KNOWN_EVENTS.has(event)) yield { event, data } as TurnEvent;
  }
}

/** The events of any `text/event-stream` body of this API (the SSE format: `event:` and `data:`
 * lines, a blank line after each event; `data` is JSON), in order; comments are skipped. */
export async function* readServerSentEvents(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<{ event: string; data: unknown }, void, undefined> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "message";
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value, { stream: !done });
      if (done) buffer += "\n\n"; // a last event without its blank line still counts
      let newline: number;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        if (!done && newline === buffer.length - 1 && buffer.endsWith("\r")) break; // maybe half of \r\n
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
        if (line === "") {
          if (data.length) yield { event, data: JSON.parse(data.join("\n")) as unknown };
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
    // Also when the caller stops early: the connection closes (the server finishes the work).
    await reader.cancel().catch(() => undefined);
  }
}
