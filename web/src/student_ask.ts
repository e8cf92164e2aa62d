/**
 * "What do you know about me?": the student asks POST /students/{me}/ask/ about themself and
 * reads the answer with the evidence it cites. Each marker in the answer (`[m12]`,
 * `[quiz 4]`, `[skill fractions]`…) that names a citation becomes a numbered link to it (the
 * server has removed the refs it could not check). The answer is drawn from what the student may
 * see (never a teacher-only note): that is the server's contract.
 */
import { type Schemas, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h } from "./common";
import { t } from "./i18n";
import { state } from "./student_state";

type Answer = Schemas["AskAnswerOutput"];

// A bracket as the server leaves it in the answer: one ref each, as the citation writes it.
const MARKER = /\s?\[([^[\]\n]{1,200})\]/g;

let answer: Answer | null = null;

function citationId(index: number): string {
  return `ask-citation-${index + 1}`;
}

/** The answer's text, its markers turned into links to the citations they name. */
function answerText(shown: Answer): HTMLElement {
  const number = new Map(shown.citations.map((c, index) => [c.ref.toLowerCase(), index]));
  const paragraph = h("p", { class: "ask-text" });
  let last = 0;
  for (const match of shown.answer.matchAll(MARKER)) {
    const ref = (match[1] ?? "").trim().toLowerCase();
    const index = number.get(ref);
    if (index === undefined) continue; // brackets of the text itself
    paragraph.append(
      shown.answer.slice(last, match.index),
      h(
        "sup",
        {},
        h(
          "a",
          { href: `#${citationId(index)}`, "aria-label": t("student_ask_source_number", { n: index + 1 }) },
          `[${index + 1}]`,
        ),
      ),
    );
    last = (match.index ?? 0) + match[0].length;
  }
  paragraph.append(shown.answer.slice(last));
  return paragraph;
}

function draw(): void {
  const box = byId("ask-answer");
  box.hidden = answer === null;
  if (!answer) {
    box.replaceChildren();
    return;
  }
  const parts = [
    // An answer that cites nothing says so first: nothing in it can be checked.
    answer.citations.length === 0 && !answer.insufficient
      ? h("p", { class: "no-citation", role: "note" }, t("student_ask_no_citation"))
      : null,
    answerText(answer),
    answer.insufficient ? h("p", { class: "muted" }, t("student_ask_insufficient")) : null,
    answer.citations.length > 0 ? h("h3", {}, t("student_ask_sources")) : null,
    answer.citations.length > 0
      ? h(
          "ol",
          { class: "citations" },
          ...answer.citations.map((citation, index) =>
            h(
              "li",
              { id: citationId(index), "data-citation": citation.ref },
              h("span", { class: "citation-kind" }, t(`student_citation_${citation.kind}`)),
              " · ",
              h("strong", { class: "citation-title" }, citation.title),
              citation.excerpt ? h("p", { class: "citation-excerpt" }, citation.excerpt) : null,
            ),
          ),
        )
      : null,
  ];
  box.replaceChildren(...parts.filter((part): part is HTMLElement => part !== null));
}

export function redrawAsk(): void {
  draw();
}

export function resetAsk(): void {
  answer = null;
  byId("ask-status").textContent = "";
  draw();
}

byId<HTMLButtonElement>("ask-about-me").addEventListener("click", (event) => {
  const me = state.me;
  if (!me) return;
  const status = byId("ask-status");
  void act(event.currentTarget as HTMLButtonElement, async () => {
    status.textContent = t("student_ask_thinking");
    try {
      const answered = unwrap(
        await api.POST("/api/v1/students/{student_id}/ask/", {
          params: { path: { student_id: me.id } },
          body: { question: t("student_ask_about_me_question") },
          headers: { Accept: "application/json" },
        }),
      ) as Answer; // JSON, not the stream: the Accept header chooses
      if (state.me?.id !== me.id) return; // signed out meanwhile
      answer = answered;
      draw();
      status.textContent = t("student_ask_done");
    } catch (error) {
      status.textContent = "";
      throw error;
    }
  });
});
