/**
 * Files in the conversation on screen: the list (GET /conversations/{id}/files/) with each
 * file's status (being read, ready, or why it could not be read), and an upload (POST, multipart
 * field `file`) while the conversation is open. Files still being read are listed again until
 * the worker has read them.
 */
import { type Schemas, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, h } from "./common";
import { language, t } from "./i18n";
import { announce, isOpen, state } from "./student_state";

type File = Schemas["FileOutput"];

const POLL_MS = 1500;
const WAIT_MS = 90_000;

let files: File[] = [];
let shownFor: number | null = null;
let watch = 0;

function size(bytes: number): string {
  const kilobytes = bytes / 1024;
  const [value, unit] = kilobytes < 1024 ? [kilobytes, "kilobyte"] : [kilobytes / 1024, "megabyte"];
  return new Intl.NumberFormat(language(), { style: "unit", unit, maximumFractionDigits: value < 10 ? 1 : 0 }).format(
    value,
  );
}

function statusText(file: File): string {
  if (file.status === "unreadable") {
    return file.reason
      ? t("student_file_unreadable_because", { reason: t(`student_file_reason_${file.reason}`) })
      : t("student_file_status_unreadable");
  }
  if (file.status === "ready" && file.pages) return t("student_file_ready_pages", { pages: file.pages });
  return t(`student_file_status_${file.status}`);
}

function draw(): void {
  const section = byId("files-section");
  section.hidden = state.conversation === null;
  byId("file-form").hidden = !isOpen();
  byId("files-empty").hidden = files.length > 0;
  byId("files").replaceChildren(
    ...files.map((file) =>
      h(
        "li",
        { class: `file file-${file.status}`, "data-file": String(file.id) },
        h("span", { class: "file-name" }, file.name),
        h("span", { class: "meta" }, ` · ${size(file.size)} · `),
        h("span", { class: "file-status" }, statusText(file)),
      ),
    ),
  );
}

async function load(conversationId: number): Promise<void> {
  const list = unwrap(
    await api.GET("/api/v1/conversations/{conversation_id}/files/", {
      params: { path: { conversation_id: conversationId } },
    }),
  );
  if (shownFor !== conversationId) return;
  files = list;
  draw();
  if (files.some((f) => f.status === "pending")) follow(conversationId);
}

/** List the files again until none is being read (or WAIT_MS has passed). */
function follow(conversationId: number): void {
  const token = ++watch;
  const deadline = Date.now() + WAIT_MS;
  const poll = async (): Promise<void> => {
    if (token !== watch || shownFor !== conversationId) return;
    try {
      const list = unwrap(
        await api.GET("/api/v1/conversations/{conversation_id}/files/", {
          params: { path: { conversation_id: conversationId } },
        }),
      );
      if (token !== watch || shownFor !== conversationId) return;
      files = list;
      draw();
      if (!files.some((f) => f.status === "pending")) return;
    } catch {
      // Listed again below; the error region stays for the student's own actions.
    }
    if (Date.now() < deadline) window.setTimeout(() => void poll(), POLL_MS);
  };
  window.setTimeout(() => void poll(), POLL_MS);
}

/** Show the files of the conversation on screen (none without one). */
export async function showFiles(): Promise<void> {
  const conversation = state.conversation;
  shownFor = conversation?.id ?? null;
  watch++;
  files = [];
  draw();
  if (conversation) await load(conversation.id);
}

/** The conversation ended: no more uploads. */
export function redrawFiles(): void {
  draw();
}

export function resetFiles(): void {
  shownFor = null;
  watch++;
  files = [];
  draw();
}

byId<HTMLFormElement>("file-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>("file-input");
  const chosen = input.files?.[0];
  const conversation = state.conversation;
  if (!chosen || !conversation) return;
  void act((event.currentTarget as HTMLFormElement).querySelector("button"), async () => {
    const form = new FormData();
    form.append("file", chosen);
    const stored = unwrap(
      await api.POST("/api/v1/conversations/{conversation_id}/files/", {
        params: { path: { conversation_id: conversation.id } },
        // The typed body names the field; the request sends the FormData (multipart) itself.
        body: { file: chosen.name },
        bodySerializer: () => form,
      }),
    );
    if (shownFor !== conversation.id) return;
    input.value = "";
    files = [...files.filter((f) => f.id !== stored.id), stored];
    draw();
    announce("files", t("student_file_uploaded", { name: stored.name }));
    if (stored.status === "pending") follow(conversation.id);
  });
});
