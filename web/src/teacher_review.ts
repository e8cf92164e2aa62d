/**
 * The student's review queue, what waits for a teacher's decision:
 * - the card changes the model proposed (the card's `pending`): accept or reject
 *   (POST /card-changes/{id}/accept/ or /reject/);
 * - the pairs the summary model thought might be an update (GET /memory-reviews/?student=):
 *   replace the older memory by the newer (apply) or keep both (dismiss);
 * - the memories marked `needs_review` (a fallback summary): confirm as it is (a correction that
 *   keeps its text settles it), correct, or archive.
 */
import { type Memory, type Schemas, type User, unwrap } from "../../clients/typescript/src/index";
import { api, byId, h } from "./common";
import { formatDate, t } from "./i18n";
import type { CardChange, StudentCard } from "./teacher_api";
import { changeValue } from "./teacher_card";
import { excerpt } from "./teacher_evidence";
import { archiveForm, correctForm } from "./teacher_memories";
import { percent, sectionAct, sectionStatus } from "./teacher_ui";

type Supersession = Schemas["SupersessionReviewOutput"];

const SECTION = "review";
const MAX_PAGES = 10;

let student: User | null = null;
let pending: CardChange[] = [];
let pairs: Supersession[] = [];
let flagged: Memory[] = [];
/** Called after a decision here changed the card or the memories. */
let changed: (what: "card" | "memories") => void = () => undefined;

function buttons(...items: HTMLElement[]): HTMLElement {
  return h("p", { class: "buttons" }, ...items);
}

function button(label: string, onClick: (button: HTMLButtonElement) => Promise<void>, secondary = false): HTMLElement {
  const node = h("button", { type: "button", class: secondary ? "secondary" : "" }, label) as HTMLButtonElement;
  node.addEventListener("click", () => void sectionAct(SECTION, node, () => onClick(node)));
  return node;
}

function cardItem(c: CardChange): HTMLElement {
  const decide = (verdict: "accept" | "reject") => async () => {
    const params = { path: { change_id: c.id } };
    unwrap(
      verdict === "accept"
        ? await api.POST("/api/v1/card-changes/{change_id}/accept/", { params })
        : await api.POST("/api/v1/card-changes/{change_id}/reject/", { params }),
    );
    sectionStatus(SECTION, t(verdict === "accept" ? "card_accepted" : "card_rejected"));
    changed("card");
  };
  const facts: string[] = [t(`card_source_${c.source}`)];
  if (c.confidence !== null) facts.push(t("confidence_value", { value: percent(c.confidence) }));
  if (c.memory !== null) facts.push(t("proposed_by_memory", { id: c.memory }));
  facts.push(formatDate(c.created_at));
  return h(
    "li",
    { class: "review-item", "data-card-change": String(c.id) },
    h("h3", {}, t("review_card_change", { field: t(`card_${c.field}`) })),
    h("p", {}, t(`card_op_${c.op}`, { value: changeValue(c) })),
    c.reason ? h("p", { class: "reason" }, c.reason) : null,
    h("p", { class: "meta" }, facts.join(" · ")),
    buttons(button(t("card_change_accept"), decide("accept")), button(t("card_change_reject"), decide("reject"), true)),
  );
}

function side(key: "review_older" | "review_newer", memory: Memory): HTMLElement {
  return h(
    "div",
    { class: "side" },
    h("p", { class: "meta" }, `${t(key)} · ${t(`kind_${memory.kind}`)} · ${formatDate(memory.created_at)}`),
    h("p", {}, h("strong", {}, memory.title)),
    h("p", {}, excerpt(memory.content)),
  );
}

function pairItem(pair: Supersession): HTMLElement {
  const decide = (verdict: "apply" | "dismiss") => async () => {
    const params = { path: { review_id: pair.id } };
    unwrap(
      verdict === "apply"
        ? await api.POST("/api/v1/memory-reviews/{review_id}/apply/", { params })
        : await api.POST("/api/v1/memory-reviews/{review_id}/dismiss/", { params }),
    );
    sectionStatus(SECTION, t(verdict === "apply" ? "review_applied" : "review_dismissed"));
    changed("memories");
  };
  return h(
    "li",
    { class: "review-item", "data-supersession": String(pair.id) },
    h("h3", {}, t("review_supersession")),
    h("div", { class: "pair" }, side("review_older", pair.older), side("review_newer", pair.newer)),
    h("p", { class: "reason" }, pair.reason),
    h("p", { class: "meta" }, t("confidence_value", { value: percent(pair.confidence) })),
    buttons(button(t("review_apply"), decide("apply")), button(t("review_dismiss"), decide("dismiss"), true)),
  );
}

function flaggedItem(memory: Memory): HTMLElement {
  const done = async (text: string): Promise<void> => {
    sectionStatus(SECTION, text);
    changed("memories");
  };
  const confirm = async (): Promise<void> => {
    unwrap(
      await api.PATCH("/api/v1/memories/{memory_id}/", {
        params: { path: { memory_id: memory.id } },
        body: { title: memory.title },
      }),
    );
    await done(t("review_confirmed"));
  };
  return h(
    "li",
    { class: "review-item", "data-review-memory": String(memory.id) },
    h("h3", {}, t("review_needs_review", { title: memory.title })),
    memory.review_reason ? h("p", { class: "review-reason" }, memory.review_reason) : null,
    h("p", {}, memory.content),
    h("p", { class: "meta" }, `${t(`kind_${memory.kind}`)} · ${t(`source_${memory.source}`)} · ${formatDate(memory.created_at)}`),
    buttons(button(t("review_confirm"), confirm)),
    correctForm(memory, "review-correct", done),
    archiveForm(memory, "review-archive", done),
  );
}

function draw(): void {
  const items = [...pending.map(cardItem), ...pairs.map(pairItem), ...flagged.map(flaggedItem)];
  byId("review-count").textContent = student ? (items.length ? t("review_count", { count: items.length }) : t("review_empty")) : "";
  byId("review-items").replaceChildren(...items);
}

async function flaggedMemories(who: User): Promise<Memory[]> {
  const found: Memory[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const data = unwrap(
      await api.GET("/api/v1/memories/", { params: { query: { student: who.id, status: "active", page, page_size: 100 } } }),
    );
    found.push(...data.results.filter((m) => m.needs_review));
    if (!data.next) break;
  }
  return found;
}

/** Reload the supersession pairs and the memories to review (the card's part comes with the card). */
export async function loadReviews(who: User | null): Promise<void> {
  if (who?.id !== student?.id) pending = [];
  student = who;
  pairs = [];
  flagged = [];
  draw();
  if (!who) return;
  await sectionAct(SECTION, null, async () => {
    const [open, memories] = await Promise.all([
      api.GET("/api/v1/memory-reviews/", { params: { query: { student: who.id, status: "open", page_size: 100 } } }),
      flaggedMemories(who),
    ]);
    pairs = unwrap(open).results;
    flagged = memories;
    draw();
  });
}

/** The card's pending proposals, from the card section's reads. */
export function showCardPending(card: StudentCard | null): void {
  pending = card && card.student === student?.id ? card.pending : [];
  draw();
}

export function startReviews(listener: (what: "card" | "memories") => void): void {
  changed = listener;
}

export function redrawReviews(): void {
  draw();
}
