/**
 * The teacher's page (/app/teacher/): the safety queue of one's students (./safety), then pick
 * a student of one's classes, read their memories with where each came from, add a note
 * (teachers only, or shared with the student), correct a memory, archive one with a reason,
 * and list the archived ones.
 */
import { type Memory, type Schemas, type User, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, displayName, h, provenance, run, showError } from "./common";
import { t } from "./i18n";
import { loadFlags, redrawFlags, resetFlags } from "./safety";

type Status = "active" | "archived" | "all";
const PAGE_SIZE = 50;

let me: User | null = null;
let students: User[] = [];
let memories: Memory[] = [];
let memoriesNext = false;
let memoriesPage = 1;

const studentSelect = () => byId<HTMLSelectElement>("student");
const statusSelect = () => byId<HTMLSelectElement>("status");

function selectedStudent(): User | undefined {
  return students.find((s) => String(s.id) === studentSelect().value);
}

function announce(text: string): void {
  byId("action-status").textContent = text;
}

function field(id: string, key: Parameters<typeof t>[0], control: HTMLElement): HTMLElement {
  control.id = id;
  return h("p", { class: "field" }, h("label", { for: id }, t(key)), control);
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

/** The correction form, inside a <details> that opens it. */
function correctForm(memory: Memory): HTMLElement {
  const prefix = `correct-${memory.id}`;
  const title = h("input", { name: "title", maxlength: "200", required: true }) as HTMLInputElement;
  title.value = memory.title;
  const content = h("textarea", { name: "content", rows: "4", required: true }) as HTMLTextAreaElement;
  content.value = memory.content;
  const visibility = memory.kind === "teacher_note" ? visibilitySelect(memory.visibility ?? "student") : null;
  const submit = h("button", { type: "submit" }, t("save")) as HTMLButtonElement;
  const form = h(
    "form",
    { class: "correct" },
    field(`${prefix}-title`, "title", title),
    field(`${prefix}-content`, "content", content),
    visibility && field(`${prefix}-visibility`, "visibility", visibility),
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const body: Schemas["PatchedMemoryDetailInputRequest"] = { title: title.value, content: content.value };
    if (visibility) body.visibility = visibility.value === "teacher_only" ? "teacher_only" : "student";
    void act(submit, async () => {
      unwrap(
        await api.PATCH("/api/v1/memories/{memory_id}/", {
          params: { path: { memory_id: memory.id } },
          body,
        }),
      );
      await loadMemories();
      announce(t("corrected"));
    });
  });
  return h("details", { class: "action" }, h("summary", {}, t("correct")), form);
}

function archiveForm(memory: Memory): HTMLElement {
  const reason = h("input", { name: "reason", maxlength: "300", required: true }) as HTMLInputElement;
  const submit = h("button", { type: "submit", class: "danger" }, t("archive_confirm")) as HTMLButtonElement;
  const form = h("form", { class: "archive" }, field(`archive-${memory.id}-reason`, "archive_reason", reason), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(submit, async () => {
      unwrap(
        await api.POST("/api/v1/memories/{memory_id}/archive/", {
          params: { path: { memory_id: memory.id } },
          body: { reason: reason.value },
        }),
      );
      await loadMemories();
      announce(t("archived"));
    });
  });
  return h("details", { class: "action" }, h("summary", {}, t("archive")), form);
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
      provenance(memory, user),
      active && correctForm(memory),
      active && archiveForm(memory),
    ),
  );
}

function drawStudents(): void {
  const select = studentSelect();
  const chosen = select.value;
  select.replaceChildren(...students.map((s) => h("option", { value: String(s.id) }, displayName(s))));
  if (chosen) select.value = chosen;
  byId("no-students").hidden = students.length > 0;
  byId("student-view").hidden = students.length === 0;
}

function drawMemories(): void {
  const student = selectedStudent();
  byId("memories-heading").textContent = student ? t("teacher_memories_heading", { name: displayName(student) }) : "";
  byId("memory-count").textContent = memories.length ? "" : t("no_memories");
  const list = byId("memories");
  list.replaceChildren(...(me ? memories.map((m) => memoryCard(m, me as User)) : []));
  byId("more-memories").hidden = !memoriesNext;
}

async function loadStudents(): Promise<void> {
  const all: User[] = [];
  for (let page = 1; ; page++) {
    const data = unwrap(await api.GET("/api/v1/students/", { params: { query: { page, page_size: 100 } } }));
    all.push(...data.results);
    if (!data.next) break;
  }
  students = all;
  drawStudents();
}

async function loadMemories(more = false): Promise<void> {
  const student = selectedStudent();
  if (!student) {
    memories = [];
    drawMemories();
    return;
  }
  const value = statusSelect().value;
  const status: Status = value === "archived" || value === "all" ? value : "active";
  const page = more ? memoriesPage + 1 : 1;
  const data = unwrap(
    await api.GET("/api/v1/memories/", {
      params: { query: { student: student.id, status, page, page_size: PAGE_SIZE } },
    }),
  );
  memories = more ? [...memories, ...data.results] : data.results;
  memoriesPage = page;
  memoriesNext = Boolean(data.next);
  drawMemories();
}

studentSelect().addEventListener("change", () => {
  announce("");
  void act(null, () => loadMemories());
});
statusSelect().addEventListener("change", () => {
  announce("");
  void act(null, () => loadMemories());
});
byId<HTMLButtonElement>("more-memories").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadMemories(true));
});

byId<HTMLFormElement>("note-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const student = selectedStudent();
  const title = byId<HTMLInputElement>("note-title");
  const content = byId<HTMLTextAreaElement>("note-content");
  const visibility = byId<HTMLSelectElement>("note-visibility").value === "student" ? "student" : "teacher_only";
  if (!student) return;
  void act((event.currentTarget as HTMLFormElement).querySelector("button"), async () => {
    unwrap(
      await api.POST("/api/v1/memories/", {
        body: { student: student.id, title: title.value, content: content.value, visibility },
      }),
    );
    title.value = "";
    content.value = "";
    await loadMemories();
    announce(t("note_added"));
  });
});

void run({
  role: "teacher",
  async start(user) {
    me = user;
    await loadFlags();
    await loadStudents();
    await loadMemories();
  },
  redraw() {
    redrawFlags();
    drawStudents();
    drawMemories();
  },
  reset() {
    me = null;
    students = [];
    memories = [];
    memoriesNext = false;
    announce("");
    showError(null);
    resetFlags();
    drawStudents();
    drawMemories();
  },
});
