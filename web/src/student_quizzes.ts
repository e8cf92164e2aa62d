/**
 * Quizzes on the student's page: a form per quiz (radio buttons for multiple choice, a field
 * for a number or a short text), sent once to POST /quizzes/{id}/answers/ with a
 * client_attempt_id kept until the answers are stored (sending again after a failure cannot
 * answer twice), then the result: the score, each answer right or wrong with the expected
 * answer and the explanation, and "being graded" for short texts the model grades later (the
 * quiz is read again until it is graded).
 *
 * A quiz may be shown in two places (the conversation it was made in, and the page's list of
 * quizzes): every copy is drawn from one record and redrawn when it changes.
 */
import { newClientMessageId, type Schemas, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h } from "./common";
import { formatDate, t } from "./i18n";
import { announce, plural } from "./student_state";

type Quiz = Schemas["QuizOutput"];
type Summary = Schemas["QuizSummaryOutput"];
type Question = Schemas["QuestionOutput"];
type Answer = Schemas["AnswerOutput"];

const GRADING_POLL_MS = 1500;
const GRADING_WAIT_MS = 120_000;
const LIST_SIZE = 20;

const quizzes = new Map<number, Summary | Quiz>();
const attempts = new Map<number, string>(); // client_attempt_id of answers not yet stored
const watched = new Set<number>();
let listed: number[] = [];
let generation = 0; // bumped on sign-out: late answers of the old session are dropped

const isFull = (quiz: Summary | Quiz): quiz is Quiz => "questions" in quiz;

/** Keep a quiz read from the API or a turn's `quiz` event, and redraw its copies. */
export function quizRemember(quiz: Quiz): void {
  quizzes.set(quiz.id, quiz);
  redrawQuiz(quiz.id);
  if (quiz.status === "grading") watchGrading(quiz.id);
}

async function quizFetch(id: number): Promise<Quiz> {
  return unwrap(await api.GET("/api/v1/quizzes/{quiz_id}/", { params: { path: { quiz_id: id } } }));
}

/** The quizzes of one conversation, with their questions, oldest first. */
export async function conversationQuizzes(conversationId: number): Promise<Quiz[]> {
  const page = unwrap(
    await api.GET("/api/v1/quizzes/", { params: { query: { conversation: conversationId, page_size: LIST_SIZE } } }),
  );
  const full = await Promise.all(page.results.map((q) => quizFetch(q.id)));
  for (const quiz of full) quizzes.set(quiz.id, quiz);
  for (const quiz of full) if (quiz.status === "grading") watchGrading(quiz.id);
  return full.reverse();
}

function score(quiz: Summary): string {
  const count = quiz.question_count;
  if (quiz.status === "open") return t(`student_quiz_to_answer_${plural(count)}`, { count });
  if (quiz.status === "grading") return t("student_quiz_grading");
  return t("student_quiz_score", { correct: quiz.correct ?? 0, total: quiz.question_count });
}

function questionField(question: Question, prefix: string): HTMLElement {
  const name = `${prefix}-q${question.id}`;
  const legend = h("legend", {}, `${question.position}. ${question.prompt}`);
  if (question.kind === "multiple_choice") {
    return h(
      "fieldset",
      { class: "question", "data-question": String(question.id) },
      legend,
      ...question.choices.map((choice, index) =>
        h(
          "label",
          { class: "choice" },
          h("input", { type: "radio", name, value: choice, id: `${name}-c${index}` }),
          h("span", {}, choice),
        ),
      ),
    );
  }
  const input = h("input", {
    type: "text",
    name,
    id: name,
    maxlength: "1000",
    autocomplete: "off",
    ...(question.kind === "numeric" ? { inputmode: "decimal" } : {}),
  });
  return h(
    "fieldset",
    { class: "question", "data-question": String(question.id) },
    legend,
    h(
      "p",
      { class: "field" },
      h("label", { for: name }, t(`student_quiz_${question.kind === "numeric" ? "number" : "text"}_answer`)),
      input,
    ),
  );
}

function given(form: HTMLFormElement, question: Question, prefix: string): string {
  const name = `${prefix}-q${question.id}`;
  const field = form.elements.namedItem(name);
  if (field instanceof RadioNodeList) return field.value;
  if (!(field instanceof HTMLInputElement)) return "";
  return field.type === "radio" && !field.checked ? "" : field.value;
}

