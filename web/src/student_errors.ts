/**
 * Errors in words for a student. The server's message is meant for the user for a refused
 * request (a message too long, a conversation ended), but for the tutor being down it speaks to
 * the operator ("No language model is configured. Set LLM_API_KEY…"): those codes, and any
 * server failure, get a text of ours instead. A chat message that failed is kept on the page,
 * to be sent again with the same client_message_id (`canRetry`).
 */
import { ApiError } from "../../clients/typescript/src/index";
import { formatDate, t } from "./i18n";

/** A turn's stream that ended without `done` or `error` (the connection dropped). */
export class StreamCut extends Error {
  constructor() {
    super("the reply's stream ended early");
    this.name = "StreamCut";
  }
}

// The tutor (or the server) is down or unset: nothing the student can do but wait.
const UNAVAILABLE = new Set([
  "model_not_configured",
  "model_unavailable",
  "model_bad_response",
  "turn_failed",
  "service_unavailable",
  "server_shutting_down",
  "database_unavailable",
]);

/**
 * The student's text for `error`, or null to keep the default (the server's own message for a
 * refused request). `kept`: the error answers a chat message that stays on the page.
 */
export function studentErrorText(error: unknown, kept = false): string | null {
  if (error instanceof StreamCut) return t("student_error_cut");
  if (error instanceof TypeError) return t(kept ? "student_error_network_kept" : "error_network");
  if (!(error instanceof ApiError)) return null;
  if (error.code === "budget_exceeded") {
    const details = error.details as { resets_at?: unknown };
    const date = typeof details.resets_at === "string" ? formatDate(details.resets_at) : t("student_later");
    return t("student_error_budget", { date });
  }
  // A refused sign-in's message says how long to wait: kept, as other refusals.
  if (error.code === "throttled") return kept ? t("student_error_throttled_kept") : null;
  if (error.code === "conversation_busy") return t("student_error_busy");
  if (UNAVAILABLE.has(error.code) || error.status >= 500) {
    return t(kept ? "student_error_unavailable_kept" : "student_error_unavailable");
  }
  return null;
}

/** Whether sending the same message again (same client_message_id) is safe and may succeed. */
export function canRetry(error: unknown): boolean {
  if (error instanceof StreamCut || error instanceof TypeError) return true;
  return error instanceof ApiError && (error.retrySafe || UNAVAILABLE.has(error.code) || error.status >= 500);
}
