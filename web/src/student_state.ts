/**
 * What the student page's modules share: the signed-in student, the conversation on screen,
 * and the status lines that say what an action did, each in the section it was done in.
 */
import type { Conversation, User } from "../../clients/typescript/src/index";
import { byId } from "./common";

export { plural } from "./i18n";

export const state: { me: User | null; conversation: Conversation | null } = { me: null, conversation: null };

const ANNOUNCE_MS = 8000;
const announced = new Map<string, number>();

/**
 * Say what an action did in the polite live region `#<section>-status` of the section it was
 * done in (shown for a few seconds). The line sits in the page's flow, under the section's
 * heading: it never covers what the student reads or is about to press.
 */
export function announce(section: string, text: string): void {
  const region = byId(`${section}-status`);
  region.textContent = text;
  const shown = (announced.get(section) ?? 0) + 1;
  announced.set(section, shown);
  window.setTimeout(() => {
    if (announced.get(section) === shown) region.textContent = "";
  }, ANNOUNCE_MS);
}

/** Whether the conversation on screen accepts messages and files. */
export function isOpen(conversation: Conversation | null = state.conversation): boolean {
  return conversation !== null && conversation.status === "active";
}