async function submit(quiz: Quiz, form: HTMLFormElement, prefix: string, place: string): Promise<void> {
  const answers = quiz.questions.map((q) => ({ question: q.id, answer: given(form, q, prefix) }));
  const attempt = attempts.get(quiz.id) ?? newClientMessageId();
  attempts.set(quiz.id, attempt);
  const session = generation;
  const sent = await api.POST("/api/v1/quizzes/{quiz_id}/answers/", {
    params: { path: { quiz_id: quiz.id } },
    body: { client_attempt_id: attempt, answers },
  });
  if (sent.response.status === 409 && session === generation) {
    // Answered already (in another tab): its result replaces the form, and the server says so.
    attempts.delete(quiz.id);
    quizRemember(await quizFetch(quiz.id));
  }
  const result = unwrap(sent);
  if (session !== generation) return;
  attempts.delete(quiz.id);
  quizRemember(result.quiz);
  announce("quizzes", result.quiz.status === "grading" ? t("student_quiz_sent_grading") : t("student_quiz_sent"));
  document.querySelector<HTMLElement>(`[data-quiz="${quiz.id}"][data-place="${place}"] .quiz-score`)?.focus();
}

function quizForm(quiz: Quiz, place: string): HTMLElement {
  const prefix = `${place}-quiz-${quiz.id}`;
  const button = h("button", { type: "submit" }, t("student_quiz_submit")) as HTMLButtonElement;
  const form = h(
    "form",
    { class: "quiz-form" },
    ...quiz.questions.map((q) => questionField(q, prefix)),
    h("p", { class: "muted" }, t("student_quiz_skip_hint")),
    button,
  ) as HTMLFormElement;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(button, () => submit(quiz, form, prefix, place));
  });
  return form;
}

function answerItem(question: Question, answer: Answer | undefined): HTMLElement {
  const result = answer?.result ?? "ungraded";
  return h(
    "li",
    { class: `answer result-${result}`, "data-question": String(question.id) },
    h("p", { class: "prompt" }, question.prompt),
    h(
      "p",
      {},
      `${t("student_quiz_your_answer")} `,
      h("span", { class: "given" }, answer?.given ? answer.given : t("student_quiz_skipped")),
    ),
    h(
      "p",
      { class: "verdict" },
      h("span", { "aria-hidden": "true" }, t(`student_quiz_mark_${result}`)),
      ` ${t(`student_quiz_result_${result}`)}`,
    ),
    question.expected_answer && result !== "correct"
      ? h("p", {}, `${t("student_quiz_expected")} `, h("span", { class: "expected" }, question.expected_answer))
      : null,
    question.explanation ? h("p", { class: "explanation" }, question.explanation) : null,
    answer?.feedback ? h("p", { class: "feedback" }, answer.feedback) : null,
  );
}

function quizResult(quiz: Quiz): HTMLElement {
  const byQuestion = new Map(quiz.answers.map((a) => [a.question, a]));
  return h("ol", { class: "answers" }, ...quiz.questions.map((q) => answerItem(q, byQuestion.get(q.id))));
}

/** A button that reads the quiz's questions (a quiz listed without them). */
function loadButton(quiz: Summary): HTMLElement {
  const text = t(quiz.status === "open" ? "student_quiz_answer" : "student_quiz_see_answers");
  const button = h("button", { type: "button", class: "secondary" }, text) as HTMLButtonElement;
  button.addEventListener("click", () => {
    void act(button, async () => quizRemember(await quizFetch(quiz.id)));
  });
  return button;
}

/** A quiz as a card for `place` ("chat", "list"): its form, its result, or a button to read it. */
export function quizCard(id: number, place: string): HTMLElement {
  const quiz = quizzes.get(id);
  const card = h("article", { class: "quiz", "data-quiz": String(id), "data-place": place });
  if (!quiz) return card;
  card.classList.add(`quiz-${quiz.status}`);
  const titleId = `${place}-quiz-${id}-title`;
  card.setAttribute("aria-labelledby", titleId);
  let body: HTMLElement;
  if (!isFull(quiz)) body = loadButton(quiz);
  else if (quiz.status === "open") body = quizForm(quiz, place);
  else body = quizResult(quiz);
  card.append(
    h("h3", { id: titleId }, t("student_quiz_title", { topic: quiz.topic })),
    h("p", { class: "meta" }, [quiz.skill, formatDate(quiz.created_at)].filter(Boolean).join(" · ")),
    h("p", { class: "quiz-score", tabindex: "-1" }, score(quiz)),
    body,
  );
  return card;
}

