/**
 * The teacher page's safety queue: the flags of one's students (GET /api/v1/safety/flags/,
 * open ones first, the most severe first), each with its excerpt, category, severity, student
 * and time, a button that opens its conversation's transcript (the page's student view), and
 * the Acknowledge and Resolve actions (note and outcome) through the API. Each
 * flag is anchored `#flag-<id>`: an alert's link opens the page on it (fetched on its own when
 * it is not on the first page).
 */
import { type Flag, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h } from "./common";
import { formatDate, t } from "./i18n";

const PAGE_SIZE = 50;
const CLOSED = new Set<Flag["status"]>(["resolved", "false_positive"]);

let flags: Flag[] = [];
let next = false;
let page = 1;
// Opens a flag's conversation (the page wires it to the transcript).
let readConversation: (flag: Flag) => void = () => undefined;

export function onReadConversation(listener: (flag: Flag) => void): void {
  readConversation = listener;
}

function conversationButton(flag: Flag): HTMLElement | null {
  if (flag.conversation === null || flag.conversation === undefined) return null;
  const button = h(
    "button",
    { type: "button", class: "secondary read-conversation", "aria-describedby": `flag-${flag.id}-title` },
    t("flag_read_conversation"),
  );
  button.addEventListener("click", () => readConversation(flag));
  return h("p", { class: "source-link" }, button);
}

function announce(text: string): void {
  byId("safety-status").textContent = text;
}

function studentName(flag: Flag): string {
  const full = [flag.student.first_name, flag.student.last_name].filter(Boolean).join(" ");
  return full ? `${full} (${flag.student.username})` : flag.student.username;
}

function replace(updated: Flag): void {
  flags = flags.map((f) => (f.id === updated.id ? updated : f));
  draw();
  byId(`flag-${updated.id}`).focus();
}

function acknowledgeForm(flag: Flag): HTMLElement {
  const note = h("input", { name: "note", maxlength: "2000" }) as HTMLInputElement;
  note.id = `acknowledge-${flag.id}-note`;
  const submit = h("button", { type: "submit" }, t("acknowledge")) as HTMLButtonElement;
  const form = h(
    "form",
    { class: "acknowledge inline" },
    h("p", { class: "field" }, h("label", { for: note.id }, t("acknowledge_note")), note),
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(submit, async () => {
      const updated = unwrap(
        await api.POST("/api/v1/safety/flags/{flag_id}/acknowledge/", {
          params: { path: { flag_id: flag.id } },
          body: { note: note.value },
        }),
      );
      replace(updated);
      announce(t("acknowledged"));
    });
  });
  return form;
}

function resolveForm(flag: Flag): HTMLElement {
  const note = h("textarea", { name: "note", rows: "2", maxlength: "2000", required: true }) as HTMLTextAreaElement;
  note.id = `resolve-${flag.id}-note`;
  const outcome = h(
    "select",
    { name: "outcome" },
    h("option", { value: "resolved" }, t("flag_status_resolved")),
    h("option", { value: "false_positive" }, t("flag_status_false_positive")),
  ) as HTMLSelectElement;
  outcome.id = `resolve-${flag.id}-outcome`;
  const submit = h("button", { type: "submit" }, t("resolve_confirm")) as HTMLButtonElement;
  const form = h(
    "form",
    { class: "resolve" },
    h("p", { class: "field" }, h("label", { for: note.id }, t("resolve_note")), note),
    h("p", { class: "field" }, h("label", { for: outcome.id }, t("resolve_outcome")), outcome),
    submit,
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(submit, async () => {
      const updated = unwrap(
        await api.POST("/api/v1/safety/flags/{flag_id}/resolve/", {
          params: { path: { flag_id: flag.id } },
          body: { note: note.value, outcome: outcome.value === "false_positive" ? "false_positive" : "resolved" },
        }),
      );
      replace(updated);
      announce(t("resolved"));
    });
  });
  return h("details", { class: "action" }, h("summary", {}, t("resolve")), form);
}

function flagCard(flag: Flag): HTMLElement {
  const rows: [Parameters<typeof t>[0], string][] = [
    ["flag_student", studentName(flag)],
    ["flag_category", t(`category_${flag.category}`)],
    ["source", t(`source_${flag.source}`)],
    ["flag_when", formatDate(flag.created_at)],
    ["flag_status", t(`flag_status_${flag.status}`)],
  ];
  if (flag.quiet) rows.push(["flag_alert", t("flag_quiet")]);
  if (flag.outcome) rows.push(["flag_outcome", flag.outcome]);
  const details = h("dl", { class: "provenance" });
  for (const [key, value] of rows) {
    details.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
  }
  const closed = CLOSED.has(flag.status);
  return h(
    "li",
    { id: `flag-${flag.id}`, tabindex: "-1" },
    h(
      "article",
      {
        class: `flag severity-${flag.severity} flag-status-${flag.status}`,
        "data-flag": String(flag.id),
        "aria-labelledby": `flag-${flag.id}-title`,
      },
      h(
        "h3",
        { id: `flag-${flag.id}-title` },
        h("span", { class: "severity" }, t(`severity_${flag.severity}`)),
        " ",
        t(`category_${flag.category}`),
      ),
      flag.alert_unrouted && h("p", { class: "error unrouted" }, t("flag_unrouted")),
      h("p", { class: "excerpt" }, flag.excerpt),
      details,
      conversationButton(flag),
      flag.status === "open" && acknowledgeForm(flag),
      !closed && resolveForm(flag),
    ),
  );
}

function draw(): void {
  byId("flag-count").textContent = flags.length ? "" : t("no_flags");
  byId("flags").replaceChildren(...flags.map(flagCard));
  byId("more-flags").hidden = !next;
}

/** The flag the URL names (`#flag-<id>`), if any. */
function anchored(): number | null {
  const match = /^#flag-(\d+)$/.exec(window.location.hash);
  return match ? Number(match[1]) : null;
}

/** Bring the anchored flag into view, fetching it when it is not on the pages shown. */
async function showAnchored(): Promise<void> {
  const id = anchored();
  if (id === null) return;
  if (!flags.some((f) => f.id === id)) {
    const result = await api.GET("/api/v1/safety/flags/{flag_id}/", { params: { path: { flag_id: id } } });
    if (!result.data) return; // not one of this teacher's (404): nothing to show
    flags = [result.data, ...flags];
    draw();
  }
  const item = byId(`flag-${id}`);
  item.scrollIntoView({ block: "start" });
  item.focus();
}

export async function loadFlags(more = false): Promise<void> {
  const wanted = more ? page + 1 : 1;
  const data = unwrap(
    await api.GET("/api/v1/safety/flags/", {
      params: { query: { ordering: "severity", page: wanted, page_size: PAGE_SIZE } },
    }),
  );
  const seen = new Set(data.results.map((f) => f.id));
  flags = more ? [...flags.filter((f) => !seen.has(f.id)), ...data.results] : data.results;
  page = wanted;
  next = Boolean(data.next);
  draw();
  if (!more) await showAnchored();
}

export function redrawFlags(): void {
  draw();
}

export function resetFlags(): void {
  flags = [];
  next = false;
  page = 1;
  announce("");
  draw();
}

byId<HTMLButtonElement>("more-flags").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadFlags(true));
});
window.addEventListener("hashchange", () => {
  void act(null, showAnchored);
});
