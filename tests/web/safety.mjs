// Drives the teacher page's safety queue in Chromium, as a teacher opening an alert's link would,
// against a running server. Run by tests/web/test_safety_queue.py, which seeds the flags and
// checks the database afterwards.
//
//   node tests/web/safety.mjs '<json config>'
//
// Prints "RESULT <json>" (what was read off the page, the screenshots, page errors). Exits 1 on
// the first failed check, after a screenshot.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, teacher, anchored, acknowledge, resolve } = config;
const TIMEOUT = 20_000;
mkdirSync(artifacts, { recursive: true });

const screenshots = [];
const pageErrors = [];
const seen = {};

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

async function shot(page, name) {
  const path = join(artifacts, `${String(screenshots.length + 1).padStart(2, "0")}-${name}.png`);
  await page.screenshot({ path, fullPage: true });
  screenshots.push(path);
}

/** Each flag card, in the order shown: id, heading, excerpt and its provenance fields. */
async function cards(page) {
  return page.evaluate(() =>
    Array.from(document.querySelectorAll("#flags > li"), (item) => {
      const article = item.querySelector("[data-flag]");
      const fields = {};
      for (const row of item.querySelectorAll("[data-field]")) {
        fields[row.getAttribute("data-field")] = (row.querySelector("dd")?.textContent ?? "").trim();
      }
      return {
        anchor: item.id,
        id: Number(article?.getAttribute("data-flag")),
        heading: (item.querySelector("h3")?.textContent ?? "").trim(),
        excerpt: (item.querySelector(".excerpt")?.textContent ?? "").trim(),
        fields,
        canAcknowledge: Boolean(item.querySelector("form.acknowledge")),
        canResolve: Boolean(item.querySelector("form.resolve")),
      };
    }),
  );
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
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1000, height: 700 } });
  const page = await context.newPage();
  current = page;
  page.on("pageerror", (error) => pageErrors.push(error.message));

  // An alert's link: the queue's URL, anchored on one flag.
  await page.goto(`${baseUrl}/app/teacher/safety/#flag-${anchored}`);
  await page.locator("#username").fill(teacher.username);
  await page.locator("#password").fill(teacher.password);
  await page.locator("#login-form button[type=submit]").click();
  await page.locator("#flags > li").first().waitFor({ timeout: TIMEOUT });
  await page.waitForFunction((id) => document.activeElement?.id === `flag-${id}`, anchored, { timeout: TIMEOUT });
  seen.focused = await page.evaluate(() => document.activeElement?.id ?? "");
  seen.before = await cards(page);
  await shot(page, "safety-queue");

  // Acknowledge one flag with a note.
  const ack = page.locator(`#flag-${acknowledge.id}`);
  await ack.getByLabel("Note (optional)").fill(acknowledge.note);
  await ack.getByRole("button", { name: "Acknowledge", exact: true }).click();
  await page.locator("#safety-status", { hasText: "Flag acknowledged." }).waitFor({ timeout: TIMEOUT });
  check(!(await ack.locator("form.acknowledge").count()), "the acknowledged flag still offers Acknowledge");

  // Resolve another as a false positive, with what was done.
  const res = page.locator(`#flag-${resolve.id}`);
  await res.locator("summary", { hasText: "Resolve" }).click();
  await res.getByLabel("What was done").fill(resolve.note);
  await res.getByLabel("Outcome").selectOption(resolve.outcome);
  await res.getByRole("button", { name: "Close this flag" }).click();
  await page.locator("#safety-status", { hasText: "Flag closed." }).waitFor({ timeout: TIMEOUT });
  seen.after = await cards(page);
  await shot(page, "safety-queue-after");

  // A flag opens its conversation, at the flagged message, in the student's part of the page.
  const flagged = page.locator(`#flag-${config.read}`);
  await flagged.getByRole("button", { name: "Read the conversation" }).click();
  await page.locator("#transcript").waitFor({ state: "visible", timeout: TIMEOUT });
  const marked = page.locator("#transcript-messages .message.marked");
  await marked.waitFor({ timeout: TIMEOUT });
  seen.read = {
    heading: ((await page.locator("#transcript-heading").textContent()) ?? "").trim(),
    student: await page.locator("#student option:checked").textContent(),
    marked: ((await marked.locator(".text").textContent()) ?? "").trim(),
    messages: await page.locator("#transcript-messages .message").count(),
    inView: await marked.evaluate((node) => {
      const box = node.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= window.innerHeight;
    }),
  };
  await shot(page, "flag-conversation");

  // In French, the labels follow.
  await page.locator("#language").selectOption("fr");
  await page.waitForFunction(() => document.documentElement.lang === "fr", null, { timeout: TIMEOUT });
  seen.french = await cards(page);

  console.log(`RESULT ${JSON.stringify({ ok: true, seen, screenshots, pageErrors })}`);
} catch (error) {
  if (current) await current.screenshot({ path: join(artifacts, "failure.png") }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), seen, screenshots, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
