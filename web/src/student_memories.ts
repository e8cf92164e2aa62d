/**
 * What the tutor remembers, as the student may see it (GET /memories/): each memory with its
 * kind and where it came from in words, and, after a conversation ends, the wait for its
 * summary (the worker writes it; the list is read again until it is there).
 */
import { type Memory, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h, label } from "./common";
import { formatDate, t } from "./i18n";

const SUMMARY_POLL_MS = 1500;
const SUMMARY_WAIT_MS = 120_000;
const PAGE_SIZE = 50;

let memories: Memory[] = [];
let memoriesNext = false;
let memoriesPage = 1;
let summaryWatch = 0;

function draw(): void {
  byId("memories").replaceChildren(
    ...memories.map((memory) =>
      h(
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
          ` · ${formatDate(memory.created_at)}`,
        ),
      ),
    ),
  );
  byId("memories-empty").hidden = memories.length > 0;
  byId("more-memories").hidden = !memoriesNext;
}

export async function loadMemories(more = false): Promise<void> {
  const page = more ? memoriesPage + 1 : 1;
  const data = unwrap(await api.GET("/api/v1/memories/", { params: { query: { page, page_size: PAGE_SIZE } } }));
  memories = more ? [...memories, ...data.results] : data.results;
  memoriesPage = page;
  memoriesNext = Boolean(data.next);
  draw();
}

/** A note the tutor saved during the turn: first in the list. */
export function memoryAdded(memory: Memory): void {
  memories = [memory, ...memories.filter((m) => m.id !== memory.id)];
  draw();
}

/** After an end: read the memories again until the conversation's summary is there. */
export function watchForSummary(conversationId: number): void {
  const status = byId("memories-status");
  const watch = ++summaryWatch;
  const deadline = Date.now() + SUMMARY_WAIT_MS;
  status.textContent = t("summary_pending");
  const poll = async (): Promise<void> => {
    if (watch !== summaryWatch) return;
    try {
      await loadMemories();
    } catch {
      // A failed poll is retried below; the page's error region stays for the user's actions.
    }
    if (watch !== summaryWatch) return;
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

export function redrawMemories(): void {
  draw();
}

export function resetMemories(): void {
  memories = [];
  memoriesNext = false;
  summaryWatch++;
  byId("memories-status").textContent = "";
  draw();
}

byId<HTMLButtonElement>("refresh-memories").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadMemories());
});

byId<HTMLButtonElement>("more-memories").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadMemories(true));
});
