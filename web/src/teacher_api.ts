/**
 * The teacher page's types for the endpoints of issue 24 (the student card, the review schedule,
 * questions about a student or a class), from the generated schema, and the two calls the typed
 * client does not make: the list of one's classrooms (GET /classrooms/) and a question followed
 * as Server-Sent Events. Errors are thrown as the client's `ApiError` (the envelope's message, in
 * the user's language), like `unwrap`; the CSRF token goes with every write, as the client sends it.
 */
import { ApiError, cookie, readServerSentEvents, type Schemas } from "../../clients/typescript/src/index";
import { tokenAuthorization } from "./common";

export type CardField = Schemas["CardFieldEnum"];
export type CardListField = "goals" | "accommodations" | "interests";
export type StudentEditable = Schemas["CardEditableFieldEnum"];
export const STUDENT_EDITABLE: StudentEditable[] = ["goals", "interests", "level", "register"];
export type CardChange = Schemas["CardChangeOutput"];
export type StudentCard = Schemas["StudentCardOutput"];
export type CardPatch = Schemas["PatchedStudentCardInputRequest"];
export type Review = Schemas["ReviewOutput"];
export type StudentReviews = Schemas["StudentReviewsOutput"];
export type ClassReviews = Schemas["ClassroomReviewsOutput"];
export type Citation = Schemas["CitationOutput"];
export type Answer = Schemas["AskAnswerOutput"];

export interface Classroom {
  id: number;
  name: string;
}

interface Page<T> {
  next: string | null;
  results: T[];
}

const WRITES = new Set(["POST", "PATCH", "PUT", "DELETE"]);

function headers(method: string, accept = "application/json"): Headers {
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

async function failure(response: Response): Promise<ApiError> {
  const body: unknown = await response.json().catch(() => undefined);
  return new ApiError(response.status, body);
}

/** GET `/api/v1<path>`: its JSON body, or its error thrown as an ApiError. */
async function get<T>(path: string): Promise<T> {
  const response = await fetch(`/api/v1${path}`, { headers: headers("GET"), credentials: "same-origin" });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** Every page of a paginated list (`?page=`), at most `maxPages` of 100. */
export async function every<T>(path: string, maxPages = 20): Promise<T[]> {
  const items: T[] = [];
  const join = path.includes("?") ? "&" : "?";
  for (let page = 1; page <= maxPages; page++) {
    const data = await get<Page<T>>(`${path}${join}page=${page}&page_size=100`);
    items.push(...data.results);
    if (!data.next) break;
  }
  return items;
}

export type AskEvent = { event: "delta"; text: string } | { event: "answer"; answer: Answer };

/**
 * Ask a question (`/students/{id}/ask/` or `/classrooms/{id}/ask/`) and follow the answer as
 * Server-Sent Events: `delta` (text as it streams), then `answer` (the checked answer). An
 * `error` event, or an error before the stream starts, is thrown as an ApiError.
 */
export async function* askStream(path: string, question: string): AsyncGenerator<AskEvent, void, undefined> {
  const response = await fetch(`/api/v1${path}`, {
    method: "POST",
    headers: headers("POST", "text/event-stream"),
    credentials: "same-origin",
    body: JSON.stringify({ question }),
  });
  if (!response.ok) throw await failure(response);
  if (!(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
    // A server answering in JSON all the same: the checked answer at once.
    yield { event: "answer", answer: (await response.json()) as Answer };
    return;
  }
  if (!response.body) throw new ApiError(response.status, undefined);
  for await (const { event, data } of readServerSentEvents(response.body)) {
    if (event === "delta") yield { event, text: String((data as { text?: unknown }).text ?? "") };
    else if (event === "answer") yield { event, answer: data as Answer };
    else if (event === "error") throw new ApiError(502, data);
  }
}
