/**
 * The student's memories (GET /memories/?student=&status=), each with where it came from, the
 * evidence behind it (./teacher_evidence) and a link to its conversation; a teacher corrects one
 * (PATCH), archives one with a reason, and adds a note (teachers only, or shared with the student).
 */
import { type Memory, type Schemas, type User, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, displayName, h, provenance } from "./common";
import { t } from "./i18n";
import { conversationButton, evidenceList, fetchEvidence } from "./teacher_evidence";
import { field, formAct } from "./teacher_ui";

type Status = "active" | "archived" | "all";
const PAGE_SIZE = 50;

let me: User | null = null;
let student: User | null = null;
let memories: Memory[] = [];
let memoriesNext = false;
let memoriesPage = 1;
/** Called after a memory changed here (the review queue shows some of the same memories). */
let changed: () => void = () => undefined;

const statusSelect = () => byId<HTMLSelectElement>("status");

function announce(text: string): void {
  byId("action-status").textContent = text;
}

function visibilitySelect(value: string): HTMLSelectElement {
  const select = h(
    "select",
    { name: "visibility" },
    h("option", { value: "teacher_only" }, t("visibility_teacher_only")),
    h("option", { value: "student" }, t("visibility_student")),
  ) as HTMLSelectElement;
  select.value = value;
  return select;
}

/** The correction form, inside a <details> that opens it; `prefix` keeps its ids unique on the page. */
export function correctForm(memory: Memory, prefix: string, done: (text: string) => Promise<void>): HTMLElement {
  const id = `${prefix}-${memory.id}`;
  const title = h("input", { name: "title", maxlength: "200", required: true }) as HTMLInputElement;
  title.value = memory.title;
  const content = h("textarea", { name: "content", rows: "4", required: true }) as HTMLTextAreaElement;
  content.value = memory.content;
  const visibility = memory.kind === "teacher_note" ? visibilitySelect(memory.visibility ?? "student") : null;
  const submit = h("button", { type: "submit" }, t("save")) as HTMLButtonElement;
  const form = h(
    "form",
    { class: "correct" },
    field(`${id}-title`, "title", title),
    field(`${id}-content`, "content", content),
    visibility && field(`${id}-visibility`, "visibility", visibility),
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body: Schemas["PatchedMemoryDetailInputRequest"] = { title: title.value, content: content.value };
    if (visibility) body.visibility = visibility.value === "teacher_only" ? "teacher_only" : "student";
    void act(submit, async () => {
      unwrap(await api.PATCH("/api/v1/memories/{memory_id}/", { params: { path: { memory_id: memory.id } }, body }));
      await done(t("corrected"));
    });
  });
  return h("details", { class: "action" }, h("summary", {}, t("correct")), form);
}

export function archiveForm(memory: Memory, prefix: string, done: (text: string) => Promise<void>): HTMLElement {
  const reason = h("input", { name: "reason", maxlength: "300", required: true }) as HTMLInputElement;
  const submit = h("button", { type: "submit", class: "danger" }, t("archive_confirm")) as HTMLButtonElement;
  const form = h("form", { class: "archive" }, field(`${prefix}-${memory.id}-reason`, "archive_reason", reason), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(submit, async () => {
      unwrap(
        await api.POST("/api/v1/memories/{memory_id}/archive/", {
          params: { path: { memory_id: memory.id } },
          body: { reason: reason.value },
        }),
      );
      await done(t("archived"));
    });
  });
  return h("details", { class: "action" }, h("summary", {}, t("archive")), form);
}

async function afterChange(text: string): Promise<void> {
  await loadMemories(student);
  announce(text);
  changed();
}

function memoryCard(memory: Memory, user: User): HTMLElement {
  const active = (memory.status ?? "active") === "active";
  return h(
    "li",
    {},
    h(
      "article",
      {
        class: `memory kind-${memory.kind} status-${memory.status ?? "active"}`,
        "data-memory": String(memory.id),
        "aria-labelledby": `memory-${memory.id}-title`,
      },
      h("h3", { id: `memory-${memory.id}-title` }, memory.title),
      h("p", { class: "content" }, memory.content),
      evidenceList(memory),
      provenance(memory, user),
      memory.source_conversation ? h("p", { class: "source-link" }, conversationButton(memory.source_conversation)) : null,
      active && correctForm(memory, "correct", afterChange),
      active && archiveForm(memory, "archive", afterChange),
    ),
  );
}

function draw(): void {
  byId("memories-heading").textContent = student ? t("teacher_memories_heading", { name: displayName(student) }) : "";
  byId("memory-count").textContent = memories.length ? "" : t("no_memories");
  byId("memories").replaceChildren(...(me ? memories.map((m) => memoryCard(m, me as User)) : []));
  byId("more-memories").hidden = !memoriesNext;
}

export async function loadMemories(who: User | null, more = false): Promise<void> {
  student = who;
  if (!who) {
    memories = [];
    draw();
    return;
  }
  const value = statusSelect().value;
  const status: Status = value === "archived" || value === "all" ? value : "active";
  const page = more ? memoriesPage + 1 : 1;
  const data = unwrap(
    await api.GET("/api/v1/memories/", {
      params: { query: { student: who.id, status, page, page_size: PAGE_SIZE } },
    }),
  );
  const shown = more ? [...memories, ...data.results] : data.results;
  await fetchEvidence(shown);
  memories = shown;
  memoriesPage = page;
  memoriesNext = Boolean(data.next);
  draw();
}

export function startMemories(user: User, onChange: () => void): void {
  me = user;
  changed = onChange;
}

export function redrawMemories(): void {
  draw();
}

export function resetMemories(): void {
  me = null;
  student = null;
  memories = [];
  memoriesNext = false;
  announce("");
  draw();
}

statusSelect().addEventListener("change", () => {
  announce("");
  void act(null, () => loadMemories(student));
});
byId<HTMLButtonElement>("more-memories").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadMemories(student, true));
});
// A refused note (a title of 2 words) says why next to the field; the form states the rule.
byId<HTMLFormElement>("note-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.currentTarget as HTMLFormElement;
  const title = byId<HTMLInputElement>("note-title");
  const content = byId<HTMLTextAreaElement>("note-content");
  const visibility = byId<HTMLSelectElement>("note-visibility").value === "student" ? "student" : "teacher_only";
  const who = student;
  if (!who) return;
  void formAct("note", form, form.querySelector("button"), async () => {
    unwrap(
      await api.POST("/api/v1/memories/", {
        body: { student: who.id, title: title.value, content: content.value, visibility },
      }),
    );
    title.value = "";
    content.value = "";
    await afterChange(t("note_added"));
  });
});
