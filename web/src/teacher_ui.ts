/**
 * Small pieces the teacher page's sections share: a labelled field, a description list, an
 * action whose failure is shown in its own section (a section that fails to load or save says
 * so where it is, and the others carry on), and the words for a mastery estimate.
 */
import { ApiError } from "../../clients/typescript/src/index";
import { byId, errorMessage, h } from "./common";
import { type Key, t } from "./i18n";

export function field(id: string, key: Key, control: HTMLElement): HTMLElement {
  control.id = id;
  return h("p", { class: "field" }, h("label", { for: id }, t(key)), control);
}

/** A description list of (label, value) rows, each marked `data-field`. */
export function describe(rows: [Key, string | Node][]): HTMLElement {
  const list = h("dl", { class: "provenance" });
  for (const [key, value] of rows) {
    list.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
  }
  return list;
}

/** The section's alert (`<id>-error`) and status (`<id>-status`) regions, shown as they change. */
export function sectionError(section: string, error: unknown): void {
  const region = byId(`${section}-error`);
  region.textContent = error === null ? "" : errorMessage(error);
  region.hidden = error === null;
}

export function sectionStatus(section: string, text: string): void {
  byId(`${section}-status`).textContent = text;
}

/**
 * Run a section's action with its button disabled; a failure is shown in the section's alert
 * region (a write's status is cleared first). True if it succeeded.
 */
export async function sectionAct(
  section: string,
  button: HTMLButtonElement | null,
  action: () => Promise<void>,
): Promise<boolean> {
  sectionError(section, null);
  if (button) button.disabled = true;
  try {
    await action();
    return true;
  } catch (error) {
    sectionError(section, error);
    return false;
  } finally {
    if (button) button.disabled = false;
  }
}

/**
 * Show a refused write's errors next to the fields of `form` they name (the envelope's
 * `details`, by field name): each message under its field, in the server's words, the field
 * marked invalid and described by it, and the first such field focused. True when some were
 * shown; other errors are left to the caller.
 */
export function showFieldErrors(form: HTMLFormElement, error: unknown): boolean {
  clearFieldErrors(form);
  if (!(error instanceof ApiError) || typeof error.details !== "object" || error.details === null) return false;
  let first: HTMLElement | null = null;
  for (const [name, messages] of Object.entries(error.details as Record<string, unknown>)) {
    const control = form.elements.namedItem(name);
    if (!(control instanceof HTMLElement) || !control.id) continue;
    const text = (Array.isArray(messages) ? messages : [messages]).map(String).join(" ");
    const note = h("span", { class: "field-error", id: `${control.id}-error` }, text);
    control.after(note);
    control.setAttribute("aria-invalid", "true");
    const described = control.getAttribute("aria-describedby");
    control.setAttribute("aria-describedby", [described, note.id].filter(Boolean).join(" "));
    first ??= control;
  }
  first?.focus();
  return first !== null;
}

/** Remove what `showFieldErrors` showed in `form`. */
export function clearFieldErrors(form: HTMLFormElement): void {
  for (const note of form.querySelectorAll<HTMLElement>(".field-error")) {
    const control = form.querySelector<HTMLElement>(`[aria-describedby~="${note.id}"]`);
    if (control) {
      control.removeAttribute("aria-invalid");
      const rest = (control.getAttribute("aria-describedby") ?? "").split(" ").filter((id) => id && id !== note.id);
      if (rest.length) control.setAttribute("aria-describedby", rest.join(" "));
      else control.removeAttribute("aria-describedby");
    }
    note.remove();
  }
}

/**
 * A form's write, as `sectionAct`: a refusal that names the form's fields is shown next to them
 * (`showFieldErrors`), any other failure in the section's alert region.
 */
export async function formAct(
  section: string,
  form: HTMLFormElement,
  button: HTMLButtonElement | null,
  action: () => Promise<void>,
): Promise<boolean> {
  sectionError(section, null);
  clearFieldErrors(form);
  if (button) button.disabled = true;
  try {
    await action();
    return true;
  } catch (error) {
    if (!showFieldErrors(form, error)) sectionError(section, error);
    return false;
  } finally {
    if (button) button.disabled = false;
  }
}

/** Whether a list's endpoint answered 404: a server without it. */
export function notServed(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

export type Band = "low" | "learning" | "near" | "mastered";

/** Mastery in four bands: below 40 %, below 70 %, below 95 % (the mastery threshold), mastered. */
export function band(estimate: number): Band {
  if (estimate >= 0.95) return "mastered";
  if (estimate >= 0.7) return "near";
  if (estimate >= 0.4) return "learning";
  return "low";
}

export const BANDS: Band[] = ["low", "learning", "near", "mastered"];

export function percent(value: number): string {
  return `${Math.round(value * 100)} %`;
}

/** The text of a list of words: "a, b, c", or the empty mark. */
export function words(items: readonly string[]): string {
  return items.length ? items.join(", ") : t("none");
}