/** Redraw every copy of a quiz on the page. */
export function redrawQuiz(id: number): void {
  for (const node of document.querySelectorAll<HTMLElement>(`[data-quiz="${id}"]`)) {
    node.replaceWith(quizCard(id, node.dataset.place ?? "list"));
  }
  if (listed.includes(id)) drawList();
}

/** Read a quiz again until the model has graded its short texts. */
function watchGrading(id: number): void {
  if (watched.has(id)) return;
  watched.add(id);
  const session = generation;
  const deadline = Date.now() + GRADING_WAIT_MS;
  const poll = async (): Promise<void> => {
    if (session !== generation) return;
    try {
      const quiz = await quizFetch(id);
      if (session !== generation) return;
      if (quiz.status !== "grading") {
        watched.delete(id);
        quizRemember(quiz);
        announce("quizzes", t("student_quiz_graded", { topic: quiz.topic }));
        return;
      }
    } catch {
      // Read again below: the page's error region stays for the student's own actions.
    }
    if (Date.now() < deadline) window.setTimeout(() => void poll(), GRADING_POLL_MS);
    else watched.delete(id);
  };
  window.setTimeout(() => void poll(), GRADING_POLL_MS);
}

/** The list's card of a quiz: the one on the page (answers being typed stay), unless `fresh`. */
function listCard(id: number, fresh: boolean): HTMLElement {
  const shown = fresh ? null : document.querySelector<HTMLElement>(`#quizzes [data-quiz="${id}"]`);
  return h("li", {}, shown ?? quizCard(id, "list"));
}

function drawList(fresh = false): void {
  const items = listed.map((id) => quizzes.get(id)).filter((q): q is Summary | Quiz => q !== undefined);
  const open = items.filter((q) => q.status === "open");
  const done = items.filter((q) => q.status !== "open");
  byId("quizzes-open").replaceChildren(...open.map((q) => listCard(q.id, fresh)));
  byId("quizzes-done").replaceChildren(...done.map((q) => listCard(q.id, fresh)));
  byId("quizzes-open-empty").hidden = open.length > 0;
  byId("quizzes-done-heading").hidden = done.length === 0;
}

/** The student's latest quizzes: the open ones with their questions, the answered ones by score. */
export async function loadQuizzes(): Promise<void> {
  const session = generation;
  const page = unwrap(await api.GET("/api/v1/quizzes/", { params: { query: { page_size: LIST_SIZE } } }));
  const open = page.results.filter((q) => q.status !== "graded" && !isFullKnown(q.id));
  const full = await Promise.all(open.map((q) => quizFetch(q.id)));
  if (session !== generation) return;
  for (const summary of page.results) if (!isFullKnown(summary.id)) quizzes.set(summary.id, summary);
  for (const quiz of full) quizzes.set(quiz.id, quiz);
  for (const quiz of full) if (quiz.status === "grading") watchGrading(quiz.id);
  listed = page.results.map((q) => q.id);
  drawList();
}

function isFullKnown(id: number): boolean {
  const known = quizzes.get(id);
  return known !== undefined && isFull(known);
}

/** A quiz made in a turn: listed first. */
export function quizListed(quiz: Quiz): void {
  if (!listed.includes(quiz.id)) listed = [quiz.id, ...listed];
  quizRemember(quiz);
  drawList();
}

export function redrawQuizzes(): void {
  drawList(true);
  for (const node of document.querySelectorAll<HTMLElement>("#messages [data-quiz]")) {
    node.replaceWith(quizCard(Number(node.dataset.quiz), node.dataset.place ?? "chat"));
  }
}

export function resetQuizzes(): void {
  generation++;
  quizzes.clear();
  attempts.clear();
  watched.clear();
  listed = [];
  drawList();
}
