// A guardian uses their page in Chromium (playwright-core), against a running server. Run by
// tests/web/test_guardian_page.py.
//
//   node tests/web/guardian_page.mjs '<json config>'
//
// config: {baseUrl, chromium, artifacts, guardian: {username, password}, reason}
// Prints "RESULT <json>": {ok, seen, error?}.
import { createRequire } from "node:module";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, guardian } = config;
const TIMEOUT = 20_000;
mkdirSync(artifacts, { recursive: true });

const seen = {};
const pageErrors = [];

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

async function texts(locator) {
  return (await locator.allTextContents()).map((text) => text.trim());
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
});

let page = null;
try {
  const context = await browser.newContext({ locale: "en-US", acceptDownloads: true });
  page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await page.goto(`${baseUrl}/app/guardian/`);
  await page.getByLabel("Username").fill(guardian.username);
  await page.getByLabel("Password").fill(guardian.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await page.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  await page.locator("#guardian-memories li").first().waitFor({ state: "visible", timeout: TIMEOUT });
  seen.heading = (await page.locator("h1").textContent()).trim();
  seen.children = await texts(page.locator("#child option"));
  seen.memories = await texts(page.locator("#guardian-memories li h3"));
  seen.skills = await texts(page.locator("#guardian-skills li"));
  seen.requestsBefore = await texts(page.locator("#erasure-requests li"));
  await page.screenshot({ path: join(artifacts, "1-guardian.png"), fullPage: true });

  // The export: a download of the child's document.
  const [download] = await Promise.all([
    page.waitForEvent("download", { timeout: TIMEOUT }),
    page.getByRole("link", { name: "Download all their data" }).click(),
  ]);
  const saved = join(artifacts, download.suggestedFilename());
  await download.saveAs(saved);
  const doc = JSON.parse(readFileSync(saved, "utf8"));
  seen.exportFilename = download.suggestedFilename();
  seen.exportFormat = doc.format;
  seen.exportStudent = doc.student.username;
  seen.exportMessages = doc.conversations.reduce((n, c) => n + c.messages.length, 0);

  // An erasure request: filed, and shown waiting.
  await page.getByLabel("Why").fill(config.reason);
  await page.getByRole("button", { name: "Send the request" }).click();
  await page
    .locator("#erasure-requests li.status-pending")
    .waitFor({ state: "visible", timeout: TIMEOUT });
  seen.requestsAfter = await texts(page.locator("#erasure-requests li"));
  await page.screenshot({ path: join(artifacts, "2-requested.png"), fullPage: true });

  check(pageErrors.length === 0, `uncaught errors in the page: ${pageErrors.join("; ")}`);
  console.log(`RESULT ${JSON.stringify({ ok: true, seen })}`);
} catch (error) {
  if (page) await page.screenshot({ path: join(artifacts, "failure.png") }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), seen, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
