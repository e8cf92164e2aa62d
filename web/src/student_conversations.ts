/**
 * The student's conversations (GET /conversations/, newest first): open any one to read its
 * messages, end any open one, start a new one (the server ends the open ones: the list is read
 * again). A turn's messages are counted as they come, the server's count read after the turn.
 * On sign-in the latest open conversation is put on screen, unless the student opened or
 * started one meanwhile.
 */
import { type Conversation, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h, launched } from "./common";
import { formatDate, t } from "./i18n";
import { drawChat, onMessageAdded, onTurnEnd, resetChat, showChat } from "./student_chat";
import { redrawFiles, resetFiles, showFiles } from "./student_files";
import { watchForSummary } from "./student_memories";
import { conversationQuizzes } from "./student_quizzes";
import { announce, isOpen, plural, state } from "./student_state";

const PAGE_SIZE = 20;

let conversations: Conversation[] = [];
let page = 1;
let next = false;
let opening = 0; // the latest open request: an earlier one answering late is dropped

export function conversationTitle(conversation: Conversation): string {
  return conversation.subject || t("student_conversation_untitled", { date: formatDate(conversation.created_at) });
}

function known(updated: Conversation): void {
  conversations = conversations.some((c) => c.id === updated.id)
    ? conversations.map((c) => (c.id === updated.id ? updated : c))
    : [updated, ...conversations];
}

function item(conversation: Conversation): HTMLElement {
  const titleId = `conversation-${conversation.id}-title`;
  const current = state.conversation?.id === conversation.id;
  // Each button is read with the conversation's title, that says which one it acts on.
  const button = (label: string): HTMLButtonElement =>
    h("button", { type: "button", class: "secondary", "aria-describedby": titleId }, label) as HTMLButtonElement;
  const open = button(t("student_open"));
  open.disabled = current;
  open.addEventListener("click", () => void act(open, () => openConversation(conversation.id)));
  const end = isOpen(conversation) ? button(t("student_end")) : null;
  end?.addEventListener("click", () => void act(end, () => endConversation(conversation)));
  const facts = [
    t(conversation.status === "active" ? "student_conversation_state_active" : "student_conversation_state_ended"),
    t("student_conversation_started", { date: formatDate(conversation.created_at) }),
    t(`student_message_count_${plural(conversation.message_count)}`, { count: conversation.message_count }),
  ];
  return h(
    "li",
    {
      class: `conversation conversation-${conversation.status}`,
      "data-conversation": String(conversation.id),
      ...(current ? { "aria-current": "true" } : {}),
    },
    h("h3", { id: titleId }, conversationTitle(conversation)),
    h("p", { class: "meta" }, facts.join(" · ")),
    h("div", { class: "buttons" }, current ? h("span", { class: "current" }, t("student_on_screen")) : open, end),
  );
}

export function drawConversations(): void {
  byId("conversations").replaceChildren(...conversations.map(item));
  byId("conversations-empty").hidden = conversations.length > 0;
  byId("more-conversations").hidden = !next;
}

export async function loadConversations(more = false): Promise<void> {
  const wanted = more ? page + 1 : 1;
  const data = unwrap(
    await api.GET("/api/v1/conversations/", { params: { query: { page: wanted, page_size: PAGE_SIZE } } }),
  );
  const seen = new Set(data.results.map((c) => c.id));
  conversations = more ? [...conversations.filter((c) => !seen.has(c.id)), ...data.results] : data.results;
  page = wanted;
  next = Boolean(data.next);
  drawConversations();
}

/** Put a conversation on screen: its latest messages, its quizzes and its files. */
export async function openConversation(id: number): Promise<void> {
  const request = ++opening;
  const [detail, quizzes] = await Promise.all([
    api.GET("/api/v1/conversations/{conversation_id}/", { params: { path: { conversation_id: id } } }).then(unwrap),
    conversationQuizzes(id),
  ]);
  if (request !== opening) return;
  const { messages, ...conversation } = detail;
  state.conversation = conversation;
  known(conversation);
  showChat(messages.results, messages.next_before, quizzes);
  drawConversations();
  await showFiles();
}

/**
 * On sign-in: the conversation an LTI launch opened, else the latest open one, unless one was
 * put on screen meanwhile.
 */
export async function resumeConversation(): Promise<void> {
  const request = opening;
  await loadConversations();
  const latest =
    conversations.find((c) => c.id === launched.conversation) ?? conversations.find((c) => c.status === "active");
  if (latest && request === opening && state.conversation === null) await openConversation(latest.id);
}

async function endConversation(conversation: Conversation): Promise<void> {
  const ended = unwrap(
    await api.POST("/api/v1/conversations/{conversation_id}/end/", {
      params: { path: { conversation_id: conversation.id } },
    }),
  );
  known(ended);
  if (state.conversation?.id === ended.id) {
    state.conversation = ended;
    drawChat();
    redrawFiles();
  }
  drawConversations();
  announce("conversations", t("student_conversation_end_done", { title: conversationTitle(ended) }));
  watchForSummary(ended.id);
}

export function resetConversations(): void {
  conversations = [];
  page = 1;
  next = false;
  opening++;
  state.conversation = null;
  resetChat();
  resetFiles();
  drawConversations();
}

// A turn's message stored, or its reply streaming in: counted at once (the server's count follows
// when the turn ends).
onMessageAdded((id) => {
  const shown = conversations.find((c) => c.id === id);
  if (!shown) return;
  const counted = { ...shown, message_count: shown.message_count + 1 };
  known(counted);
  if (state.conversation?.id === id) state.conversation = counted;
  drawConversations();
});

// After a turn, the conversation's message count (and state) as the server has them.
onTurnEnd((id) => {
  api
    .GET("/api/v1/conversations/{conversation_id}/", { params: { path: { conversation_id: id }, query: { limit: 1 } } })
    .then(unwrap)
    .then(({ messages: _latest, ...conversation }) => {
      known(conversation);
      if (state.conversation?.id === id) {
        const changed = state.conversation.status !== conversation.status;
        state.conversation = conversation;
        if (changed) drawChat();
      }
      drawConversations();
    })
    .catch(() => undefined); // the list keeps its count; the page's error region is for the student's actions
});

byId<HTMLFormElement>("new-conversation").addEventListener("submit", (event) => {
  event.preventDefault();
  const subject = byId<HTMLInputElement>("subject");
  void act((event.currentTarget as HTMLFormElement).querySelector("button"), async () => {
    const created = unwrap(await api.POST("/api/v1/conversations/", { body: { subject: subject.value.trim() } }));
    opening++;
    state.conversation = created;
    known(created);
    subject.value = "";
    showChat([], null, []);
    drawConversations();
    // The server ended the student's other open conversations: the list shows them ended.
    await loadConversations();
    await showFiles();
    byId<HTMLTextAreaElement>("message").focus();
  });
});

byId<HTMLButtonElement>("end").addEventListener("click", (event) => {
  const current = state.conversation;
  if (!current) return;
  void act(event.currentTarget as HTMLButtonElement, () => endConversation(current));
});

byId<HTMLButtonElement>("more-conversations").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadConversations(true));
});
