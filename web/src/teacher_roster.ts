/**
 * The class overview: the chosen class's roster (GET /classrooms/{id}/roster/), one row per
 * student with their last activity, open safety flags, reviews due and mastery at a glance (a
 * small chart drawn here, one bar per skill, weakest first, coloured by band and named in words
 * for screen readers), a name opening the student's view; and homework set to the whole class
 * (POST /tasks/). At phone width each row reads as a card (web/static/web/style.css).
 */
import { type Schemas, unwrap } from "../../clients/typescript/src/index";
import { api, byId, displayName, h } from "./common";
import { formatDate, type Key, plural, t } from "./i18n";
import type { Classroom } from "./teacher_api";
import { band, formAct, percent, sectionAct, sectionStatus } from "./teacher_ui";

type Roster = Schemas["RosterOutput"];
type RosterStudent = Schemas["RosterStudentOutput"];

const SECTION = "roster";
const SVG = "http://www.w3.org/2000/svg";
// The chart's geometry, in its own units: one bar per skill, at most MAX_BARS.
const MAX_BARS = 12;
const BAR = 6;
const GAP = 2;
const HEIGHT = 24;

let classroom: Classroom | null = null;
let roster: Roster | null = null;
let open: (studentId: number) => void = () => undefined;

function svg(tag: string, attrs: Record<string, string>, ...children: (Node | string)[]): SVGElement {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

/** The student's mastery per skill as bars (the full height: 100 %), with the mean in words. */
export function masteryChart(student: RosterStudent): HTMLElement {
  if (!student.skills.length) return h("span", { class: "not-assessed" }, t("not_assessed"));
  const skills = student.skills.slice(0, MAX_BARS);
  const width = skills.length * (BAR + GAP) - GAP;
  const average = student.mastery_average ?? 0;
  const label = t(`roster_chart_label_${plural(student.skills.length)}`, { count: student.skills.length, average: percent(average) });
  const chart = svg(
    "svg",
    { class: "spark", viewBox: `0 0 ${width} ${HEIGHT}`, width: String(width * 2), height: String(HEIGHT), role: "img", "aria-label": label },
    svg("title", {}, label),
    svg("line", { class: "baseline", x1: "0", y1: String(HEIGHT - 0.5), x2: String(width), y2: String(HEIGHT - 0.5) }),
    ...skills.map((skill, i) => {
      const height = Math.max(1, Math.round(skill.estimate * HEIGHT));
      return svg(
        "rect",
        {
          class: `bar mastery-${band(skill.estimate)}`,
          x: String(i * (BAR + GAP)),
          y: String(HEIGHT - height),
          width: String(BAR),
          height: String(height),
          "data-skill": skill.skill,
        },
        svg("title", {}, `${skill.skill}: ${percent(skill.estimate)}`),
      );
    }),
  );
  return h(
    "span",
    { class: "mastery-glance" },
    chart as unknown as HTMLElement,
    " ",
    h("span", { class: `average mastery-text-${band(average)}` }, percent(average)),
  );
}

function count(value: number, zero: Key, some: Key): HTMLElement {
  return h("span", { class: value ? "count some" : "count" }, value ? t(some, { count: value }) : t(zero));
}

function row(student: RosterStudent): HTMLElement {
  const name = h("button", { type: "button", class: "link student-name" }, displayName(student));
  name.addEventListener("click", () => open(student.id));
  return h(
    "tr",
    { "data-student": String(student.id) },
    h("th", { scope: "row", "data-label": t("student") }, name),
    h(
      "td",
      { "data-label": t("roster_last_activity"), "data-field": "last_activity" },
      student.last_activity_at ? formatDate(student.last_activity_at) : t("roster_never"),
    ),
    h("td", { "data-label": t("roster_flags"), "data-field": "open_flags" }, count(student.open_flags, "roster_no_flags", "roster_flags_count")),
    h("td", { "data-label": t("roster_reviews"), "data-field": "reviews_due" }, count(student.reviews_due, "roster_no_reviews", "roster_reviews_count")),
    h("td", { "data-label": t("roster_mastery"), "data-field": "mastery" }, masteryChart(student)),
  );
}

function table(data: Roster): HTMLElement {
  const headers: Key[] = ["student", "roster_last_activity", "roster_flags", "roster_reviews", "roster_mastery"];
  return h(
    "table",
    { class: "roster" },
    h("caption", {}, t(`roster_caption_${plural(data.students.length)}`, { name: data.name, count: data.students.length })),
    h("thead", {}, h("tr", {}, ...headers.map((key) => h("th", { scope: "col" }, t(key))))),
    h("tbody", {}, ...data.students.map(row)),
  );
}

function draw(): void {
  const data = roster;
  const has = Boolean(data?.students.length);
  byId("roster-empty").textContent = !classroom
      ? t("no_classes")
      : data && !has
        ? t("roster_empty")
        : "";
  byId("roster").replaceChildren(...(data && has ? [table(data)] : []));
  byId("homework").hidden = !classroom;
  const teachers = data?.teachers.map((p) => displayName(p)) ?? [];
  byId("overview-heading").textContent = data ? t("overview_heading", { name: data.name }) : t("class_heading");
  byId("overview-heading").title = teachers.length ? t("roster_teachers", { names: teachers.join(", ") }) : "";
}

/** Load the roster of `chosen` (null: no class). */
export async function loadRoster(chosen: Classroom | null): Promise<void> {
  classroom = chosen;
  roster = null;
  draw();
  if (!chosen) return;
  await sectionAct(SECTION, null, async () => {
    const data = unwrap(await api.GET("/api/v1/classrooms/{classroom_id}/roster/", { params: { path: { classroom_id: chosen.id } } }));
    // A slow answer for a class no longer chosen is dropped.
    if (classroom?.id !== chosen.id) return;
    roster = data;
    draw();
  });
}

export function startRoster(onOpen: (studentId: number) => void): void {
  open = onOpen;
}

export function redrawRoster(): void {
  draw();
}

export function resetRoster(): void {
  classroom = null;
  roster = null;
  sectionStatus(SECTION, "");
  draw();
}

const form = byId<HTMLFormElement>("homework-form");
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const target = classroom;
  if (!target) return;
  const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value;
  const due = value("due_at");
  sectionStatus("homework", "");
  void formAct("homework", form, form.querySelector("button"), async () => {
    const task = unwrap(
      await api.POST("/api/v1/tasks/", {
        body: {
          classroom: target.id,
          title: value("title"),
          instructions: value("instructions"),
          subject: value("subject"),
          due_at: due ? new Date(due).toISOString() : null,
        },
      }),
    );
    form.reset();
    sectionStatus("homework", t("homework_done", { title: task.title, name: target.name }));
  });
});
