// Drives the web app (/app/ and /app/teacher/) in Chromium, as a student and a teacher would,
// against a running server. Run by tests/web/test_web_app.py, which starts the server, seeds the
// users, scripts the model, and checks the database afterwards.
//
//   node tests/web/app.mjs '<json config>'
//
// Prints one line per step ("step <name> <ms>"), then "RESULT <json>" (timings, screenshots,
// what was read off the pages). Exits 1 on the first failed check, after a screenshot.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

// playwright-core comes from the client's package (clients/typescript): one package-lock.
const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, student, teacher, otherStudent, expect: expected } = config;
const TIMEOUT = 20_000;
mkdirSync(artifacts, { recursive: true });

const timings = {};
const screenshots = [];
const seen = {};
const pageErrors = [];

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

async function shot(page, name) {
  const path = join(artifacts, `${String(screenshots.length + 1).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  screenshots.push(path);
}

async function step(name, body) {
  const started = performance.now();
  await body();
  const ms = Math.round(performance.now() - started);
  timings[name] = ms;
  console.log(`step ${name} ${ms}`);
}

function watch(page, who) {
  page.on("pageerror", (error) => pageErrors.push(`${who}: ${error.message}`));
}

async function text(locator) {
  return ((await locator.textContent({ timeout: TIMEOUT })) ?? "").trim();
}

/** The value shown for a provenance field ("kind", "source"...) of the memory card titled `title`. */
function provenanceOf(page, title, key) {
  return page
    .locator("article.memory")
    .filter({ has: page.getByRole("heading", { name: title, exact: true }) })
    .locator(`[data-field="${key}"] dd`);
}

function card(page, title) {
  return page.locator("article.memory").filter({ has: page.getByRole("heading", { name: title, exact: true }) });
}

async function signIn(page, { username, password }) {
  await page.getByLabel(/^(Username|Nom d'utilisateur)$/).fill(username);
  await page.getByLabel(/^(Password|Mot de passe)$/).fill(password);
  await page.getByRole("button", { name: /^(Sign in|Se connecter)$/ }).click();
  await page.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
}

async function memoryTitles(page) {
  return (await page.locator("#memories h3").allTextContents()).map((s) => s.trim());
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  // Without the background-networking flags Chromium tries to reach Google's services, which
  // this closed network refuses. Playwright gives each launch a fresh profile directory.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});

let current = null;
try {
  // ---------------------------------------------------------------- the student, in English
  const studentContext = await browser.newContext({ locale: "en-US", viewport: { width: 1000, height: 900 } });
  const s = await studentContext.newPage();
  current = s;
  watch(s, "student");

  await step("student_page_loads", async () => {
    await s.goto(`${baseUrl}/app/`);
    await s.locator("#login-form").waitFor({ state: "visible", timeout: TIMEOUT });
    check((await s.locator("html").getAttribute("lang")) === "en", "the page is not in English before sign-in");
    check((await text(s.locator("#login-heading"))) === "Sign in", "no sign-in heading");
    await shot(s, "student-sign-in");
  });

  await step("student_wrong_password_shows_the_server_message", async () => {
    // The message the API answers for wrong credentials, read through the same API.
    const envelope = await s.evaluate(async ({ username }) => {
      const response = await fetch("/api/v1/auth/token/", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ username, password: "not-the-password" }),
      });
      return response.json();
    }, student);
    await signInExpectingError(s, { ...student, password: "not-the-password" });
    const shown = await text(s.locator("#error"));
    check(shown === envelope.error.message, `error shown ${JSON.stringify(shown)}, envelope says ${JSON.stringify(envelope)}`);
    seen.login_error = shown;
  });

  await step("student_signs_in", async () => {
    await signIn(s, student);
    check((await s.locator("#error").isHidden()), "an error stays shown after signing in");
    check((await text(s.locator("#whoami"))).includes(student.username), "whoami does not name the student");
    check((await text(s.locator("#conversation-status"))) === "Start a conversation to talk with your tutor.", "no invitation to start");
  });

  await step("student_starts_a_conversation", async () => {
    await s.getByLabel("Subject (optional)").fill(expected.subject);
    await s.getByRole("button", { name: "Start a new conversation" }).click();
    await s.getByLabel("Your message").waitFor({ state: "visible", timeout: TIMEOUT });
    check((await text(s.locator("#conversation-status"))).startsWith(`Conversation about ${expected.subject}`), "no conversation status");
  });

  await step("student_sends_and_the_reply_streams_in", async () => {
    await s.getByLabel("Your message").fill(expected.question);
    await s.getByRole("button", { name: "Send", exact: true }).click();
    // The student's message, then the tutor's note (the save_memory tool), then the reply, part by part.
    await s.locator(".message.student .text", { hasText: expected.question }).waitFor({ timeout: TIMEOUT });
    const streaming = s.locator(".message.tutor.streaming .text");
    await s.waitForFunction(
      () => (document.querySelector(".message.tutor.streaming .text")?.textContent ?? "").length > 0,
      null,
      { timeout: TIMEOUT },
    );
    const partial = await streaming.textContent();
    check((await s.locator("#messages").getAttribute("aria-busy")) === "true", "the log is not busy while streaming");
    await shot(s, "student-reply-streaming");
    const reply = s.locator(".message.tutor:not(.streaming) .text");
    await reply.waitFor({ timeout: TIMEOUT });
    const full = await text(reply);
    check(full === expected.reply, `reply ${JSON.stringify(full)}`);
    check(partial.length < full.length && full.startsWith(partial), `partial ${JSON.stringify(partial)} is not a part of the reply`);
    check((await s.locator("#messages").getAttribute("aria-busy")) === "false", "the log stays busy");
    check((await memoryTitles(s)).includes(expected.toolNote), "the note the tutor saved is not in the memories");
    seen.partial_reply = partial;
    seen.reply = full;
    await shot(s, "student-reply");
  });

  await step("student_ends_and_the_summary_appears", async () => {
    await s.getByRole("button", { name: "End the conversation" }).click();
    await s.locator("#conversation-status", { hasText: "This conversation has ended." }).waitFor({ timeout: TIMEOUT });
    check(await s.locator("#send-form").isHidden(), "the message form stays after the end");
    // Written by the Celery worker; the page polls the memories until it is there.
    await s.locator("#memories h3", { hasText: expected.summary }).waitFor({ timeout: 90_000 });
    check(
      (await text(s.locator("#memories-status"))) === "The summary of your conversation is in your memories.",
      "no summary status",
    );
    seen.student_memories_after_end = await memoryTitles(s);
    await shot(s, "student-memories");
  });

  // ----------------------------------------------- the teacher, whose browser asks for French
  const teacherContext = await browser.newContext({ locale: "fr-FR", viewport: { width: 1100, height: 1000 } });
  const tp = await teacherContext.newPage();
  current = tp;
  watch(tp, "teacher");

  await step("teacher_page_in_the_browsers_language_then_the_users", async () => {
    await tp.goto(`${baseUrl}/app/teacher/`);
    await tp.locator("#login-form").waitFor({ state: "visible", timeout: TIMEOUT });
    check((await text(tp.locator("#login-heading"))) === "Connexion", "the sign-in form is not in French");
    await signIn(tp, teacher);
    // The teacher's own language (English) wins once signed in.
    await tp.locator("#login-heading").waitFor({ state: "hidden" });
    check((await tp.locator("html").getAttribute("lang")) === "en", "the page did not switch to the user's language");
    check((await text(tp.locator("h1"))) === "My students' memories", "heading not in English");
  });

  await step("teacher_picks_the_student", async () => {
    // The list fills once the page's reads answer (the safety queue is read alongside).
    await tp.locator("#student option", { hasText: student.username }).first().waitFor({ state: "attached" });
    const options = (await tp.locator("#student option").allTextContents()).map((o) => o.trim());
    check(options.some((o) => o.includes(student.username)), `student missing from ${options}`);
    check(!options.some((o) => o.includes(otherStudent)), `another class's student listed: ${options}`);
    seen.teacher_students = options;
    // The class overview's roster opens the student's view.
    await tp.locator("#roster tbody tr", { hasText: student.username }).locator("th button").click();
    await card(tp, expected.summary).waitFor({ timeout: TIMEOUT });
    await card(tp, expected.toolNote).waitFor({ timeout: TIMEOUT });
  });

  await step("teacher_sees_provenance", async () => {
    const summary = {};
    for (const key of ["kind", "source", "author", "visibility", "status", "confidence", "created", "updated", "source_conversation"]) {
      summary[key] = await text(provenanceOf(tp, expected.summary, key));
    }
    check(summary.kind === "Conversation summary", `summary kind ${summary.kind}`);
    check(summary.source === "Summary of a conversation", `summary source ${summary.source}`);
    check(summary.author === "—", `summary author ${summary.author}`);
    check(summary.visibility === "The student and teachers", `summary visibility ${summary.visibility}`);
    check(summary.status === "Active", `summary status ${summary.status}`);
    check(/^\d+ %$/.test(summary.confidence), `summary confidence ${summary.confidence}`);
    check(/\d/.test(summary.created), `summary created ${summary.created}`);
    check(summary.source_conversation.startsWith("#"), `summary conversation ${summary.source_conversation}`);
    const note = await text(provenanceOf(tp, expected.toolNote, "source"));
    check(note === "Saved by the tutor during a conversation", `note source ${note}`);
    seen.summary_provenance = summary;
    await shot(tp, "teacher-memories");
  });

  await step("teacher_adds_a_teacher_only_note", async () => {
    const form = tp.locator("#note-form");
    await form.getByLabel("Title").fill(expected.teacherNote.title);
    await form.getByLabel("Content").fill(expected.teacherNote.content);
    check((await form.getByLabel("Who can see it").inputValue()) === "teacher_only", "a note is not teacher-only by default");
    await form.getByRole("button", { name: "Add the note" }).click();
    await tp.locator("#action-status", { hasText: "Note added." }).waitFor({ timeout: TIMEOUT });
    check((await text(provenanceOf(tp, expected.teacherNote.title, "visibility"))) === "Teachers only", "note not teachers-only");
    check((await text(provenanceOf(tp, expected.teacherNote.title, "author"))) === "you", "note author is not the teacher");
    check((await text(provenanceOf(tp, expected.teacherNote.title, "kind"))) === "Teacher note", "note kind");
  });

  await step("teacher_corrects_the_summary", async () => {
    const summaryCard = card(tp, expected.summary);
    await summaryCard.getByText("Correct", { exact: true }).click();
    await summaryCard.getByLabel("Title").fill(expected.corrected.title);
    await summaryCard.getByLabel("Content").fill(expected.corrected.content);
    await summaryCard.getByRole("button", { name: "Save the correction" }).click();
    await tp.locator("#action-status", { hasText: "Memory corrected." }).waitFor({ timeout: TIMEOUT });
    const corrected = card(tp, expected.corrected.title);
    await corrected.waitFor({ timeout: TIMEOUT });
    check((await text(corrected.locator(".content"))) === expected.corrected.content, "corrected content not shown");
  });

  await step("teacher_archives_the_tutors_note", async () => {
    const noteCard = card(tp, expected.toolNote);
    await noteCard.getByText("Archive", { exact: true }).click();
    await noteCard.getByLabel("Reason for archiving").fill(expected.archiveReason);
    await noteCard.getByRole("button", { name: "Archive this memory" }).click();
    await tp.locator("#action-status", { hasText: "Memory archived." }).waitFor({ timeout: TIMEOUT });
    await card(tp, expected.toolNote).waitFor({ state: "detached", timeout: TIMEOUT });
  });

  await step("teacher_lists_archived_memories", async () => {
    await tp.getByLabel("Show", { exact: true }).selectOption("archived");
    await card(tp, expected.toolNote).waitFor({ timeout: TIMEOUT });
    check((await memoryTitles(tp)).length === 1, `archived list: ${await memoryTitles(tp)}`);
    check((await text(provenanceOf(tp, expected.toolNote, "status"))) === "Archived", "not shown as archived");
    check((await text(provenanceOf(tp, expected.toolNote, "archived_reason"))) === expected.archiveReason, "no reason");
    check((await card(tp, expected.toolNote).locator("details").count()) === 0, "an archived memory offers actions");
    await shot(tp, "teacher-archived");
  });

  // ------------------------------------------------------------- the student again, then French
  current = s;
  await step("student_sees_the_teachers_changes_but_not_the_teacher_only_note", async () => {
    await s.reload();
    await s.locator("#memories h3", { hasText: expected.corrected.title }).waitFor({ timeout: TIMEOUT });
    const titles = await memoryTitles(s);
    check(!titles.includes(expected.teacherNote.title), `the teacher-only note is shown to the student: ${titles}`);
    check(!(await s.content()).includes(expected.teacherNote.content), "the teacher-only note's text is on the student's page");
    check(!titles.includes(expected.toolNote), `the archived note is still shown: ${titles}`);
    check(!titles.includes(expected.summary), `the summary's old title is still shown: ${titles}`);
    seen.student_memories_after_teacher = titles;
    await shot(s, "student-after-teacher");
  });

  await step("student_switches_to_french", async () => {
    await s.getByLabel("Language").selectOption("fr");
    await s.locator("#memories-title", { hasText: "Ce dont votre tuteur se souvient" }).waitFor({ timeout: TIMEOUT });
    check((await s.locator("html").getAttribute("lang")) === "fr", "html lang is not fr");
    check((await text(s.getByRole("button", { name: "Commencer une nouvelle conversation" }))) !== "", "button not in French");
    check((await text(s.locator("#logout"))) === "Se déconnecter", "sign-out not in French");
    check((await text(s.locator("#memories .meta").first())).startsWith("Résumé de conversation"), "memory kind not in French");
    // The choice is the user's (PATCH /me/): a fresh load is in French too.
    await s.reload();
    await s.locator("#memories-title", { hasText: "Ce dont votre tuteur se souvient" }).waitFor({ timeout: TIMEOUT });
    check((await text(s.locator("h1"))) === "Mon tuteur", "heading not in French after reload");
    seen.french_heading = await text(s.locator("h1"));
    await shot(s, "student-french");
  });

  await step("student_signs_out", async () => {
    await s.getByRole("button", { name: "Se déconnecter" }).click();
    await s.locator("#login-form").waitFor({ state: "visible", timeout: TIMEOUT });
    check(await s.locator("#app").isHidden(), "the app stays shown after signing out");
  });

  check(pageErrors.length === 0, `uncaught errors in the pages: ${pageErrors.join("; ")}`);
  console.log(`RESULT ${JSON.stringify({ ok: true, timings, screenshots, seen })}`);
} catch (error) {
  if (current) await shot(current, "failure").catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), timings, screenshots, seen, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}

async function signInExpectingError(page, { username, password }) {
  await page.getByLabel("Username").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.locator("#error").waitFor({ state: "visible", timeout: TIMEOUT });
}
