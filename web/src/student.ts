/**
 * The student's page (/app/): talk with the tutor (the reply streams in as the model writes
 * it), end the conversation, and read what the tutor remembers.
 */
import {
  ApiError,
  type Conversation,
  type Memory,
  type Message,
  newClientMessageId,
  turnStream,
  unwrap,
} from "../../clients/typescript/src/index";
import { act, api, byId, h, label, run, showError } from "./common";
import { formatDate, t } from "./i18n";

const SUMMARY_POLL_MS = 1500;
const SUMMARY_WAIT_MS = 120_000;
const PAGE_SIZE = 50;

let conversation: Conversation | null = null;
let messages: Message[] = [];
let memories: Memory[] = [];
let memoriesNext = false;
let memoriesPage = 1;
// The message being sent, kept until its reply is stored: sending the same text again reuses
// its client_message_id, so the server never stores it twice nor asks the model twice.
let pending: { content: string; id: string } | null = null;
let summaryWatch = 0;

const messageList = () => byId<HTMLOListElement>("messages");
const sendForm = () => byId<HTMLFormElement>("send-form");

function messageItem(role: "student" | "tutor", content: string): HTMLLIElement {
  return h(
    "li",
    { class: `message ${role}` },
    h("span", { class: "who" }, t(role === "student" ? "you" : "tutor")),
    h("p", { class: "text" }, content),
  ) as HTMLLIElement;
}

function drawConversation(): void {
  const status = byId("conversation-status");
  const list = messageList();
  list.replaceChildren(...messages.map((m) => messageItem(m.role === "student" ? "student" : "tutor", m.content)));
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
  list.hidden = messages.length === 0;
  const open = conversation !== null && conversation.status === "active";
  sendForm().hidden = !open;
  byId("new-conversation").hidden = open;
}

function drawMemories(): void {
  const list = byId("memories");
  list.replaceChildren(
    ...memories.map((memory) =>
      h(
        "li",
        { class: `memory kind-${memory.kind}`, "data-memory": String(memory.id) },
        h("h3", {}, memory.title),
        h("p", {}, memory.content),
        h(
          "p",
          { class: "meta" },
          h("span", { class: "kind" }, label(`kind_${memory.kind}`)),
          " · ",
          h("span", { class: "source" }, label(`source_${memory.source}`)),
          ` · ${formatDate(memory.created_at)}`,
        ),
      ),
    ),
  );
  byId("memories-empty").hidden = memories.length > 0;
  byId("more-memories").hidden = !memoriesNext;
}

async function loadMemories(more = false): Promise<void> {
  const page = more ? memoriesPage + 1 : 1;
  const data = unwrap(await api.GET("/api/v1/memories/", { params: { query: { page, page_size: PAGE_SIZE } } }));
  memories = more ? [...memories, ...data.results] : data.results;
  memoriesPage = page;
  memoriesNext = Boolean(data.next);
  drawMemories();
}

/** Reopen the latest conversation if it is still active, unless the student started one
 * meanwhile (the form is there while this loads): theirs wins. */
async function resumeConversation(): Promise<void> {
  const before = conversation;
  const latest = unwrap(await api.GET("/api/v1/conversations/", { params: { query: { page_size: 1 } } })).results[0];
  const detail =
    latest && latest.status === "active"
      ? unwrap(
          await api.GET("/api/v1/conversations/{conversation_id}/", {
            params: { path: { conversation_id: latest.id } },
          }),
        )
      : null;
  if (conversation !== before) return;
  conversation = detail;
  messages = detail ? [...detail.messages.results].reverse() : []; // the API gives the newest first
}

