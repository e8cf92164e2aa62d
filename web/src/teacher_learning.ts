/**
 * What the student learns: their skills (GET /students/{id}/skills/) with mastery in words and
 * numbers and the reviews the schedule has for them (GET /students/{id}/reviews/), their quizzes
 * (GET /quizzes/?student=, each one's questions and answers on demand from GET /quizzes/{id}/),
 * and their tasks with the status each one has for them (GET /tasks/).
 */
import { type Schemas, type User, unwrap } from "../../clients/typescript/src/index";
import { api, byId, displayName, h } from "./common";
import { formatDate, t } from "./i18n";
import type { Review, StudentReviews } from "./teacher_api";
import { band, percent, sectionAct } from "./teacher_ui";

type Skill = Schemas["SkillOutput"];
type Quiz = Schemas["QuizSummaryOutput"];
type QuizDetail = Schemas["QuizOutput"];
type Task = Schemas["TaskOutput"];

const SECTION = "learning";
const QUIZ_PAGE = 20;
const TASK_PAGES = 10;

let student: User | null = null;
let skills: Skill[] = [];
let reviews: StudentReviews | null = null;
let quizzes: Quiz[] = [];
let quizPage = 1;
let moreQuizzes = false;
let tasks: Task[] = [];
const details = new Map<number, QuizDetail>();

/** A mastery cell's content: the number, and the band in words (never colour alone). */
export function mastery(estimate: number): HTMLElement {
  const b = band(estimate);
  return h(
    "span",
    { class: `mastery mastery-${b}` },
    h("span", { class: "value" }, percent(estimate)),
    " ",
    h("span", { class: "band" }, t(`mastery_${b}`)),
  );
}

export function reviewText(review: Review | undefined): string {
  if (!review) return t("none");
  if (review.overdue_days >= 1) return t("review_overdue", { days: Math.floor(review.overdue_days) });
  return new Date(review.due_at) <= new Date() ? t("review_due_now") : t("review_next", { date: formatDate(review.due_at) });
}

function trend(value: number): string {
  if (value > 0.02) return t("trend_up");
  if (value < -0.02) return t("trend_down");
  return t("trend_flat");
}

function skillRow(skill: Skill): HTMLElement {
  const review = [...(reviews?.due ?? []), ...(reviews?.upcoming ?? [])].find((r) => r.skill === skill.skill);
  const due = Boolean(reviews?.due.some((r) => r.skill === skill.skill));
  return h(
    "tr",
    { "data-skill": skill.skill },
    h("th", { scope: "row" }, skill.skill),
    h("td", { class: `cell mastery-${band(skill.estimate)}` }, mastery(skill.estimate)),
    h("td", {}, trend(skill.trend)),
    h("td", {}, t("answers_right", { correct: skill.correct, total: skill.attempts })),
    h("td", {}, t("answers_right", { correct: skill.latest_correct, total: skill.latest_total })),
    h("td", { class: due ? "due" : "" }, reviewText(review)),
  );
}

function skillTable(): HTMLElement {
  const headers = ["skill", "mastery", "trend", "skill_answers", "latest_quiz", "review"] as const;
  return h(
    "table",
    { class: "skills" },
    h("caption", {}, t("skills_caption")),
    h("thead", {}, h("tr", {}, ...headers.map((key) => h("th", { scope: "col" }, t(key))))),
    h("tbody", {}, ...skills.map(skillRow)),
  );
}

function score(quiz: Quiz): string {
  if (quiz.status === "graded" && quiz.correct !== null) {
    return t("quiz_score", { correct: quiz.correct, total: quiz.question_count });
  }
  return t(`quiz_status_${quiz.status}`);
}

function questions(quiz: QuizDetail): HTMLElement {
  return h(
    "ol",
    { class: "questions" },
    ...quiz.questions.map((q) => {
      const answer = quiz.answers.find((a) => a.question === q.id);
      return h(
        "li",
        { class: answer ? `result-${answer.result}` : "" },
        h("p", {}, q.prompt),
        q.choices.length ? h("p", { class: "meta" }, t("quiz_choices", { choices: q.choices.join(" · ") })) : null,
        h("p", {}, t("quiz_expected", { answer: q.expected_answer ?? t("none") })),
        answer
          ? h("p", {}, t("quiz_given", { answer: answer.given || t("quiz_skipped") }), " · ", h("strong", {}, t(`result_${answer.result}`)))
          : h("p", { class: "meta" }, t("quiz_not_answered")),
        answer?.feedback ? h("p", { class: "meta" }, answer.feedback) : null,
        q.explanation ? h("p", { class: "meta" }, q.explanation) : null,
      );
    }),
  );
}

