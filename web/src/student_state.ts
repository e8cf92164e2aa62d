/**
 * What the student page's modules share: the signed-in student, the conversation on screen,
 * and the status line that announces the page's actions.
 */
import type { Conversation, User } from "../../clients/typescript/src/index";
import { byId } from "./common";
import { language } from "./i18n";

export const state: { me: User | null; conversation: Conversation | null } = { me: null, conversation: null };

const ANNOUNCE_MS = 8000;
let announced = 0;

/** Say what an action did, in the page's polite live region (shown for a few seconds). */
export function announce(text: string): void {
  const region = byId("page-status");
  region.textContent = text;
  const shown = ++announced;
  window.setTimeout(() => {
    if (shown === announced) region.textContent = "";
  }, ANNOUNCE_MS);
}

/** The plural form of `count` in the page's language, for keys ending in `_one` and `_other`. */
export function plural(count: number): "one" | "other" {
  return new Intl.PluralRules(language()).select(count) === "one" ? "one" : "other";
}

/** Whether the conversation on screen accepts messages and files. */
export function isOpen(conversation: Conversation | null = state.conversation): boolean {
  return conversation !== null && conversation.status === "active";
}
