/**
 * The student's tasks (GET /tasks/, due first): each with its subject, due date, instructions
 * and the student's status, which they change (to do, in progress, done) with
 * POST /tasks/{id}/status/. A status the tutor set says so, with the tutor's reason.
 */
import { type Schemas, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h } from "./common";
import { formatDate, t } from "./i18n";
import { announce, state } from "./student_state";

type Task = Schemas["TaskOutput"];
type Progress = Schemas["TaskProgressEnum"];

const PROGRESS: Progress[] = ["todo", "in_progress", "done"];
const PAGE_SIZE = 50;

let tasks: Task[] = [];

function mine(task: Task): Task["statuses"][number] | undefined {
  return task.statuses.find((s) => s.student_id === state.me?.id) ?? task.statuses[0];
}

function statusSelect(task: Task, current: Progress): HTMLElement {
  const id = `task-${task.id}-status`;
  const select = h(
    "select",
    { id, name: "status" },
    ...PROGRESS.map((value) => h("option", { value, selected: value === current }, t(`student_task_${value}`))),
  ) as HTMLSelectElement;
  select.addEventListener("change", () => {
    const chosen = PROGRESS.find((p) => p === select.value) ?? "todo";
    void act(null, async () => {
      select.disabled = true;
      try {
        const updated = unwrap(
          await api.POST("/api/v1/tasks/{task_id}/status/", {
            params: { path: { task_id: task.id } },
            body: { status: chosen },
          }),
        );
        tasks = tasks.map((each) => (each.id === updated.id ? updated : each));
        draw();
        announce("tasks", t("student_task_saved", { title: updated.title, status: t(`student_task_${chosen}`) }));
        byId<HTMLSelectElement>(id).focus();
      } finally {
        select.disabled = false;
      }
    }).then((ok) => {
      if (!ok) select.value = current;
    });
  });
  return h("p", { class: "field" }, h("label", { for: id }, t("student_task_status")), select);
}

function taskItem(task: Task): HTMLElement {
  const status = mine(task);
  const current: Progress = status?.status ?? "todo";
  const due = task.due_at ? t("student_task_due", { date: formatDate(task.due_at) }) : "";
  const facts = [task.subject, due].filter(Boolean);
  return h(
    "li",
    { class: `task task-${current}`, "data-task": String(task.id) },
    h("h3", {}, task.title),
    (facts.length > 0 || status?.overdue) &&
      h(
        "p",
        { class: "meta" },
        facts.join(" · "),
        status?.overdue ? h("strong", { class: "overdue" }, ` ${t("student_task_overdue")}`) : null,
      ),
    task.instructions && h("p", { class: "instructions" }, task.instructions),
    status?.set_by === "tutor" &&
      h("p", { class: "muted" }, t("student_task_set_by_tutor", { reason: status.reason || t("none") })),
    statusSelect(task, current),
  );
}

function draw(): void {
  byId("tasks").replaceChildren(...tasks.map(taskItem));
  byId("tasks-empty").hidden = tasks.length > 0;
}

export async function loadTasks(): Promise<void> {
  tasks = unwrap(await api.GET("/api/v1/tasks/", { params: { query: { page_size: PAGE_SIZE } } })).results;
  draw();
}

export function redrawTasks(): void {
  draw();
}

export function resetTasks(): void {
  tasks = [];
  draw();
}
