/**
 * The class at a glance: one's classrooms (GET /classrooms/), and for the one chosen a table of
 * its students by its skills (GET /classrooms/{id}/skills/), each cell the student's mastery as a
 * number, coloured by band, with the band in words for screen readers and a legend; a skill whose
 * review is due for that student (GET /classrooms/{id}/reviews/) is marked in words too. A
 * student's name opens their part of the page. A link opens the page that prints the class's
 * sign-in cards.
 */
import { type Schemas, unwrap } from "../../clients/typescript/src/index";
import { api, byId, h } from "./common";
import { t } from "./i18n";
import { type ClassReviews, type Classroom, every, type Review } from "./teacher_api";
import { reviewText } from "./teacher_learning";
import { BANDS, band, notServed, percent, sectionAct } from "./teacher_ui";

type ClassSkills = Schemas["ClassroomSkillsOutput"];

const SECTION = "class";

let classrooms: Classroom[] = [];
let unavailable = false;
let skills: ClassSkills | null = null;
let reviews: ClassReviews | null = null;
let pick: (studentId: number) => void = () => undefined;
let changedClass: (classroom: Classroom | null) => void = () => undefined;
let loaded: () => void = () => undefined;

const classSelect = () => byId<HTMLSelectElement>("classroom");

export function selectedClassroom(): Classroom | null {
  return classrooms.find((c) => String(c.id) === classSelect().value) ?? classrooms[0] ?? null;
}

interface Row {
  id: number;
  username: string;
}

function rows(): Row[] {
  const found = new Map<number, string>();
  for (const skill of skills?.skills ?? []) for (const s of skill.students) found.set(s.student_id, s.username);
  for (const s of reviews?.students ?? []) found.set(s.id, s.username);
  return [...found].map(([id, username]) => ({ id, username })).sort((a, b) => a.username.localeCompare(b.username));
}

function dueFor(studentId: number, skill: string): Review | undefined {
  return reviews?.students.find((s) => s.id === studentId)?.due.find((r) => r.skill === skill);
}

function cell(row: Row, skill: Schemas["ClassSkillOutput"]): HTMLElement {
  const mastery = skill.students.find((s) => s.student_id === row.id);
  const due = dueFor(row.id, skill.skill);
  const mark = due ? h("span", { class: "due-mark", title: reviewText(due) }, t("due_mark")) : null;
  if (!mastery) {
    return h("td", { class: "cell not-assessed" }, h("span", { class: "value" }, t("none")), h("span", { class: "sr-only" }, t("not_assessed")), mark);
  }
  const b = band(mastery.estimate);
  return h(
    "td",
    { class: `cell mastery-${b}${due ? " due" : ""}`, "data-estimate": String(mastery.estimate), title: t(`mastery_${b}`) },
    h("span", { class: "value" }, percent(mastery.estimate)),
    h("span", { class: "sr-only" }, ` ${t(`mastery_${b}`)}`),
    mark && " ",
    mark,
  );
}

function studentButton(row: Row): HTMLElement {
  const button = h("button", { type: "button", class: "link" }, row.username) as HTMLButtonElement;
  button.addEventListener("click", () => pick(row.id));
  return button;
}

function table(): HTMLElement {
  const columns = skills?.skills ?? [];
  return h(
    "table",
    { class: "class-skills" },
    h("caption", {}, t("class_table_caption", { name: skills?.name ?? "" })),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", { scope: "col" }, t("student")),
        ...columns.map((s) =>
          h("th", { scope: "col" }, s.skill, h("span", { class: "average" }, t("class_average", { value: percent(s.class_average) }))),
        ),
      ),
    ),
    h(
      "tbody",
      {},
      ...rows().map((row) =>
        h("tr", { "data-student": String(row.id) }, h("th", { scope: "row" }, studentButton(row)), ...columns.map((s) => cell(row, s))),
      ),
    ),
  );
}

function legend(): HTMLElement {
  return h(
    "ul",
    { class: "legend", "aria-label": t("legend") },
    ...BANDS.map((b) => h("li", {}, h("span", { class: `swatch mastery-${b}`, "aria-hidden": "true" }), t(`legend_${b}`))),
    h("li", {}, h("span", { class: "due-mark" }, t("due_mark")), " ", t("legend_due")),
  );
}

function draw(): void {
  const select = classSelect();
  const chosen = select.value;
  select.replaceChildren(...classrooms.map((c) => h("option", { value: String(c.id) }, c.name)));
  if (chosen) select.value = chosen;
  byId("classroom-field").hidden = classrooms.length < 2;
  const hasRows = Boolean(skills?.skills.length) && rows().length > 0;
  byId("class-empty").textContent = unavailable
    ? t("class_unavailable")
    : skills && !hasRows
        ? t("class_no_skills")
        : "";
  byId("class-table").replaceChildren(...(hasRows ? [table()] : []));
  byId("class-table").hidden = !hasRows;
  byId("class-legend").replaceChildren(...(hasRows ? [legend()] : []));
  byId("class-ask-part").hidden = !classrooms.length;
  // The overview says when there is no class (./teacher_roster).
  byId(SECTION).hidden = !classrooms.length && !unavailable;
  const classroom = selectedClassroom();
  // The sheet of the class's sign-in cards, made by the server (web.cards).
  byId<HTMLAnchorElement>("class-cards").href = classroom ? `/app/teacher/classes/${classroom.id}/cards/` : "";
  byId("class-cards-part").hidden = !classroom;
}

async function loadClass(): Promise<void> {
  const classroom = selectedClassroom();
  skills = null;
  reviews = null;
  draw();
  changedClass(classroom);
  if (!classroom) return;
  const [figures, schedule] = await Promise.all([
    api.GET("/api/v1/classrooms/{classroom_id}/skills/", { params: { path: { classroom_id: classroom.id } } }),
    api
      .GET("/api/v1/classrooms/{classroom_id}/reviews/", { params: { path: { classroom_id: classroom.id } } })
      .then(unwrap)
      .catch((error: unknown) => ({ error })),
  ]);
  skills = unwrap(figures);
  reviews = "error" in schedule ? null : schedule;
  draw();
  if ("error" in schedule) throw schedule.error;
}

export async function loadClasses(): Promise<void> {
  await sectionAct(SECTION, null, async () => {
    try {
      classrooms = await every<Classroom>("/classrooms/", 5);
      unavailable = false;
    } catch (error) {
      if (!notServed(error)) throw error;
      classrooms = [];
      unavailable = true;
    }
    draw();
    loaded();
    await loadClass();
  });
}

/** The classes one may open (a teacher's own; a school administrator's school's). */
export function classroomList(): Classroom[] {
  return classrooms;
}

/** Make `id` the chosen class (the overview follows). */
export async function chooseClassroom(id: number): Promise<void> {
  if (!classrooms.some((c) => c.id === id)) return;
  classSelect().value = String(id);
  await sectionAct(SECTION, null, loadClass);
}

export function startClasses(
  onPick: (studentId: number) => void,
  onClass: (classroom: Classroom | null) => void,
  onList: () => void = () => undefined,
): void {
  pick = onPick;
  changedClass = onClass;
  loaded = onList;
}

export function redrawClasses(): void {
  draw();
}

export function resetClasses(): void {
  classrooms = [];
  unavailable = false;
  skills = null;
  reviews = null;
  draw();
}

classSelect().addEventListener("change", () => {
  void sectionAct(SECTION, null, loadClass);
});
