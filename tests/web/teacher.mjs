// Drives the teacher page (/app/teacher/) in Chromium, as a teacher following one student and
// their class would, against a running server. Run by tests/web/test_teacher_page.py, which
// seeds the data and checks the database afterwards.
//
//   node tests/web/teacher.mjs '<json config>'
//
// config.part is "student" (evidence, transcript, learning, card, review queue, the ask box,
// French, 390 px) or "class" (the skills table, its legend and due reviews, a question about the
// class, French, 390 px). Prints "RESULT <json>" (what was read off the page, the screenshots,
// page errors). Exits 1 on the first failed check, after a screenshot.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, teacher, data } = config;
const TIMEOUT = 20_000;
// Raw i18n keys and enum values that must never reach the screen.
const RAW_KEY = /\b(kind|source|status|card|cite|mastery|legend|quiz_status|task_status|result|review|conversation_status)_[a-z_]+\b/;
mkdirSync(artifacts, { recursive: true });

const screenshots = [];
const pageErrors = [];
const seen = {};

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

async function shot(page, name, fullPage = true) {
  const path = join(artifacts, `${String(screenshots.length + 1).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path, fullPage });
  screenshots.push(path);
}

const text = async (locator) => ((await locator.textContent()) ?? "").trim();
const texts = async (locator) => (await locator.allTextContents()).map((s) => s.trim());

/** The page's visible text with no raw key in it, and no horizontal scroll of the page. */
async function pageChecks(page, label) {
  const body = await page.evaluate(() => document.body.innerText);
  const raw = RAW_KEY.exec(body);
  check(!raw, `${label}: a raw key on the page: ${raw?.[0]}`);
  return body;
}

async function signIn(page) {
  await page.goto(`${baseUrl}/app/teacher/`);
  await page.locator("#username").fill(teacher.username);
  await page.locator("#password").fill(teacher.password);
  await page.locator("#login-form button[type=submit]").click();
  await page.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
}

async function toFrench(page) {
  await page.locator("#language").selectOption("fr");
  await page.waitForFunction(() => document.documentElement.lang === "fr", null, { timeout: TIMEOUT });
}

async function narrow(page, name) {
  await page.setViewportSize({ width: 390, height: 844 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  check(width <= 390, `at 390 px the page scrolls sideways (${width} px wide)`);
  await shot(page, name);
}

async function studentPart(page) {
  const { student, fact, summary, conversation, quiz, task, pendingChange, supersession, needsReview } = data;
  // The class overview's roster opens the student's view.
  await page.locator(`#roster tr[data-student="${student.id}"] th button`).click();
  const factCard = page.locator(`[data-memory="${fact}"]`);
  await factCard.locator(`[data-evidence="${summary}"]`).waitFor({ timeout: TIMEOUT });

  // The evidence under the fact, and the conversation it came from.
  const evidence = factCard.locator(`[data-evidence="${summary}"]`);
  seen.evidence = { heading: await text(factCard.locator(".evidence-heading")), text: await text(evidence) };
  await evidence.getByRole("button", { name: `Open conversation #${conversation}` }).click();
  await page.locator("#transcript").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.transcript = {
    heading: await text(page.locator("#transcript-heading")),
    messages: await texts(page.locator("#transcript-messages .text")),
    who: await texts(page.locator("#transcript-messages .who")),
  };
  await shot(page, "transcript");
  await page.getByRole("button", { name: "Close the conversation" }).click();
  await page.locator("#transcript").waitFor({ state: "hidden", timeout: TIMEOUT });
  // And from the list of conversations.
  await page.locator(`[data-conversation="${conversation}"]`).getByRole("button", { name: "Read the conversation" }).click();
  await page.locator("#transcript").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.conversations = await texts(page.locator("#conversation-list > li .conversation-title"));
  seen.conversationMeta = await page.locator("#conversation-list > li").evaluateAll((items) =>
    Object.fromEntries(
      items.map((li) => [li.querySelector(".conversation-title").textContent.split(", ")[0], li.querySelector(".meta").textContent.trim()]),
    ),
  );

  // Learning: skills, quizzes (with their questions) and tasks.
  await page.locator(`[data-quiz="${quiz}"]`).waitFor({ timeout: TIMEOUT });
  seen.skills = await page.locator("#skills-table tbody tr").evaluateAll((rows) =>
    rows.map((row) => Array.from(row.children, (c) => c.textContent.trim())),
  );
  const quizItem = page.locator(`[data-quiz="${quiz}"]`);
  seen.quizScore = await text(quizItem.locator(".score"));
  await quizItem.locator("summary").click();
  await quizItem.locator(".questions > li").first().waitFor({ timeout: TIMEOUT });
  seen.quizResults = await texts(quizItem.locator(".questions > li strong"));
  seen.task = await text(page.locator(`[data-task="${task}"]`));

  // The card: saved, then refused when too long, with the server's message.
  const cardSection = page.locator("#card");
  await cardSection.locator("#card-view [data-field=card_goals]").waitFor({ timeout: TIMEOUT });
  await cardSection.locator("#card-edit summary").click();
  await cardSection.getByRole("textbox", { name: "Goals", exact: true }).fill(config.card.goals.join("\n"));
  await cardSection.getByRole("textbox", { name: "Interests", exact: true }).fill(config.card.interests.join("\n"));
  await cardSection.getByRole("textbox", { name: "Level", exact: true }).fill(config.card.level);
  await cardSection.getByRole("checkbox", { name: "Interests" }).check();
  await cardSection.getByRole("button", { name: "Save the card" }).click();
  await page.locator("#card-status", { hasText: "Card saved." }).waitFor({ timeout: TIMEOUT });
  seen.cardView = await cardSection.locator("#card-view").evaluate((view) =>
    Object.fromEntries(Array.from(view.querySelectorAll("[data-field]"), (row) => [row.dataset.field, row.querySelector("dd").textContent.trim()])),
  );
  await cardSection.locator("#card-history summary").click();
  await cardSection.locator("#card-changes li[data-change]").first().waitFor({ timeout: TIMEOUT });
  seen.cardHistory = await texts(cardSection.locator("#card-changes li[data-change] p:first-child"));
  // The form stays open after a save, with the saved values.
  check(await cardSection.locator("#card-edit").evaluate((d) => d.open), "the card's form closed after saving");
  await cardSection.getByRole("textbox", { name: "Interests", exact: true }).fill(config.card.tooLong.join("\n"));
  await cardSection.getByRole("button", { name: "Save the card" }).click();
  await page.locator("#card-error").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.cardError = await text(page.locator("#card-error"));
  await shot(page, "card-too-long");

  // The review queue: accept the proposed accommodation, replace the older memory, confirm the fallback.
  const review = page.locator("#review");
  const proposal = review.locator(`[data-card-change="${pendingChange}"]`);
  await proposal.waitFor({ timeout: TIMEOUT });
  seen.proposal = await text(proposal);
  seen.reviewItems = await review.locator("#review-items > li").count();
  await shot(page, "review-queue");
  await proposal.getByRole("button", { name: "Accept" }).click();
  await page.locator("#review-status", { hasText: "Change accepted." }).waitFor({ timeout: TIMEOUT });
  await proposal.waitFor({ state: "detached", timeout: TIMEOUT });
  await page.locator("#card-view [data-field=card_accommodations] dd", { hasText: config.expect.accommodation }).waitFor({ timeout: TIMEOUT });
  const pair = review.locator(`[data-supersession="${supersession}"]`);
  seen.pair = await text(pair);
  await pair.getByRole("button", { name: "Replace the older memory" }).click();
  await page.locator("#review-status", { hasText: "The older memory was replaced." }).waitFor({ timeout: TIMEOUT });
  await pair.waitFor({ state: "detached", timeout: TIMEOUT });
  const fallback = review.locator(`[data-review-memory="${needsReview}"]`);
  await fallback.getByRole("button", { name: "Confirm as it is" }).click();
  await page.locator("#review-status", { hasText: "Memory confirmed." }).waitFor({ timeout: TIMEOUT });
  await fallback.waitFor({ state: "detached", timeout: TIMEOUT });
  seen.reviewAfter = await text(page.locator("#review-count"));

  // A note whose title has two words: refused next to the field, in words; the form states the rule.
  const noteForm = page.locator("#note-form");
  seen.noteRule = await text(page.locator("#note-title-hint"));
  await page.locator("#note-title").fill("Fractions again");
  await page.locator("#note-content").fill("She asked for more exercises on fractions.");
  await noteForm.getByRole("button", { name: "Add the note" }).click();
  await page.locator("#note-title-error").waitFor({ timeout: TIMEOUT });
  seen.noteError = await page.evaluate(() => {
    const field = document.getElementById("note-title");
    const error = document.getElementById("note-title-error");
    const box = error.getBoundingClientRect();
    return {
      text: error.textContent.trim(),
      invalid: field.getAttribute("aria-invalid"),
      describedBy: field.getAttribute("aria-describedby"),
      focused: document.activeElement?.id ?? "",
      pageError: !document.getElementById("error").hidden,
      gap: Math.round(box.top - field.getBoundingClientRect().bottom),
      inView: box.top >= 0 && box.bottom <= window.innerHeight,
    };
  });
  await shot(page, "note-title-refused", false);
  await page.locator("#note-title").fill(config.expect.noteTitle);
  await noteForm.getByRole("button", { name: "Add the note" }).click();
  await page.locator("#action-status", { hasText: "Note added." }).waitFor({ timeout: TIMEOUT });
  seen.noteErrorAfter = await page.locator("#note-title-error").count();

  // The ask box: the answer streams, then the checked answer with its citations.
  await page.evaluate(() => {
    window.__streamed = false;
    window.__order = [];
    new MutationObserver(() => {
      if (document.querySelector("#student-ask .streaming")) window.__streamed = true;
      // What the box showed, in order: progress before the first words, the words, the answer.
      for (const [name, selector] of [["thinking", ".thinking"], ["streaming", ".streaming"], ["answer", ".answer"]]) {
        if (document.querySelector(`#student-ask ${selector}`) && !window.__order.includes(name)) window.__order.push(name);
      }
    }).observe(document.getElementById("student-ask"), { childList: true, subtree: true });
  });
  await page.getByLabel(`Your question about ${student.username}`).fill(config.expect.question);
  await page.locator("#student-ask").getByRole("button", { name: "Ask" }).click();
  const answer = page.locator("#student-ask .answer");
  await answer.waitFor({ timeout: 60_000 });
  seen.ask = await answer.evaluate((node) => ({
    text: node.querySelector(".answer-text").textContent,
    citations: Array.from(node.querySelectorAll(".citations li"), (li) => ({
      ref: li.dataset.ref,
      kind: li.dataset.kind,
      label: li.querySelector(".kind").textContent.trim(),
      title: li.querySelector(".cite-title").textContent.trim(),
    })),
    unsupported: Array.from(node.querySelectorAll(".claim.unsupported"), (c) => c.textContent.trim()),
    links: Array.from(node.querySelectorAll("a.ref"), (a) => a.dataset.ref),
  }));
  seen.streamed = await page.evaluate(() => window.__streamed);
  seen.askOrder = await page.evaluate(() => window.__order);
  seen.askWarning = await answer.locator(".no-citation").count();
  await answer.scrollIntoViewIfNeeded();
  await shot(page, "ask-answer");
  await pageChecks(page, "english");

  // French: the labels follow.
  await toFrench(page);
  seen.french = {
    card: await text(page.locator("#card-heading")),
    review: await text(page.locator("#review-heading")),
    citationKinds: await texts(page.locator("#student-ask .citations .kind")),
    unsupported: await texts(page.locator("#student-ask .no-evidence")),
    skills: await texts(page.locator("#skills-table thead th")),
    quizScore: await text(page.locator(`[data-quiz="${quiz}"] .score`)),
    evidence: await text(page.locator(`[data-memory="${fact}"] .evidence-heading`)),
  };
  // An answer that cites nothing says so at its top (in French here).
  await page.locator("#student-ask-question").fill(config.expect.uncitedQuestion);
  await page.locator("#student-ask button[type=submit]").click();
  const warning = page.locator("#student-ask .answer > .no-citation");
  await warning.waitFor({ timeout: 60_000 });
  seen.uncited = {
    warning: await text(warning),
    first: await page.locator("#student-ask .answer").evaluate((node) => node.firstElementChild?.className ?? ""),
  };
  await shot(page, "ask-uncited", false);
  await pageChecks(page, "french");
  await narrow(page, "teacher-390px-fr");
}

async function classPart(page) {
  const table = page.locator("#class-table table");
  await table.waitFor({ timeout: TIMEOUT });
  seen.classCaption = await text(table.locator("caption"));
  seen.classHeaders = await texts(table.locator("thead th"));
  seen.classCells = await table.locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => ({
      student: row.querySelector("th").textContent.trim(),
      cells: Array.from(row.querySelectorAll("td"), (td) => ({
        text: td.textContent.trim(),
        className: td.className,
        colour: getComputedStyle(td).backgroundColor,
      })),
    })),
  );
  seen.legend = await texts(page.locator("#class-legend li"));
  await shot(page, "class-table");

  // A question about the class names its students with their evidence.
  await page.getByLabel(/^Your question about the class/).fill(config.expect.classQuestion);
  await page.locator("#class-ask").getByRole("button", { name: "Ask" }).click();
  const answer = page.locator("#class-ask .answer");
  await answer.waitFor({ timeout: 60_000 });
  seen.classAsk = {
    named: await texts(answer.locator(".named li")),
    citations: await answer.locator(".citations li").evaluateAll((items) => items.map((li) => li.dataset.ref)),
  };
  // A student's name opens their part of the page.
  await answer.locator(".named li button").first().click();
  await page.locator("#memories-heading", { hasText: config.expect.openedStudent }).waitFor({ timeout: TIMEOUT });
  await pageChecks(page, "class english");

  await toFrench(page);
  seen.legendFr = await texts(page.locator("#class-legend li"));
  seen.classCaptionFr = await text(page.locator("#class-table caption"));
  await pageChecks(page, "class french");
  // Back to the class overview.
  await page.locator("#back-to-class").click();
  await page.locator("#class").scrollIntoViewIfNeeded();
  await narrow(page, "class-390px-fr");
}

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
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  current = page;
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await signIn(page);
  if (config.part === "class") await classPart(page);
  else await studentPart(page);
  console.log(`RESULT ${JSON.stringify({ ok: true, seen, screenshots, pageErrors })}`);
} catch (error) {
  if (current) await current.screenshot({ path: join(artifacts, "failure.png"), fullPage: true }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), seen, screenshots, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
