/**
 * The ask box, for a student (POST /students/{id}/ask/) or for a class (POST
 * /classrooms/{id}/ask/): the answer streams in as it is written, then the checked answer
 * replaces it: each claim with links to the evidence it cites, a claim left without evidence
 * marked as such, the citations listed (what each is, its title and an excerpt, whose it is),
 * the students a class answer names with their evidence, and a plain notice when the evidence
 * does not answer the question. Refs the server dropped (never shown to the model) are not shown.
 */
import { byId, h } from "./common";
import { type Key, t } from "./i18n";
import { type Answer, askStream, type Citation } from "./teacher_api";
import { sectionAct } from "./teacher_ui";

export interface AskTarget {
  /** The ask endpoint's path under /api/v1, e.g. `/students/4/ask/`. */
  path: string;
  /** The label of the question field. */
  label: string;
}

export interface AskBox {
  /** Forget the answer shown (another student or class was chosen). */
  clear(): void;
  /** Redraw in the current language. */
  redraw(): void;
}

const REF_GROUP = /\[([^\]\n]{1,80})\]/g;

function refsIn(group: string): string[] {
  return group
    .split(/[,;]/)
    .map((ref) => ref.trim())
    .filter(Boolean);
}

/** `text` without its [ref] markers (any bracket whose every part is a ref the answer cites or dropped). */
function withoutMarkers(text: string, answer: Answer): string {
  const known = new Set([...answer.citations.map((c) => c.ref), ...answer.dropped]);
  return text
    .replace(REF_GROUP, (whole, group: string) => (refsIn(group).every((ref) => known.has(ref)) ? "" : whole))
    .replace(/\s+([.,;:!?])/g, "$1")
    .replace(/\s{2,}/g, " ")
    .trim();
}

const KIND_LABEL: Record<Citation["kind"], Key> = {
  memory: "cite_memory",
  quiz: "cite_quiz",
  skill: "cite_skill",
  task: "cite_task",
  file: "cite_file",
  card: "cite_card",
};

/** Draw a checked answer. `names` gives a student's name from their id. */
export function drawAnswer(answer: Answer, prefix: string, names: (id: number) => string, open?: (id: number) => void): HTMLElement {
  const numbers = new Map(answer.citations.map((c, i) => [c.ref, i + 1]));
  const links = (refs: readonly string[]): Node[] =>
    refs
      .filter((ref) => numbers.has(ref))
      .map((ref) => h("a", { href: `#${prefix}-cite-${numbers.get(ref)}`, class: "ref", "data-ref": ref }, `[${numbers.get(ref)}]`));
  const claims = answer.claims.length
    ? answer.claims.map((claim) =>
        h(
          "span",
          { class: claim.supported ? "claim" : "claim unsupported" },
          withoutMarkers(claim.text, answer),
          ...links(claim.refs),
          claim.supported ? null : h("em", { class: "no-evidence" }, ` (${t("claim_unsupported")})`),
          " ",
        ),
      )
    : [withoutMarkers(answer.answer, answer)];
  const students = answer.students.length
    ? h(
        "div",
        { class: "named" },
        h("p", { class: "meta" }, t("answer_students")),
        h(
          "ul",
          {},
          ...answer.students.map((s) => {
            const button = h("button", { type: "button", class: "link" }, s.username) as HTMLButtonElement;
            button.addEventListener("click", () => open?.(s.id));
            return h("li", { "data-student": String(s.id) }, open ? button : s.username, " ", ...links(s.refs));
          }),
        ),
      )
    : null;
  return h(
    "div",
    { class: "answer", "data-answer": String(answer.id) },
    answer.insufficient ? h("p", { class: "insufficient" }, t("answer_insufficient")) : null,
    // An answer that cites nothing says so first: nothing in it can be checked.
    answer.citations.length === 0 && !answer.insufficient
      ? h("p", { class: "no-citation", role: "note" }, t("answer_no_citation"))
      : null,
    h("p", { class: "answer-text" }, ...claims),
    students,
    answer.citations.length
      ? h(
          "div",
          { class: "citations" },
          h("p", { class: "meta" }, t("answer_citations")),
          h(
            "ol",
            {},
            ...answer.citations.map((c, i) =>
              h(
                "li",
                { id: `${prefix}-cite-${i + 1}`, "data-ref": c.ref, "data-kind": c.kind },
                h("span", { class: "kind" }, t(KIND_LABEL[c.kind])),
                answer.students.length ? ` · ${names(c.student)}` : "",
                " · ",
                h("strong", { class: "cite-title" }, c.title),
                c.excerpt ? h("span", { class: "cite-excerpt" }, ` — ${c.excerpt}`) : null,
              ),
            ),
          ),
        )
      : null,
  );
}

/**
 * An ask box in the element `#<prefix>`, with its alert region `#<prefix>-error`. `target`
 * names what is asked about (null: nothing chosen yet).
 */
export function askBox(
  prefix: string,
  target: () => AskTarget | null,
  names: (id: number) => string,
  open?: (id: number) => void,
): AskBox {
  const root = byId(prefix);
  const question = h("textarea", { name: "question", rows: "2", maxlength: "1000", required: true }) as HTMLTextAreaElement;
  question.id = `${prefix}-question`;
  const label = h("label", { for: question.id });
  const submit = h("button", { type: "submit" }) as HTMLButtonElement;
  const output = h("div", { class: "answer-area", "aria-live": "polite" });
  let answer: Answer | null = null;
  let streamed = "";
  let asking = false;

  function draw(): void {
    label.textContent = target()?.label ?? t("ask_question");
    submit.textContent = t("ask");
    if (answer) output.replaceChildren(drawAnswer(answer, prefix, names, open));
    else if (streamed) output.replaceChildren(h("p", { class: "answer-text streaming" }, streamed));
    // Before the first words (the evidence is gathered first): say that the answer is coming.
    else if (asking) output.replaceChildren(h("p", { class: "thinking", role: "status" }, t("ask_thinking")));
    else output.replaceChildren();
  }

  const form = h("form", { class: "ask" }, h("p", { class: "field" }, label, question), submit);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = target();
    if (!chosen) return;
    answer = null;
    streamed = "";
    asking = true;
    draw();
    output.setAttribute("aria-busy", "true");
    void sectionAct(prefix, submit, async () => {
      for await (const e of askStream(chosen.path, question.value)) {
        if (e.event === "delta") streamed += e.text;
        else answer = e.answer;
        draw();
      }
    }).finally(() => {
      asking = false;
      output.removeAttribute("aria-busy");
      draw();
    });
  });
  root.replaceChildren(form, output);
  draw();
  return {
    clear() {
      answer = null;
      streamed = "";
      asking = false;
      question.value = "";
      draw();
    },
    redraw: draw,
  };
}
