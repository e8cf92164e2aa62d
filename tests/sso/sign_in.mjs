// A teacher signs in with their school's identity provider, in Chromium (playwright-core), against
// a running server and the test provider. Run by tests/sso/test_browser.py.
//
//   node tests/sso/sign_in.mjs '<json config>'
//
// config: {baseUrl, chromium, artifacts, button, teacher: {username, password}, stranger}
// Prints "RESULT <json>": {ok, seen, error?}.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts } = config;
const TIMEOUT = 20_000;
mkdirSync(artifacts, { recursive: true });

const seen = {};
const pageErrors = [];

class CheckFailed extends Error {}

function check(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

async function text(locator) {
  return ((await locator.textContent({ timeout: TIMEOUT })) ?? "").trim();
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
});

async function newPage(who) {
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`${who}: ${error.message}`));
  return page;
}

/** From the teacher page's sign-in form, through the provider's form, back to the server. */
async function signInWithProvider(page, account) {
  await page.goto(`${baseUrl}/app/teacher/`);
  const button = page.getByRole("link", { name: config.button });
  await button.waitFor({ state: "visible", timeout: TIMEOUT });
  await page.screenshot({ path: join(artifacts, `1-${account.username}-sign-in-form.png`), fullPage: true });
  await button.click();
  await page.getByLabel("Username").waitFor({ state: "visible", timeout: TIMEOUT });
  seen[`${account.username}ProviderHost`] = new URL(page.url()).host;
  await page.getByLabel("Username").fill(account.username);
  await page.getByLabel("Password").fill(account.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.toString().startsWith(baseUrl), { timeout: TIMEOUT });
}

let current = null;
try {
  // --------------------------------------------- the teacher the roster knows comes back in
  const t = await newPage("teacher");
  current = t;
  await signInWithProvider(t, config.teacher);
  await t.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.address = t.url();
  seen.whoami = await text(t.locator("#whoami"));
  await t.locator("#roster tbody tr").first().waitFor({ timeout: TIMEOUT });
  seen.classes = await t.locator("#classroom option").allTextContents();
  seen.roster = await t.locator("#roster tbody th").allTextContents();
  await t.screenshot({ path: join(artifacts, "2-teacher-signed-in.png"), fullPage: true });

  // ---------------------------------------- someone the school does not know: the refusal
  const s = await newPage("stranger");
  current = s;
  await signInWithProvider(s, config.stranger);
  await s.locator("#sign-in-refused").waitFor({ timeout: TIMEOUT });
  seen.refusal = await text(s.getByRole("alert"));
  await s.screenshot({ path: join(artifacts, "3-stranger-refused.png"), fullPage: true });
  const me = await s.request.get(`${baseUrl}/api/v1/me/`);
  seen.strangerMeStatus = me.status();

  check(pageErrors.length === 0, `uncaught errors in the pages: ${pageErrors.join("; ")}`);
  console.log(`RESULT ${JSON.stringify({ ok: true, seen })}`);
} catch (error) {
  if (current) await current.screenshot({ path: join(artifacts, "failure.png") }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), seen, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
