// Drives the student's page (/app/) in Chromium against a running server, as a student would.
// Run by tests/web/test_student_page.py, which seeds the data, scripts the model and checks the
// database afterwards.
//
//   node tests/web/student_page.mjs '<json config>'
//
// Prints one line per step ("step <name> <ms>"), then "RESULT <json>" (timings, screenshots,
// what was read off the page). Exits 1 on the first failed check, after a screenshot.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, student, answers, replies, resources } = config;
const TIMEOUT = 20_000;
const GRADING_TIMEOUT = 60_000;
mkdirSync(artifacts, { recursive: true });

// A raw key on screen: a label key (kind_fact, source_extraction, student_quiz_score…), an enum
// value (in_progress, short_text, quiz_result…), an error code, or an operator's setting.
const PREFIXES = [
  "kind", "source", "status", "visibility", "student", "quiz", "task", "file", "citation", "conversation", "error",
  "severity", "category", "flag",
];
const VALUES = [
  "in_progress", "multiple_choice", "short_text", "teacher_note", "quiz_result", "summary_task", "save_memory_tool",
  "mcp_tool", "file_upload", "teacher_only", "model_not_configured", "model_unavailable", "budget_exceeded",
  "retry_safe", "client_message_id",
];
const RAW_KEY = new RegExp(`\\b(${PREFIXES.join("|")})_[a-z_]+\\b|\\b(${VALUES.join("|")})\\b|LLM_[A-Z_]+`);
// The server's operator message when no model is set (llm.gateway.NOT_CONFIGURED_MESSAGE).
const OPERATOR_MESSAGE =
  "No language model is configured. Set LLM_API_KEY for OpenAI, or LLM_BASE_URL for a local server, then restart the server.";

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

async function text(locator) {
  return ((await locator.textContent({ timeout: TIMEOUT })) ?? "").trim();
}

async function texts(locator) {
  return (await locator.allTextContents()).map((s) => s.trim());
}

/** The page's visible text has no raw key. */
async function noRawKeys(page, where) {
  const shown = await page.locator("body").innerText();
  const found = shown.match(RAW_KEY);
  check(!found, `${where}: a raw key is on the page: ${found?.[0]}`);
}

