/**
 * The student card (GET/PATCH /students/{id}/card/): goals, accommodations, interests, level,
 * register, which parts the student may edit, and its size against its limit. The teacher edits
 * it in a form (lists one item a line); only changed fields are sent, and a card over its token
 * limit is refused by the server (400 `card_too_long`), whose message is shown in the section.
 * The history of changes (GET /students/{id}/card/changes/) opens on demand. Its pending
 * proposals are drawn by the review queue (`onCard`).
 */
import { type User, unwrap } from "../../clients/typescript/src/index";
import { api, byId, displayName, h } from "./common";
import { formatDate, t } from "./i18n";
import {
  type CardChange,
  type CardListField,
  type CardPatch,
  STUDENT_EDITABLE,
  type StudentCard,
  type StudentEditable,
} from "./teacher_api";
import { describe, field, sectionAct, sectionError, sectionStatus, words } from "./teacher_ui";

const SECTION = "card";
const LISTS: CardListField[] = ["goals", "accommodations", "interests"];
const HISTORY_PAGES = 2;

let student: User | null = null;
let card: StudentCard | null = null;
let changes: CardChange[] | null = null;
let onCard: (card: StudentCard | null) => void = () => undefined;

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

function view(shown: StudentCard): HTMLElement {
  return describe([
    ["card_goals", words(shown.goals)],
    ["card_accommodations", words(shown.accommodations)],
    ["card_interests", words(shown.interests)],
    ["card_level", shown.level || t("none")],
    ["card_register", shown.register || t("none")],
    ["card_student_editable", words(shown.student_editable.map((f) => t(`card_${f}`)))],
    ["card_size", t("card_tokens", { percent: Math.round((100 * shown.token_count) / Math.max(1, shown.token_limit)) })],
    ["updated", formatDate(shown.updated_at)],
  ]);
}

function form(shown: StudentCard): HTMLElement {
  const lists = Object.fromEntries(
    LISTS.map((name) => {
      const area = h("textarea", { name, rows: "3" }) as HTMLTextAreaElement;
      area.value = shown[name].join("\n");
      return [name, area];
    }),
  ) as Record<CardListField, HTMLTextAreaElement>;
  const level = h("input", { name: "level", maxlength: "200" }) as HTMLInputElement;
  level.value = shown.level;
  const register = h("input", { name: "register", maxlength: "200" }) as HTMLInputElement;
  register.value = shown.register;
  const editable = STUDENT_EDITABLE.map((name) => {
    const box = h("input", { type: "checkbox", name: "student_editable", value: name }) as HTMLInputElement;
    box.id = `card-editable-${name}`;
    box.checked = shown.student_editable.includes(name);
    return h("p", { class: "check" }, box, h("label", { for: box.id }, t(`card_${name}`)));
  });
  const submit = h("button", { type: "submit" }, t("card_save")) as HTMLButtonElement;
  const node = h(
    "form",
    { id: "card-form" },
    h("p", { class: "muted" }, t("card_one_per_line")),
    ...LISTS.map((name) => field(`card-${name}`, `card_${name}`, lists[name])),
    field("card-level", "card_level", level),
    field("card-register", "card_register", register),
    h("fieldset", {}, h("legend", {}, t("card_student_editable")), ...editable),
    submit,
  );
  node.addEventListener("submit", (event) => {
    event.preventDefault();
    const patch: CardPatch = {};
    for (const name of LISTS) {
      const value = lines(lists[name].value);
      if (!same(value, shown[name])) patch[name] = value;
    }
    if (level.value.trim() !== shown.level) patch.level = level.value.trim();
    if (register.value.trim() !== shown.register) patch.register = register.value.trim();
    const chosen = editable
      .map((p) => p.querySelector("input") as HTMLInputElement)
      .filter((box) => box.checked)
      .map((box) => box.value as StudentEditable);
    if (!same(chosen, shown.student_editable)) patch.student_editable = chosen;
    void save(patch, submit);
  });
  return node;
}

