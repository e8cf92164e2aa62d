/**
 * The conversation on screen: its messages (older ones on demand) with the quizzes made in it,
 * and sending a message with the reply streaming in (POST .../messages/ as Server-Sent Events).
 *
 * A message whose turn failed (the tutor unavailable, the connection lost, the stream cut) stays
 * in the log with its text and client_message_id, marked unanswered with a button that sends it
 * again with the same id: the server never stores it twice nor asks the model twice (the error
 * envelope's retry_safe). A stored student message without a reply (a turn that failed in an
 * earlier visit) is marked the same way.
 */
import {
  ApiError,
  type Message,
  newClientMessageId,
  type Schemas,
  turnStream,
  unwrap,
} from "../../clients/typescript/src/index";
import { api, byId, h, showError } from "./common";
import { formatDate, t } from "./i18n";
import { canRetry, StreamCut, studentErrorText } from "./student_errors";
import { memoryAdded } from "./student_memories";
import { quizCard, quizListed } from "./student_quizzes";
import { showSafety, withoutShownResources } from "./student_safety";
import { announce, isOpen, state } from "./student_state";

type Quiz = Schemas["QuizOutput"];

let messages: Message[] = [];
let nextBefore: number | null = null;
let quizzes: { id: number; at: string }[] = [];
// Messages whose turn failed in this visit, by client_message_id: their conversation, text and why.
const failed = new Map<string, { conversation: number; content: string; error: string }>();
let sending: string | null = null;
// Told the conversation's id after each turn, answered or not (its message count changed).
let turnEnded: (conversationId: number) => void = () => undefined;
// Told of each message a turn adds while it runs: the student's, then the reply as it streams.
let messageAdded: (conversationId: number) => void = () => undefined;

export function onTurnEnd(listener: (conversationId: number) => void): void {
  turnEnded = listener;
}

export function onMessageAdded(listener: (conversationId: number) => void): void {
  messageAdded = listener;
}

const log = () => byId<HTMLOListElement>("messages");

/** A message of the log; a tutor's reply is shown without the help lines the notice above shows. */
function messageItem(role: "student" | "tutor", content: string): HTMLLIElement {
  return h(
    "li",
    { class: `message ${role}` },
    h("span", { class: "who" }, t(role === "student" ? "you" : "tutor")),
    h("p", { class: "text" }, role === "tutor" ? withoutShownResources(content) : content),
  ) as HTMLLIElement;
}

function retryButton(content: string, id: string, note: string): HTMLElement {
  const button = h(
    "button",
    { type: "button", class: "secondary retry", "aria-describedby": note },
    t("student_retry"),
  ) as HTMLButtonElement;
  button.disabled = sending !== null;
  button.addEventListener("click", () => void send(content, id));
  return button;
}

/** A student message not answered: why, and a button to send it again (same client_message_id). */
function unansweredItem(content: string, id: string | null, error: string): HTMLLIElement {
  const item = messageItem("student", content);
  item.classList.add("unanswered");
  const note = `unanswered-${id ?? "unknown"}`;
  if (id) item.dataset.clientMessageId = id;
  item.append(
    h(
      "p",
      { class: "unanswered-note", id: note },
      h("span", { class: "mark", "aria-hidden": "true" }, "!"),
      ` ${error}`,
    ),
  );
  if (id && isOpen()) item.append(retryButton(content, id, note));
  return item;
}

function studentItem(message: Message, answered: Set<number>): HTMLLIElement {
  const id = message.client_message_id;
  if (answered.has(message.id) || (id !== null && id === sending)) return messageItem("student", message.content);
  const error = (id !== null && failed.get(id)?.error) || t("student_message_unanswered");
  return unansweredItem(message.content, id, error);
}

function quizItem(id: number): HTMLLIElement {
  return h("li", { class: "message quiz-message" }, quizCard(id, "chat")) as HTMLLIElement;
}

/** Draw the whole log: messages and quizzes by time, then messages never stored. */
export function drawChat(): void {
  const conversation = state.conversation;
  const status = byId("conversation-status");
  if (!conversation) {
    status.textContent = t("no_conversation");
  } else if (conversation.status === "ended") {
    status.textContent = t("conversation_ended");
  } else {
    const date = formatDate(conversation.created_at);
    status.textContent = conversation.subject
      ? t("conversation_open_subject", { subject: conversation.subject, date })
      : t("conversation_open", { date });
  }
  const answered = new Set(messages.map((m) => m.reply_to).filter((id): id is number => id !== null));
  const entries: { at: number; order: number; node: () => HTMLLIElement }[] = [
    ...messages.map((m) => ({
      at: Date.parse(m.created_at),
      order: m.seq,
      node: () => (m.role === "student" ? studentItem(m, answered) : messageItem("tutor", m.content)),
    })),
    ...quizzes.map((q) => ({ at: Date.parse(q.at), order: Number.MAX_SAFE_INTEGER, node: () => quizItem(q.id) })),
  ];
  entries.sort((a, b) => a.at - b.at || a.order - b.order);
  const stored = new Set(messages.map((m) => m.client_message_id));
  const unsent = [...failed].filter(
    ([id, f]) => f.conversation === conversation?.id && !stored.has(id) && id !== sending,
  );
  const list = log();
  list.replaceChildren(
    ...entries.map((e) => e.node()),
    ...unsent.map(([id, f]) => unansweredItem(f.content, id, f.error)),
  );
  list.hidden = list.childElementCount === 0;
  byId("older-messages").hidden = nextBefore === null;
  byId("send-form").hidden = !isOpen();
}

