/**
 * The student's conversations (GET /conversations/?student=, newest first) and the transcript
 * of one of them (GET /conversations/{id}/, then older pages of /messages/?before=), shown
 * oldest first. Other sections open a transcript by its conversation's id (a memory's source,
 * a fact's evidence): `openConversation`.
 */
import { type Conversation, type Message, type User, unwrap } from "../../clients/typescript/src/index";
import { api, byId, displayName, h } from "./common";
import { formatDate, plural, t } from "./i18n";
import { sectionAct } from "./teacher_ui";

const SECTION = "conversations";
const PAGE_SIZE = 20;
const MESSAGES = 100;

let student: User | null = null;
let conversations: Conversation[] = [];
let page = 1;
let more = false;
let open: { conversation: Conversation; messages: Message[]; before: number | null; marked: number | null } | null =
  null;

function title(conversation: Conversation): string {
  return conversation.subject
    ? t("conversation_title_subject", { subject: conversation.subject, date: formatDate(conversation.created_at) })
    : t("conversation_title", { date: formatDate(conversation.created_at) });
}

function item(conversation: Conversation): HTMLElement {
  const read = h("button", { type: "button", class: "secondary" }, t("read_conversation")) as HTMLButtonElement;
  read.addEventListener("click", () => void openConversation(conversation.id, read));
  const current = open?.conversation.id === conversation.id;
  return h(
    "li",
    { "data-conversation": String(conversation.id), class: current ? "current" : "" },
    h("p", { class: "conversation-title" }, title(conversation)),
    h(
      "p",
      { class: "meta" },
      t(`conversation_status_${conversation.status}`),
      " · ",
      t(`message_count_${plural(conversation.message_count)}`, { count: conversation.message_count }),
      conversation.ended_at ? ` · ${t("ended_on", { date: formatDate(conversation.ended_at) })}` : "",
    ),
    read,
  );
}

function message(m: Message): HTMLElement {
  const who = m.role === "student" ? (student ? displayName(student) : t("student")) : t("tutor");
  const marked = open?.marked === m.id;
  return h(
    "li",
    { class: `message ${m.role}${marked ? " marked" : ""}`, "data-message": String(m.id) },
    h("span", { class: "who" }, who, " · ", formatDate(m.created_at)),
    h("p", { class: "text" }, m.content),
  );
}

function draw(): void {
  byId("conversation-count").textContent = conversations.length ? "" : t("no_conversations");
  byId("conversation-list").replaceChildren(...conversations.map(item));
  byId("more-conversations").hidden = !more;
  const panel = byId("transcript");
  panel.hidden = open === null;
  if (!open) return;
  byId("transcript-heading").textContent = title(open.conversation);
  const count = open.conversation.message_count;
  byId("transcript-meta").textContent =
    `${t(`conversation_status_${open.conversation.status}`)} · ${t(`message_count_${plural(count)}`, { count })}`;
  byId("transcript-messages").replaceChildren(...open.messages.map(message));
  byId("transcript-empty").textContent = open.messages.length ? "" : t("no_messages");
  byId("older-messages").hidden = open.before === null;
}

async function loadPage(next: boolean): Promise<void> {
  if (!student) return;
  const wanted = next ? page + 1 : 1;
  const data = unwrap(
    await api.GET("/api/v1/conversations/", {
      params: { query: { student: student.id, page: wanted, page_size: PAGE_SIZE } },
    }),
  );
  conversations = next ? [...conversations, ...data.results] : data.results;
  page = wanted;
  more = Boolean(data.next);
  draw();
}

/**
 * Open one conversation's transcript (a conversation of the student shown, or any one the
 * teacher may read); `marked`: a message to bring into view and mark (a flag's).
 */
export async function openConversation(
  id: number,
  button: HTMLButtonElement | null = null,
  marked: number | null = null,
): Promise<void> {
  await sectionAct(SECTION, button, async () => {
    const data = unwrap(
      await api.GET("/api/v1/conversations/{conversation_id}/", {
        params: { path: { conversation_id: id }, query: { limit: MESSAGES } },
      }),
    );
    const { messages, ...conversation } = data;
    open = { conversation, messages: [...messages.results].reverse(), before: messages.next_before, marked };
    draw();
    const panel = byId("transcript");
    const message = marked === null ? null : panel.querySelector(`[data-message="${marked}"]`);
    (message ?? panel).scrollIntoView({ block: message ? "center" : "start" });
    panel.focus({ preventScroll: true });
  });
}

async function loadOlder(button: HTMLButtonElement): Promise<void> {
  const shown = open;
  if (!shown || shown.before === null) return;
  await sectionAct(SECTION, button, async () => {
    const data = unwrap(
      await api.GET("/api/v1/conversations/{conversation_id}/messages/", {
        params: { path: { conversation_id: shown.conversation.id }, query: { before: shown.before ?? 0, limit: MESSAGES } },
      }),
    );
    shown.messages = [...[...data.results].reverse(), ...shown.messages];
    shown.before = data.next_before;
    draw();
  });
}

export async function loadConversations(who: User | null): Promise<void> {
  if (who?.id !== student?.id) open = null;
  student = who;
  conversations = [];
  more = false;
  draw();
  await sectionAct(SECTION, null, () => loadPage(false));
}

export function redrawConversations(): void {
  draw();
}

byId<HTMLButtonElement>("more-conversations").addEventListener("click", (event) => {
  void sectionAct(SECTION, event.currentTarget as HTMLButtonElement, () => loadPage(true));
});
byId<HTMLButtonElement>("older-messages").addEventListener("click", (event) => {
  void loadOlder(event.currentTarget as HTMLButtonElement);
});
byId<HTMLButtonElement>("close-transcript").addEventListener("click", () => {
  const id = open?.conversation.id;
  open = null;
  draw();
  if (id !== undefined) document.querySelector<HTMLElement>(`[data-conversation="${id}"] button`)?.focus();
});
