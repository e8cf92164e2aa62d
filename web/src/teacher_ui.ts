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