async function save(patch: CardPatch, button: HTMLButtonElement): Promise<void> {
  const who = student;
  if (!who) return;
  sectionStatus(SECTION, "");
  if (!Object.keys(patch).length) {
    sectionStatus(SECTION, t("card_unchanged"));
    return;
  }
  await sectionAct(SECTION, button, async () => {
    card = unwrap(
      await api.PATCH("/api/v1/students/{student_id}/card/", { params: { path: { student_id: who.id } }, body: patch }),
    );
    changes = null;
    draw();
    onCard(card);
    sectionStatus(SECTION, t("card_saved"));
    await historyIfOpen();
  });
}

/** A change's value in words: the student-editable list names fields of the card. */
export function changeValue(c: CardChange): string {
  const field = STUDENT_EDITABLE.find((name) => name === c.value);
  return c.field === "student_editable" && field ? t(`card_${field}`) : c.value;
}

function change(c: CardChange): HTMLElement {
  const who = c.actor ? c.actor.username : t(`card_source_${c.source}`);
  return h(
    "li",
    { "data-change": String(c.id) },
    h(
      "p",
      {},
      h("strong", {}, t(`card_${c.field}`)),
      " · ",
      t(`card_op_${c.op}`, { value: changeValue(c) }),
      " · ",
      h("span", { class: `change-${c.status}` }, t(`card_change_${c.status}`)),
    ),
    h("p", { class: "meta" }, `${formatDate(c.created_at)} · ${who}${c.reason ? ` · ${c.reason}` : ""}`),
  );
}

function draw(): void {
  byId("card-heading").textContent = student ? t("card_heading", { name: displayName(student) }) : t("card_heading_none");
  byId("card-view").replaceChildren(...(card ? [view(card)] : []));
  const edit = byId<HTMLDetailsElement>("card-edit");
  edit.hidden = card === null;
  const open = edit.open;
  edit.replaceChildren(h("summary", {}, t("card_edit")), ...(card ? [form(card)] : []));
  edit.open = open;
  byId("card-history").hidden = card === null;
  byId("card-changes").replaceChildren(
    ...(changes === null ? [] : changes.length ? changes.map(change) : [h("li", {}, t("card_no_changes"))]),
  );
}

async function loadChanges(): Promise<void> {
  const who = student;
  if (!who || changes !== null) return;
  await sectionAct(SECTION, null, async () => {
    const found: CardChange[] = [];
    for (let page = 1; page <= HISTORY_PAGES; page++) {
      const data = unwrap(
        await api.GET("/api/v1/students/{student_id}/card/changes/", {
          params: { path: { student_id: who.id }, query: { page, page_size: 100 } },
        }),
      );
      found.push(...data.results);
      if (!data.next) break;
    }
    changes = found;
    draw();
  });
}

async function historyIfOpen(): Promise<void> {
  if (byId<HTMLDetailsElement>("card-history").open) await loadChanges();
}

export async function loadCard(who: User | null): Promise<void> {
  student = who;
  card = null;
  changes = null;
  sectionStatus(SECTION, "");
  sectionError(SECTION, null);
  draw();
  if (!who) return onCard(null);
  await sectionAct(SECTION, null, async () => {
    card = unwrap(await api.GET("/api/v1/students/{student_id}/card/", { params: { path: { student_id: who.id } } }));
    draw();
  });
  onCard(card);
  await historyIfOpen();
}

export function startCard(listener: (card: StudentCard | null) => void): void {
  onCard = listener;
}

export function reloadCard(): Promise<void> {
  return loadCard(student);
}

export function redrawCard(): void {
  draw();
}

byId<HTMLDetailsElement>("card-history").addEventListener("toggle", (event) => {
  if ((event.currentTarget as HTMLDetailsElement).open) void loadChanges();
});