function quizItem(quiz: Quiz): HTMLElement {
  const more = h("details", { class: "action" }, h("summary", {}, t("quiz_details"))) as HTMLDetailsElement;
  const known = details.get(quiz.id);
  if (known) more.append(questions(known));
  more.addEventListener("toggle", () => {
    if (!more.open || details.has(quiz.id)) return;
    void sectionAct(SECTION, null, async () => {
      const detail = unwrap(await api.GET("/api/v1/quizzes/{quiz_id}/", { params: { path: { quiz_id: quiz.id } } }));
      details.set(quiz.id, detail);
      more.append(questions(detail));
    });
  });
  return h(
    "li",
    { "data-quiz": String(quiz.id), class: `quiz quiz-${quiz.status}` },
    h("p", {}, h("strong", {}, quiz.topic), " · ", h("span", { class: "score" }, score(quiz))),
    h("p", { class: "meta" }, `${quiz.skill} · ${formatDate(quiz.created_at)}`),
    more,
  );
}

function taskItem(task: Task): HTMLElement {
  const status = task.statuses.find((s) => s.student_id === student?.id);
  const facts = [task.subject, task.due_at ? t("task_due", { date: formatDate(task.due_at) }) : t("task_no_due")];
  if (task.classroom !== null) facts.push(t("task_for_class"));
  return h(
    "li",
    { "data-task": String(task.id), class: status?.overdue ? "overdue" : "" },
    h(
      "p",
      {},
      h("strong", {}, task.title),
      " · ",
      h("span", { class: "task-status" }, status ? t(`task_status_${status.status}`) : t("none")),
      status?.overdue ? h("span", { class: "late" }, ` · ${t("task_overdue")}`) : null,
    ),
    h("p", { class: "meta" }, facts.filter(Boolean).join(" · ")),
    task.instructions ? h("p", {}, task.instructions) : null,
    status?.set_by === "tutor" ? h("p", { class: "meta" }, t("task_set_by_tutor", { reason: status.reason || t("none") })) : null,
  );
}

function draw(): void {
  byId("learning-heading").textContent = student ? t("learning_heading", { name: displayName(student) }) : "";
  byId("skills-empty").textContent = skills.length ? "" : t("no_skills");
  byId("skills-table").replaceChildren(...(skills.length ? [skillTable()] : []));
  byId("quizzes-empty").textContent = quizzes.length ? "" : t("no_quizzes");
  byId("quiz-list").replaceChildren(...quizzes.map(quizItem));
  byId("more-quizzes").hidden = !moreQuizzes;
  byId("tasks-empty").textContent = tasks.length ? "" : t("no_tasks");
  byId("task-list").replaceChildren(...tasks.map(taskItem));
}

async function loadQuizzes(who: User, next: boolean): Promise<void> {
  const page = next ? quizPage + 1 : 1;
  const data = unwrap(await api.GET("/api/v1/quizzes/", { params: { query: { student: who.id, page, page_size: QUIZ_PAGE } } }));
  quizzes = next ? [...quizzes, ...data.results] : data.results;
  quizPage = page;
  moreQuizzes = Boolean(data.next);
}

async function loadTasks(who: User): Promise<void> {
  const found: Task[] = [];
  for (let page = 1; page <= TASK_PAGES; page++) {
    const data = unwrap(await api.GET("/api/v1/tasks/", { params: { query: { page, page_size: 100 } } }));
    found.push(...data.results.filter((task) => task.statuses.some((s) => s.student_id === who.id)));
    if (!data.next) break;
  }
  tasks = found;
}

export async function loadLearning(who: User | null): Promise<void> {
  student = who;
  skills = [];
  reviews = null;
  quizzes = [];
  moreQuizzes = false;
  tasks = [];
  details.clear();
  draw();
  if (!who) return;
  await sectionAct(SECTION, null, async () => {
    const [rows, schedule] = await Promise.all([
      api.GET("/api/v1/students/{student_id}/skills/", { params: { path: { student_id: who.id } } }),
      api
        .GET("/api/v1/students/{student_id}/reviews/", { params: { path: { student_id: who.id } } })
        .then(unwrap)
        .catch((error: unknown) => ({ error })),
      loadQuizzes(who, false),
      loadTasks(who),
    ]);
    skills = unwrap(rows);
    reviews = "error" in schedule ? null : schedule;
    draw();
    if ("error" in schedule) throw schedule.error;
  });
}

export function redrawLearning(): void {
  draw();
}

byId<HTMLButtonElement>("more-quizzes").addEventListener("click", (event) => {
  const who = student;
  if (!who) return;
  void sectionAct(SECTION, event.currentTarget as HTMLButtonElement, async () => {
    await loadQuizzes(who, true);
    draw();
  });
});