/** Put a conversation on screen with its latest messages (newest first, as the API gives them). */
export function showChat(latest: Message[], before: number | null, made: Quiz[]): void {
  messages = [...latest].reverse();
  nextBefore = before;
  quizzes = made.map((q) => ({ id: q.id, at: q.created_at }));
  drawChat();
}

export function resetChat(): void {
  messages = [];
  nextBefore = null;
  quizzes = [];
  failed.clear();
  byId("turn-status").textContent = "";
  drawChat();
}

async function olderMessages(): Promise<void> {
  const conversation = state.conversation;
  if (!conversation || nextBefore === null) return;
  const page = unwrap(
    await api.GET("/api/v1/conversations/{conversation_id}/messages/", {
      params: { path: { conversation_id: conversation.id }, query: { before: nextBefore } },
    }),
  );
  if (state.conversation?.id !== conversation.id) return;
  const known = new Set(messages.map((m) => m.id));
  messages = [...page.results.filter((m) => !known.has(m.id)).reverse(), ...messages];
  nextBefore = page.next_before;
  drawChat();
}

/** Send `content` (again, with its `id`, for a retry) and follow the turn's events. */
async function send(content: string, id: string): Promise<void> {
  const conversation = state.conversation;
  if (!conversation || sending !== null) return;
  sending = id;
  const list = log();
  const button = byId<HTMLButtonElement>("send");
  const box = byId<HTMLTextAreaElement>("message");
  const status = byId("turn-status");
  let reply: HTMLElement | null = null;
  let written = "";
  button.disabled = true;
  drawChat(); // a retried message loses its mark while it is sent
  list.setAttribute("aria-busy", "true"); // announced once the reply is complete
  status.textContent = t("sending");
  showError(null);
  try {
    for await (const event of turnStream(api, conversation.id, { content, client_message_id: id })) {
      if (state.conversation?.id !== conversation.id) return; // another conversation was opened
      if (event.event === "message") {
        if (!messages.some((m) => m.id === event.data.id)) {
          messages.push(event.data);
          list.append(messageItem("student", event.data.content));
          list.hidden = false;
          messageAdded(conversation.id);
        }
        if (box.value === content) box.value = "";
      } else if (event.event === "delta") {
        if (!reply) {
          const item = messageItem("tutor", "");
          item.classList.add("streaming");
          list.append(item);
          reply = item.querySelector(".text");
          messageAdded(conversation.id);
        }
        written += event.data.content;
        if (reply) reply.textContent = withoutShownResources(written);
      } else if (event.event === "reply_replaced") {
        written = event.data.content;
        if (reply) reply.textContent = withoutShownResources(written);
      } else if (event.event === "memory") {
        status.textContent = t("memory_saved", { title: event.data.title });
        memoryAdded(event.data);
      } else if (event.event === "quiz") {
        quizzes.push({ id: event.data.id, at: event.data.created_at });
        quizListed(event.data);
        const item = quizItem(event.data.id);
        if (reply) reply.closest("li")?.before(item);
        else list.append(item);
        status.textContent = t("student_quiz_made", { topic: event.data.topic });
      } else if (event.event === "safety") {
        showSafety(event.data);
      } else if (event.event === "done") {
        if (!reply) {
          list.append(messageItem("tutor", ""));
          reply = list.lastElementChild?.querySelector(".text") ?? null;
          messageAdded(conversation.id);
        }
        if (reply) reply.textContent = withoutShownResources(event.data.content); // the stored reply, whole
        reply?.parentElement?.classList.remove("streaming");
        messages.push(event.data);
        failed.delete(id);
        sending = null;
        if (!reply?.isConnected) drawChat(); // redrawn meanwhile (a language switch)
        status.textContent = "";
        return;
      } else {
        throw new ApiError(0, event.data);
      }
    }
    throw new StreamCut();
  } catch (error) {
    reply?.closest("li")?.remove();
    status.textContent = "";
    sending = null;
    if (canRetry(error)) {
      // Kept in the log with why and its retry button, which takes the focus if the student was
      // at the form (it is read with its reason); the box is free for another message.
      const text = studentErrorText(error, true) ?? t("student_message_unanswered");
      failed.set(id, { conversation: conversation.id, content, error: text });
      if (box.value === content) box.value = "";
      const active = document.activeElement;
      const atForm = active === document.body || Boolean(active?.closest("#send-form, .retry"));
      if (state.conversation?.id !== conversation.id) return;
      drawChat();
      if (atForm) list.querySelector<HTMLElement>(`[data-client-message-id="${CSS.escape(id)}"] .retry`)?.focus();
    } else {
      // Refused (too long, conversation ended...): the text comes back to be changed.
      failed.delete(id);
      if (!box.value) box.value = content;
      showError(error);
      if (state.conversation?.id === conversation.id) drawChat();
    }
  } finally {
    if (sending === id) sending = null;
    list.setAttribute("aria-busy", "false");
    button.disabled = false;
    turnEnded(conversation.id);
  }
}

byId<HTMLFormElement>("send-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const content = byId<HTMLTextAreaElement>("message").value;
  if (content.trim()) void send(content, newClientMessageId());
});

byId<HTMLTextAreaElement>("message").addEventListener("keydown", (event) => {
  // Enter sends, Shift+Enter starts a new line (as in most chat apps).
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    byId<HTMLFormElement>("send-form").requestSubmit();
  }
});

byId<HTMLButtonElement>("older-messages").addEventListener("click", (event) => {
  const button = event.currentTarget as HTMLButtonElement;
  button.disabled = true;
  olderMessages()
    .catch(showError)
    .finally(() => {
      button.disabled = false;
    });
});