async function send(content: string): Promise<void> {
  if (!conversation) return;
  const id = pending?.content === content ? pending.id : newClientMessageId();
  pending = { content, id };
  const list = messageList();
  const button = byId<HTMLButtonElement>("send");
  const status = byId("turn-status");
  let reply: HTMLElement | null = null;
  button.disabled = true;
  list.setAttribute("aria-busy", "true"); // announced once the reply is complete
  status.textContent = t("sending");
  showError(null);
  try {
    for await (const event of turnStream(api, conversation.id, { content, client_message_id: id })) {
      if (event.event === "message") {
        if (!messages.some((m) => m.id === event.data.id)) {
          messages.push(event.data);
          list.append(messageItem("student", event.data.content));
          list.hidden = false;
        }
        byId<HTMLTextAreaElement>("message").value = "";
      } else if (event.event === "delta") {
        if (!reply) {
          const item = messageItem("tutor", "");
          item.classList.add("streaming");
          list.append(item);
          reply = item.querySelector(".text");
        }
        reply?.append(event.data.content);
      } else if (event.event === "memory") {
        status.textContent = t("memory_saved", { title: event.data.title });
        memories = [event.data, ...memories.filter((m) => m.id !== event.data.id)];
        drawMemories();
      } else if (event.event === "done") {
        if (!reply) {
          list.append(messageItem("tutor", ""));
          reply = list.lastElementChild?.querySelector(".text") ?? null;
        }
        if (reply) reply.textContent = event.data.content; // the stored reply, whole
        reply?.parentElement?.classList.remove("streaming");
        messages.push(event.data);
        if (!reply?.isConnected) drawConversation(); // redrawn meanwhile (a language switch)
        pending = null;
        status.textContent = "";
        return;
      } else {
        throw new ApiError(0, event.data);
      }
    }
    throw new Error(t("error_stream")); // the stream ended without `done` nor `error`
  } catch (error) {
    reply?.closest("li")?.remove();
    status.textContent = "";
    // The text comes back, to be sent again with the same client_message_id.
    const box = byId<HTMLTextAreaElement>("message");
    if (!box.value) box.value = content;
    showError(error);
  } finally {
    list.setAttribute("aria-busy", "false");
    button.disabled = false;
  }
}

/** After an end: poll the memories until the conversation's summary is there (the worker writes it). */
function watchForSummary(conversationId: number): void {
  const status = byId("memories-status");
  const watch = ++summaryWatch;
  const deadline = Date.now() + SUMMARY_WAIT_MS;
  status.textContent = t("summary_pending");
  const poll = async (): Promise<void> => {
    if (watch !== summaryWatch) return;
    try {
      await loadMemories();
    } catch {
      // A failed poll is retried below; the page's error region stays for the user's actions.
    }
    if (memories.some((m) => m.kind === "summary" && m.source_conversation === conversationId)) {
      status.textContent = t("summary_ready");
    } else if (Date.now() > deadline) {
      status.textContent = t("summary_late");
    } else {
      window.setTimeout(() => void poll(), SUMMARY_POLL_MS);
    }
  };
  window.setTimeout(() => void poll(), SUMMARY_POLL_MS);
}

byId<HTMLFormElement>("new-conversation").addEventListener("submit", (event) => {
  event.preventDefault();
  const subject = byId<HTMLInputElement>("subject");
  void act((event.currentTarget as HTMLFormElement).querySelector("button"), async () => {
    conversation = unwrap(await api.POST("/api/v1/conversations/", { body: { subject: subject.value.trim() } }));
    messages = [];
    pending = null;
    subject.value = "";
    drawConversation();
    byId<HTMLTextAreaElement>("message").focus();
  });
});

sendForm().addEventListener("submit", (event) => {
  event.preventDefault();
  const content = byId<HTMLTextAreaElement>("message").value;
  if (content.trim()) void send(content);
});

byId<HTMLTextAreaElement>("message").addEventListener("keydown", (event) => {
  // Enter sends, Shift+Enter starts a new line (as in most chat apps).
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    sendForm().requestSubmit();
  }
});

byId<HTMLButtonElement>("end").addEventListener("click", (event) => {
  const current = conversation;
  if (!current) return;
  void act(event.currentTarget as HTMLButtonElement, async () => {
    conversation = unwrap(
      await api.POST("/api/v1/conversations/{conversation_id}/end/", {
        params: { path: { conversation_id: current.id } },
      }),
    );
    pending = null;
    drawConversation();
    watchForSummary(current.id);
  });
});

byId<HTMLButtonElement>("refresh-memories").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadMemories());
});

byId<HTMLButtonElement>("more-memories").addEventListener("click", (event) => {
  void act(event.currentTarget as HTMLButtonElement, () => loadMemories(true));
});

void run({
  role: "student",
  async start() {
    await Promise.all([resumeConversation(), loadMemories()]);
    drawConversation();
  },
  redraw() {
    drawConversation();
    drawMemories();
  },
  reset() {
    conversation = null;
    messages = [];
    memories = [];
    memoriesNext = false;
    pending = null;
    summaryWatch++;
    byId("memories-status").textContent = "";
    byId("turn-status").textContent = "";
    drawConversation();
    drawMemories();
  },
});
