/**
 * The evidence behind a fact, an approach or a merge (`AIMemory.evidence`: the ids of the
 * memories it was drawn from), shown under it: each source memory's kind, title, an excerpt,
 * its date and the conversation it came from, which opens that conversation's transcript.
 * Source memories are read once each (GET /memories/{id}/, archived and superseded ones too);
 * one the teacher can no longer read is shown as such.
 */
import { type Memory, unwrap } from "../../clients/typescript/src/index";
import { api, h } from "./common";
import { formatDate, t } from "./i18n";
import { openConversation } from "./teacher_transcript";

const EXCERPT_CHARS = 240;
const known = new Map<number, Memory | null>();

export function excerpt(text: string, chars = EXCERPT_CHARS): string {
  return text.length > chars ? `${text.slice(0, chars).trimEnd()}…` : text;
}

/** Read the source memories of `memories` not read yet. */
export async function fetchEvidence(memories: readonly Memory[]): Promise<void> {
  const shown = new Set(memories.map((m) => m.id));
  for (const m of memories) known.set(m.id, m);
  const missing = [...new Set(memories.flatMap((m) => m.evidence))].filter((id) => !known.has(id) && !shown.has(id));
  await Promise.all(
    missing.map(async (id) => {
      const result = await api.GET("/api/v1/memories/{memory_id}/", { params: { path: { memory_id: id } } });
      if (result.response.status === 404) known.set(id, null);
      else known.set(id, unwrap(result));
    }),
  );
}

export function forgetEvidence(): void {
  known.clear();
}

/** A button opening a conversation's transcript. */
export function conversationButton(id: number): HTMLElement {
  const button = h("button", { type: "button", class: "link" }, t("open_conversation", { id })) as HTMLButtonElement;
  button.addEventListener("click", () => void openConversation(id, button));
  return button;
}

function source(id: number): HTMLElement {
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
      h("strong", {}, memory.title),
    ),
    h("p", { class: "evidence-excerpt" }, excerpt(memory.content)),
    h(
      "p",
      { class: "meta" },
      formatDate(memory.created_at),
      memory.status === "active" ? "" : ` · ${t(`status_${memory.status ?? "active"}`)}`,
      memory.source_conversation ? " · " : "",
      memory.source_conversation ? conversationButton(memory.source_conversation) : "",
    ),
  );
}

/** The evidence under a memory, or nothing when it cites none. */
export function evidenceList(memory: Memory): HTMLElement | null {
  if (!memory.evidence.length) return null;
  return h(
    "div",
    { class: "evidence" },
    h("p", { class: "evidence-heading" }, t("evidence_heading", { count: memory.evidence.length })),
    h("ul", {}, ...memory.evidence.map(source)),
  );
}
