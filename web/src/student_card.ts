/**
 * "About me": the student's own card (GET /students/{me}/card/), what the tutor keeps in mind
 * about them in every conversation, and a form for the parts their teacher opened to them
 * (`student_editable`; PATCH /students/{me}/card/ with only those fields, only when changed).
 * The section stays hidden when the card cannot be read. A refusal (a value too long, a card
 * over its limit) is shown in the section, in the server's words.
 */
import { type Schemas, unwrap } from "../../clients/typescript/src/index";
import { api, byId, errorMessage, h } from "./common";
import { type Key, t } from "./i18n";
import { announce, state } from "./student_state";

type Card = Schemas["StudentCardOutput"];
type Editable = Schemas["CardEditableFieldEnum"];
type Patch = Schemas["PatchedStudentCardInputRequest"];

const LISTS = ["goals", "interests"] as const;
type ListField = (typeof LISTS)[number];
const FIELDS: Editable[] = ["goals", "interests", "level", "register"];

let card: Card | null = null;

function label(field: Editable | "accommodations"): Key {
  return `card_${field}`;
}

function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

function shownValue(shown: Card, field: Editable | "accommodations"): string {
  const value = shown[field];
  return Array.isArray(value) ? value.join(", ") : value;
}

function view(shown: Card): HTMLElement {
  const list = h("dl", { class: "provenance" });
  const fields: (Editable | "accommodations")[] = [...FIELDS, "accommodations"];
  for (const field of fields) {
    const value = shownValue(shown, field);
    if (field === "accommodations" && !value) continue;
    list.append(h("div", { "data-field": field }, h("dt", {}, t(label(field))), h("dd", {}, value || t("none"))));
  }
  return list;
}

function showError(error: unknown): void {
  const region = byId("card-error");
  region.textContent = error === null ? "" : errorMessage(error);
  region.hidden = error === null;
}

function form(shown: Card): HTMLElement {
  const editable = FIELDS.filter((field) => shown.student_editable.includes(field));
  const controls = new Map<Editable, HTMLInputElement | HTMLTextAreaElement>();
  for (const field of editable) {
    const isList = (LISTS as readonly string[]).includes(field);
    const control = isList
      ? (h("textarea", { name: field, rows: "3" }) as HTMLTextAreaElement)
      : (h("input", { name: field, maxlength: "200" }) as HTMLInputElement);
    control.id = `my-card-${field}`;
    control.value = isList ? shown[field as ListField].join("\n") : shownValue(shown, field);
    controls.set(field, control);
  }
  const submit = h("button", { type: "submit" }, t("student_card_save")) as HTMLButtonElement;
  const node = h(
    "form",
    { id: "my-card-form" },
    ...[...controls].map(([field, control]) =>
      h(
        "p",
        { class: "field" },
        h("label", { for: control.id }, t(label(field))),
        (LISTS as readonly string[]).includes(field) ? h("span", { class: "hint" }, t("student_card_one_per_line")) : null,
        control,
      ),
    ),
    submit,
  );
  node.addEventListener("submit", (event) => {
    event.preventDefault();
    const patch: Patch = {};
    for (const [field, control] of controls) {
      if ((LISTS as readonly string[]).includes(field)) {
        const value = lines(control.value);
        if (value.join("\n") !== shown[field as ListField].join("\n")) patch[field as ListField] = value;
      } else if (control.value.trim() !== shownValue(shown, field)) {
        patch[field as "level" | "register"] = control.value.trim();
      }
    }
    void save(patch, submit);
  });
  return node;
}

async function save(patch: Patch, button: HTMLButtonElement): Promise<void> {
  const me = state.me;
  if (!me) return;
  showError(null);
  if (!Object.keys(patch).length) {
    announce("card", t("student_card_unchanged"));
    return;
  }
  button.disabled = true;
  try {
    card = unwrap(
      await api.PATCH("/api/v1/students/{student_id}/card/", { params: { path: { student_id: me.id } }, body: patch }),
    );
    draw();
    announce("card", t("student_card_saved"));
  } catch (error) {
    showError(error);
  } finally {
    button.disabled = false;
  }
}

function draw(): void {
  const section = byId("about-me");
  section.hidden = card === null;
  byId("card-view").replaceChildren(...(card ? [view(card)] : []));
  const edit = byId<HTMLDetailsElement>("card-edit");
  const editable = card ? FIELDS.filter((field) => card?.student_editable.includes(field)) : [];
  edit.hidden = editable.length === 0;
  byId("card-editable").textContent = editable.length
    ? t("student_card_you_may_edit", { fields: editable.map((field) => t(label(field)).toLowerCase()).join(", ") })
    : "";
  const open = edit.open;
  edit.replaceChildren(h("summary", {}, t("student_card_edit")), ...(card && editable.length ? [form(card)] : []));
  edit.open = open;
}

/** Read the signed-in student's card; a card that cannot be read leaves the section hidden. */
export async function loadCard(): Promise<void> {
  const me = state.me;
  if (!me) return;
  const result = await api.GET("/api/v1/students/{student_id}/card/", { params: { path: { student_id: me.id } } });
  if (state.me?.id !== me.id) return;
  card = result.data ?? null;
  draw();
}

export function redrawCard(): void {
  draw();
}

export function resetCard(): void {
  card = null;
  showError(null);
  draw();
}
