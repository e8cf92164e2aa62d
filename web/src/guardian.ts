/**
 * The guardian's page (/app/guardian/): pick one of one's children, read what the tutor
 * remembers of them (never a teacher-only note) and their learning record (skills, quizzes),
 * download their data, and ask the school to erase it, with each request's status
 * (docs/privacy.md#guardians). A guardian signs in with the password their school set.
 */
import { unwrap, type Schemas } from "../../clients/typescript/src/index";
import { act, api, byId, h, label, run, showError } from "./common";
import { formatDate, t } from "./i18n";

type Student = Schemas["UserOutput"];
type Memory = Schemas["MemoryOutput"];
type Skill = Schemas["SkillOutput"];
type Quiz = Schemas["QuizSummaryOutput"];
type ErasureRequest = Schemas["ErasureRequestOutput"];

let children: Student[] = [];
let child: number | null = null;
let memories: Memory[] = [];
let skills: Skill[] = [];
let quizzes: Quiz[] = [];
let requests: ErasureRequest[] = [];

function draw(): void {
  const select = byId<HTMLSelectElement>("child");
  select.replaceChildren(
    ...children.map((c) => h("option", { value: String(c.id), selected: c.id === child }, c.first_name || c.username)),
  );
  byId("children-empty").hidden = children.length > 0;
  const exportLink = byId<HTMLAnchorElement>("export");
  exportLink.hidden = child === null;
  if (child !== null) exportLink.href = `/api/v1/students/${child}/export/`;
  byId("guardian-memories").replaceChildren(
    ...memories.map((m) =>
      h(
        "li",
        { class: `memory kind-${m.kind}`, "data-memory": String(m.id) },
        h("h3", {}, m.title),
        h("p", {}, m.content),
        h("p", { class: "meta" }, label(`kind_${m.kind}`), ` · ${formatDate(m.created_at)}`),
      ),
    ),
  );
  byId("guardian-memories-empty").hidden = memories.length > 0;
  byId("guardian-skills").replaceChildren(
    ...skills.map((s) => h("li", { class: "skill" }, `${s.skill}: ${Math.round(s.estimate * 100)}%`)),
  );
  byId("guardian-skills-empty").hidden = skills.length > 0;
  byId("guardian-quizzes").replaceChildren(
    ...quizzes.map((q) => h("li", { class: "quiz" }, `${q.topic} · ${formatDate(q.created_at)}`)),
  );
  byId("erasure-requests").replaceChildren(
    ...requests
      .filter((r) => r.student === child || r.student === null)
      .map((r) =>
        h(
          "li",
          { class: `erasure-request status-${r.status}` },
          `${formatDate(r.requested_at)} · ${t(`guardian_erasure_${r.status}` as const)}`,
          r.decision_reason ? ` · ${r.decision_reason}` : "",
        ),
      ),
  );
}

async function loadChild(): Promise<void> {
  if (child === null) {
    memories = [];
    skills = [];
    quizzes = [];
  } else {
    const query = { student: child, page_size: 100 };
    const [m, s, q] = await Promise.all([
      api.GET("/api/v1/memories/", { params: { query } }),
      api.GET("/api/v1/students/{student_id}/skills/", { params: { path: { student_id: child } } }),
      api.GET("/api/v1/quizzes/", { params: { query } }),
    ]);
    memories = unwrap(m).results;
    skills = unwrap(s);
    quizzes = unwrap(q).results;
  }
  requests = unwrap(await api.GET("/api/v1/erasure-requests/", {})).results;
  draw();
}

byId<HTMLSelectElement>("child").addEventListener("change", (event) => {
  child = Number((event.target as HTMLSelectElement).value);
  loadChild().catch(showError);
});

byId<HTMLFormElement>("erasure-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const form = event.target as HTMLFormElement;
  const reason = byId<HTMLTextAreaElement>("erasure-reason");
  void act(form.querySelector("button"), async () => {
    if (child === null) return;
    unwrap(
      await api.POST("/api/v1/students/{student_id}/erasure-requests/", {
        params: { path: { student_id: child } },
        body: { reason: reason.value },
      }),
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
  },
});
