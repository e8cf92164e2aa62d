/**
 * The crisis notice on the student's page: when screening finds the student may be in crisis,
 * the turn sends a `safety` event (the server's message and where to find help now, in the
 * student's language), shown at the top of the page until sign-out: each resource's name, its
 * phone number as a link to call and its web address as a link.
 */
import type { Schemas } from "../../clients/typescript/src/index";
import { byId, h } from "./common";
import { t } from "./i18n";

type Notice = Schemas["SafetyNoticeData"];
type Resource = Schemas["ResourceData"];

let shown: Notice | null = null;

/** Only web addresses become links (a resource's `url` is data, not trusted markup). */
function webAddress(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

/** A phone field as links to call: "999 (UK) / 911 (US)" is two numbers, each its own link. */
function phoneLinks(phone: string): (Node | string)[] {
  const parts: (Node | string)[] = [];
  phone.split(/\s*[/,;]\s*/).forEach((part, index) => {
    if (index > 0) parts.push(" / ");
    const dial = (/^\+?[\d][\d\s.-]*/.exec(part)?.[0] ?? "").replace(/[^\d+]/g, "");
    parts.push(dial.length >= 2 ? h("a", { href: `tel:${dial}` }, part) : part);
  });
  return parts;
}

function resourceItem(resource: Resource): HTMLElement {
  const url = resource.url ? webAddress(resource.url) : null;
  return h(
    "li",
    { class: "resource" },
    h("strong", { class: "resource-name" }, resource.name),
    resource.text && h("p", { class: "resource-text" }, resource.text),
    resource.phone &&
      h("p", { class: "resource-phone" }, `${t("student_safety_call")} `, ...phoneLinks(resource.phone)),
    url && h("p", { class: "resource-url" }, h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, url)),
  );
}

function draw(): void {
  const box = byId("safety-notice");
  box.hidden = shown === null;
  if (!shown) {
    box.replaceChildren();
    return;
  }
  box.replaceChildren(
    h("h2", { id: "safety-heading", tabindex: "-1" }, t("student_safety_notice_heading")),
    h("p", { class: "safety-message" }, shown.message),
  );
  if (shown.resources.length > 0) box.append(h("ul", { class: "resources" }, ...shown.resources.map(resourceItem)));
}

/** Show the notice of a turn, brought into view and focused so that it is read first. */
export function showSafety(notice: Notice): void {
  shown = notice;
  draw();
  const heading = byId("safety-heading");
  heading.scrollIntoView({ block: "start" });
  heading.focus();
}

/**
 * `text` without the help lines that end a crisis reply (safety.replies.resources_text: a blank
 * line, a heading, then "- <name>…" for each resource) when the notice above shows those same
 * resources: the student reads them once, in the notice, with their links to call. Any other
 * text, or a reply when no notice is shown (a later visit), is left whole.
 */
export function withoutShownResources(text: string): string {
  const resources = shown?.resources ?? [];
  if (resources.length === 0) return text;
  const cut = text.lastIndexOf("\n\n");
  if (cut < 0) return text;
  const lines = text.slice(cut + 2).split("\n").slice(1);
  const same = lines.length === resources.length && lines.every((line, i) => line.startsWith(`- ${resources[i]?.name}`));
  return same ? text.slice(0, cut) : text;
}

export function redrawSafety(): void {
  draw();
}

export function resetSafety(): void {
  shown = null;
  draw();
}