async function signIn(page) {
  await page.getByLabel(/^(Username|Nom d'utilisateur)$/).fill(student.username);
  await page.getByLabel(/^(Password|Mot de passe)$/).fill(student.password);
  await page.getByRole("button", { name: /^(Sign in|Se connecter)$/ }).click();
  await page.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
}

/**
 * A status line (`statusSel`) once it says something: its text, its CSS position, and whether
 * anything covers `targetSel` (a control), brought to the bottom of the window, where a toast
 * would sit.
 */
async function statusLine(page, statusSel, targetSel) {
  await page.locator(statusSel).filter({ hasText: /\S/ }).waitFor({ timeout: TIMEOUT });
  return page.evaluate(([statusSelector, targetSelector]) => {
    const line = document.querySelector(statusSelector);
    const control = document.querySelector(targetSelector);
    control.scrollIntoView({ block: "end" });
    const box = control.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
    return {
      text: line.textContent.trim(),
      position: getComputedStyle(line).position,
      covered: !(hit === control || control.contains(hit)),
    };
  }, [statusSel, targetSel]);
}

/** The tutor's last reply, once stored (not streaming). */
async function lastReply(page) {
  await page.locator("#messages").and(page.locator("[aria-busy=false]")).waitFor({ timeout: TIMEOUT });
  return text(page.locator(".message.tutor:not(.streaming) .text").last());
}

const conversationItem = (page, title) =>
  page.locator("#conversations > li").filter({ has: page.getByRole("heading", { name: title, exact: true }) });

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
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
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1000, height: 900 } });
  const s = await context.newPage();
  current = s;
  s.on("pageerror", (error) => pageErrors.push(error.message));

  await step("signs_in_on_the_latest_open_conversation", async () => {
    await s.goto(`${baseUrl}/app/`);
    await s.locator("#login-form").waitFor({ state: "visible", timeout: TIMEOUT });
    await signIn(s);
    await s.locator("#conversation-status", { hasText: "Conversation about Fractions" }).waitFor({ timeout: TIMEOUT });
    check((await s.locator("#conversations > li").count()) === 2, "the two conversations are not listed");
    check((await text(conversationItem(s, "Geometry").locator(".meta"))).startsWith("Open"), "Geometry not shown open");
    // The quiz of the older conversation waits in the list of quizzes to answer.
    await s.locator("#quizzes-open [data-quiz]", { hasText: "Quiz: Angles" }).waitFor({ timeout: TIMEOUT });
    await s.locator("#tasks [data-task]", { hasText: "Read chapter 3" }).waitFor({ timeout: TIMEOUT });
    await noRawKeys(s, "after sign-in");
  });

  await step("the_tutors_quiz_appears_in_the_conversation", async () => {
    await s.getByLabel("Your message").fill("Quiz me on fractions, please.");
    await s.getByRole("button", { name: "Send", exact: true }).click();
    await s.locator(".message.tutor:not(.streaming) .text", { hasText: replies.quiz }).waitFor({ timeout: TIMEOUT });
    const quiz = s.locator("#messages [data-quiz]");
    await quiz.waitFor({ timeout: TIMEOUT });
    check((await text(quiz.locator("h3"))) === "Quiz: Adding fractions", "the quiz's title");
    check((await quiz.locator("fieldset").count()) === answers.length, "not one field per question");
    check((await quiz.locator("input[type=radio]").count()) === 3, "the multiple choice is not three radio buttons");
    await shot(s, "quiz-form");
  });

  await step("answers_the_quiz_and_sees_the_result", async () => {
    const quiz = s.locator("#messages [data-quiz]");
    const fields = quiz.locator("fieldset");
    await fields.nth(0).getByLabel(answers[0], { exact: true }).check();
    for (let i = 1; i < answers.length; i++) await fields.nth(i).getByRole("textbox").fill(answers[i]);
    const sent = s.waitForResponse((r) => r.url().includes("/answers/") && r.request().method() === "POST");
    await quiz.getByRole("button", { name: "Send my answers" }).click();
    const body = await (await sent).json();
    check(body.quiz.status === "grading", `the quiz is ${body.quiz.status}, not being graded`);
    // Drawn from the answer at once: the pending short text says it is being graded.
    const result = s.locator("#messages [data-quiz]");
    await result.locator(".answer.result-pending", { hasText: "Being graded" }).waitFor({ timeout: TIMEOUT });
    check((await result.locator(".answer.result-correct").count()) === 3, "three answers are not shown right");
    const wrong = result.locator(".answer.result-incorrect");
    check((await text(wrong.locator(".verdict"))).endsWith("Wrong"), "the wrong answer is not marked");
    check((await text(wrong.locator(".expected"))) === "1/2", "the expected answer is not shown");
    check((await wrong.locator(".explanation").count()) === 1, "no explanation");
    seen.grading = await text(result.locator(".quiz-score"));
    await shot(s, "quiz-being-graded");
    // The worker asks the model; the page reads the quiz again until it is graded.
    await s.locator("#messages [data-quiz] .quiz-score", { hasText: "4 of 5 right" }).waitFor({ timeout: GRADING_TIMEOUT });
    check((await s.locator("#messages [data-quiz] .answer.result-pending").count()) === 0, "an answer is still pending");
    await s.locator("#quizzes-done [data-quiz]", { hasText: "4 of 5 right" }).waitFor({ timeout: TIMEOUT });
    await shot(s, "quiz-graded");
  });

  await step("a_failed_message_is_kept_and_sent_again", async () => {
    const ids = [];
    s.on("request", (request) => {
      if (request.method() === "POST" && /\/messages\/$/.test(new URL(request.url()).pathname)) {
        ids.push(JSON.parse(request.postData() ?? "{}").client_message_id);
      }
    });
    const message = "Is 2/4 the same as 1/2?";
    const mark = s.locator(".message.student.unanswered", { hasText: message });
    // 1. No network.
    await s.route("**/messages/", (route) => route.abort("internetdisconnected"));
    await s.getByLabel("Your message").fill(message);
    await s.getByRole("button", { name: "Send", exact: true }).click();
    await mark.locator(".unanswered-note", { hasText: "The server could not be reached. Your message is kept" }).waitFor({ timeout: TIMEOUT });
    check((await s.getByLabel("Your message").inputValue()) === "", "the text stays in the box as well");
    await s.unroute("**/messages/");
    // 2. No model set: the operator's message never reaches the student.
    await s.route("**/messages/", (route) =>
      route.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({
          error: { code: "model_not_configured", message: OPERATOR_MESSAGE, details: {}, retry_safe: true },
        }),
      }),
    );
    await mark.getByRole("button", { name: "Send again" }).click();
    await mark
      .locator(".unanswered-note", { hasText: "The tutor is not available right now. Your message is kept; try again later." })
      .waitFor({ timeout: TIMEOUT });
    check(!(await s.locator("body").innerText()).includes("LLM_API_KEY"), "the operator's message is shown");
    await shot(s, "message-kept-with-retry");
    await s.unroute("**/messages/");
    // 3. The model fails (the server stores the message and answers an error event).
    await mark.getByRole("button", { name: "Send again" }).click();
    await mark.locator(".unanswered-note", { hasText: "The tutor is not available right now." }).waitFor({ timeout: TIMEOUT });
    // 4. It answers.
    await mark.getByRole("button", { name: "Send again" }).click();
    await s.locator(".message.tutor:not(.streaming) .text", { hasText: replies.check }).waitFor({ timeout: TIMEOUT });
    check((await s.locator(".message.unanswered").count()) === 0, "the mark stays after the reply");
    check((await s.locator(".message.student", { hasText: message }).count()) === 1, "the message is shown twice");
    seen.retry_ids = [...ids]; // later sends are recorded too
    await noRawKeys(s, "after the retries");
  });

  await step("opens_an_older_conversation_answers_its_message_and_ends_it", async () => {
    await conversationItem(s, "Geometry").getByRole("button", { name: "Open" }).click();
    await s.locator("#conversation-status", { hasText: "Conversation about Geometry" }).waitFor({ timeout: TIMEOUT });
    await s.locator(".message.tutor .text", { hasText: "A right angle is exactly 90 degrees." }).waitFor({ timeout: TIMEOUT });
    await s.locator("#messages [data-quiz]", { hasText: "Quiz: Angles" }).waitFor({ timeout: TIMEOUT });
    check((await conversationItem(s, "Geometry").getAttribute("aria-current")) === "true", "not marked as on screen");
    const left = s.locator(".message.student.unanswered", { hasText: "And an obtuse one?" });
    check((await text(left.locator(".unanswered-note"))).includes("The tutor has not answered this message."), "no mark");
    await left.getByRole("button", { name: "Send again" }).click();
    await s.locator(".message.tutor:not(.streaming) .text", { hasText: replies.obtuse }).waitFor({ timeout: TIMEOUT });
    check((await s.locator(".message.unanswered").count()) === 0, "the older message is still unanswered");
    await conversationItem(s, "Geometry").getByRole("button", { name: "End" }).click();
    await s.locator("#conversation-status", { hasText: "This conversation has ended." }).waitFor({ timeout: TIMEOUT });
    check(await s.locator("#send-form").isHidden(), "the message form stays after the end");
    check((await text(conversationItem(s, "Geometry").locator(".meta"))).startsWith("Ended"), "not listed as ended");
    await shot(s, "older-conversation-ended");
  });

  await step("changes_a_tasks_status", async () => {
    const task = s.locator("#tasks [data-task]", { hasText: "Read chapter 3" });
    const saved = s.waitForResponse((r) => r.url().includes("/status/") && r.request().method() === "POST");
    await task.getByLabel("Where you are").selectOption({ label: "In progress" });
    check((await saved).ok(), "the status was not saved");
    await s.locator("#tasks [data-task].task-in_progress").waitFor({ timeout: TIMEOUT });
    seen.task_status = await statusLine(s, "#tasks-status", "#tasks [data-task] select");
    await shot(s, "task-status-saved");
  });

  await step("edits_the_part_of_her_card_her_teacher_opened", async () => {
    const section = s.locator("#about-me");
    await section.waitFor({ state: "visible", timeout: TIMEOUT });
    check((await text(section.locator("[data-field=interests] dd"))) === "Football", "the card's interests are not shown");
    seen.card_editable = await text(s.locator("#card-editable"));
    await section.locator("#card-edit summary").click();
    check((await section.getByRole("textbox").count()) === 1, "a field the teacher did not open can be edited");
    await section.getByRole("textbox", { name: "Interests" }).fill("Football\nChess");
    await section.getByRole("button", { name: "Save", exact: true }).click();
    await s.locator("#card-status", { hasText: "Saved" }).waitFor({ timeout: TIMEOUT });
    await section.locator("[data-field=interests] dd", { hasText: "Football, Chess" }).waitFor({ timeout: TIMEOUT });
    await shot(s, "card-edited");
  });

  await step("shares_a_file_and_sees_it_read", async () => {
    await conversationItem(s, "Fractions").getByRole("button", { name: "Open" }).click();
    await s.locator("#conversation-status", { hasText: "Conversation about Fractions" }).waitFor({ timeout: TIMEOUT });
    await s.getByLabel("Share a file (PDF, text or picture)").setInputFiles({
      name: "fractions.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("Halves, thirds and sixths: 1/2 = 3/6 and 1/3 = 2/6.\n"),
    });
    await s.getByRole("button", { name: "Send the file" }).click();
    const file = s.locator("#files [data-file]", { hasText: "fractions.txt" });
    await file.waitFor({ timeout: TIMEOUT });
    await file.locator(".file-status", { hasText: "Ready" }).waitFor({ timeout: GRADING_TIMEOUT });
  });

  await step("sees_the_crisis_resources", async () => {
    await s.getByLabel("Your message").fill("i want to kill myself tonight");
    await s.getByRole("button", { name: "Send", exact: true }).click();
    const notice = s.locator("#safety-notice");
    await notice.waitFor({ state: "visible", timeout: TIMEOUT });
    check((await text(notice.locator("h2"))) === "Help is available right now", "no heading on the notice");
    check((await text(notice.locator(".safety-message"))).length > 0, "no message on the notice");
    for (const resource of resources) {
      const item = notice.locator(".resource", { hasText: resource.name });
      check((await item.count()) === 1, `resource ${resource.name} not shown`);
      if (resource.phone) {
        check((await text(item.locator(".resource-phone"))).endsWith(resource.phone), `no number for ${resource.name}`);
        // Each number its own link to call ("999 (UK) / 911 (US)" is two).
        const numbers = resource.phone.split(/\s*[/,;]\s*/).map((part) => part.match(/^\+?[\d\s]+/)[0].replace(/\s/g, ""));
        const links = await item.locator(".resource-phone a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
        check(JSON.stringify(links) === JSON.stringify(numbers.map((n) => `tel:${n}`)), `calls ${links} for ${resource.phone}`);
      }
      if (resource.url) check((await item.locator(".resource-url a").count()) === 1, `no link for ${resource.name}`);
    }
    await s.locator(".message.tutor:not(.streaming)").last().waitFor({ timeout: TIMEOUT });
    // The help lines once: in the notice, not again at the end of the reply.
    seen.crisis = {
      reply: await lastReply(s),
      in_notice: (await notice.locator(".resource").count()) === resources.length,
    };
    await shot(s, "crisis-resources");
  });

  if (config.askAvailable) {
    await step("asks_what_the_tutor_knows", async () => {
      await s.getByRole("button", { name: "What do you know about me?" }).click();
      await s.locator("#ask-answer .ask-text").waitFor({ timeout: TIMEOUT });
      const answer = await text(s.locator("#ask-answer .ask-text"));
      check(answer.length > 0, "an empty answer");
      // Every ref is a numbered link to a citation listed below the answer, with its kind in words.
      check(!/\[(m\d+|quiz \d+|file \d+|skill [^\]]+|task [^\]]+|card)\]/i.test(answer), `a raw ref in ${answer}`);
      const targets = await s.locator("#ask-answer .ask-text a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
      check(targets.length > 0, "no citation linked from the answer");
      for (const target of targets) check((await s.locator(target).count()) === 1, `${target} is not a citation`);
      seen.ask_citations = await s.locator("#ask-answer [data-citation]").count();
      check(seen.ask_citations > 0, "no citation listed");
      await shot(s, "ask-about-me");
    });
  }

  await step("no_raw_key_in_english", async () => {
    await noRawKeys(s, "English");
    await shot(s, "student-english");
  });

  await step("reads_the_page_in_french", async () => {
    await s.getByLabel("Language").selectOption("fr");
    await s.locator("#conversations-heading", { hasText: "Vos conversations" }).waitFor({ timeout: TIMEOUT });
    check((await text(conversationItem(s, "Geometry").locator(".meta"))).startsWith("Terminée"), "state not in French");
    check((await text(s.locator("#quizzes-heading"))) === "Quiz", "quizzes heading");
    await s.locator("#quizzes-done [data-quiz] .quiz-score", { hasText: "4 sur 5 justes" }).waitFor({ timeout: TIMEOUT });
    check((await s.locator("#messages [data-quiz] .verdict", { hasText: "Juste" }).count()) === 4, "verdicts not in French");
    check((await s.locator("#messages [data-quiz] .verdict", { hasText: "Faux" }).count()) === 1, "verdict not in French");
    check((await text(s.locator("#tasks select option:checked"))) === "En cours", "task status not in French");
    check((await text(s.locator("#files .file-status"))).startsWith("Prêt"), "file status not in French");
    check((await text(s.locator("#safety-notice h2"))) === "De l'aide, tout de suite", "notice heading not in French");
    // A crisis written in English, on a French page: the notice, its help lines and the reply in French.
    await s.getByLabel("Votre message").fill("i want to kill myself tonight");
    await s.getByRole("button", { name: "Envoyer", exact: true }).click();
    await s.locator("#safety-notice .safety-message", { hasText: "Merci" }).waitFor({ timeout: TIMEOUT });
    seen.crisis_fr = {
      message: await text(s.locator("#safety-notice .safety-message")),
      resources: await texts(s.locator("#safety-notice .resource-name")),
      reply: await lastReply(s),
    };
    await shot(s, "crisis-in-french");
    await noRawKeys(s, "French");
    await shot(s, "student-french");
  });

  await step("a_new_conversation_ends_the_open_one_and_counts_its_streaming_reply", async () => {
    await s.getByLabel("Sujet (facultatif)").fill("Percentages");
    await s.getByRole("button", { name: "Commencer une nouvelle conversation" }).click();
    await s.locator("#conversation-status", { hasText: "Conversation sur Percentages" }).waitFor({ timeout: TIMEOUT });
    await conversationItem(s, "Fractions").locator(".meta", { hasText: /^Terminée/ }).waitFor({ timeout: TIMEOUT });
    seen.list_after_start = Object.fromEntries(
      await s.locator("#conversations > li").evaluateAll((items) =>
        items.map((li) => [li.querySelector("h3").textContent.trim(), li.querySelector(".meta").textContent.trim()]),
      ),
    );
    await s.getByLabel("Votre message").fill("What is 10% of 50?");
    await s.getByRole("button", { name: "Envoyer", exact: true }).click();
    await s.locator(".message.tutor.streaming .text").filter({ hasText: /\S/ }).waitFor({ timeout: TIMEOUT });
    seen.count_streaming = (await text(conversationItem(s, "Percentages").locator(".meta"))).split(" · ").at(-1);
    await shot(s, "first-reply-streaming");
    check((await lastReply(s)) === replies.percent, "the streamed reply");
    seen.count_after = (await text(conversationItem(s, "Percentages").locator(".meta"))).split(" · ").at(-1);
  });

  await step("fits_a_phone_390px_wide", async () => {
    const phone = await browser.newContext({ locale: "fr-FR", viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    current = p;
    p.on("pageerror", (error) => pageErrors.push(`phone: ${error.message}`));
    await p.goto(`${baseUrl}/app/`);
    await p.locator("#login-form").waitFor({ state: "visible", timeout: TIMEOUT });
    await signIn(p);
    await p.locator("#conversations > li").first().waitFor({ timeout: TIMEOUT });
    await p.locator("#tasks [data-task]").first().waitFor({ timeout: TIMEOUT });
    await p.locator("#quizzes-open [data-quiz] form").first().waitFor({ timeout: TIMEOUT });
    const width = await p.evaluate(() => document.documentElement.scrollWidth);
    check(width <= 390, `the page is ${width} px wide at 390`);
    // A task's status changed at phone width: the line saying so covers neither the task nor its status.
    await p.locator("#tasks [data-task] select").selectOption("done");
    await p.locator("#tasks [data-task].task-done").waitFor({ timeout: TIMEOUT });
    seen.phone_task_status = await statusLine(p, "#tasks-status", "#tasks [data-task] select");
    await shot(p, "task-status-at-390px");
    await noRawKeys(p, "phone");
    await shot(p, "student-390x844");
    seen.phone_width = width;
  });

  check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join("; ")}`);
  console.log(`RESULT ${JSON.stringify({ ok: true, timings, screenshots, seen })}`);
} catch (error) {
  if (current) await shot(current, "failure").catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), timings, screenshots, seen, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
