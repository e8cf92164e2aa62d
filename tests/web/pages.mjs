// Opens pages of a running server in Chromium (playwright-core) with every request to another
// host blocked and recorded, and every Content-Security-Policy violation recorded. Run by
// tests/web/test_pages.py.
//
//   node tests/web/pages.mjs '<json config>'
//
// config: {baseUrl, chromium, artifacts, pages: [...]}, each page one of
//   {kind: "docs", path, waitFor}      load it and wait for the selector `waitFor`
//   {kind: "memories", path, user, locale, language, student?}
//                                      sign in (user: {username, password}) on /app/ or
//                                      /app/teacher/ (picking `student` there), in `language`
//                                      ("en", "fr"), and read the memory cards: title, kind and
//                                      source as shown
// Prints "RESULT <json>": {ok, pages: [{path, status, csp, ...}], external: [urls], violations:
// [{page, directive, blocked}], pageErrors, error?}. Exits 1 if a page failed to load.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const TIMEOUT = 20_000;
mkdirSync(config.artifacts, { recursive: true });
const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

const external = [];
const violations = [];
const pageErrors = [];
const pages = [];

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  // Without these Chromium itself reaches out to Google's services (not the page's doing).
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

async function newContext(locale) {
  const context = await browser.newContext({ locale, viewport: { width: 1100, height: 900 } });
  // Every request the pages make (documents, scripts, styles, fonts, images, fetches, workers)
  // passes here: one to another host is recorded and never leaves the machine.
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if (["http:", "https:", "ws:", "wss:"].includes(url.protocol) && !LOCAL_HOSTS.has(url.hostname)) {
      external.push(url.href);
      return route.abort("blockedbyclient");
    }
    return route.continue();
  });
  await context.exposeBinding("__reportViolation", ({ page }, violation) => {
    violations.push({ page: new URL(page.url()).pathname, ...violation });
  });
  // Injected by the browser (not the page), so the page's own policy does not block it.
  await context.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      void window.__reportViolation({ directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample });
    });
  });
  return context;
}

async function open(context, path) {
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`${path}: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && /Content.Security.Policy/i.test(message.text())) {
      violations.push({ page: path, console: message.text() });
    }
  });
  const response = await page.goto(`${config.baseUrl}${path}`);
  return { page, response };
}

async function signIn(page, { username, password }) {
  await page.locator("#login-form").waitFor({ state: "visible", timeout: TIMEOUT });
  await page.locator("#username").fill(username);
  await page.locator("#password").fill(password);
  await page.locator("#login-form button[type=submit]").click();
  await page.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
}

let current = null;
try {
  for (const spec of config.pages) {
    const context = await newContext(spec.locale ?? "en-US");
    const { page, response } = await open(context, spec.path);
    current = page;
    const seen = { path: spec.path, status: response?.status(), csp: (await response?.allHeaders())?.["content-security-policy"] ?? null };
    if (spec.kind === "docs") {
      await page.locator(spec.waitFor).first().waitFor({ state: "visible", timeout: TIMEOUT });
    } else {
      await signIn(page, spec.user);
      if (spec.language) {
        await page.locator("#language").selectOption(spec.language);
        await page.waitForFunction((lang) => document.documentElement.lang === lang, spec.language, { timeout: TIMEOUT });
      }
      if (spec.student) {
        // The class overview's roster opens the student's view.
        await page.locator("#roster tbody tr", { hasText: spec.student }).locator("th button").click();
      }
      await page.locator("[data-memory] h3").first().waitFor({ timeout: TIMEOUT });
      seen.memories = await page.evaluate(() =>
        Array.from(document.querySelectorAll("[data-memory]"), (card) => ({
          title: card.querySelector("h3")?.textContent?.trim() ?? "",
          kind: (card.querySelector(".meta .kind, [data-field=kind] dd")?.textContent ?? "").trim(),
          source: (card.querySelector(".meta .source, [data-field=source] dd")?.textContent ?? "").trim(),
          text: card.textContent ?? "",
        })),
      );
    }
    await page.waitForLoadState("networkidle", { timeout: TIMEOUT });
    await page.screenshot({ path: join(config.artifacts, `${pages.length + 1}-${spec.path.replaceAll("/", "_")}.png`), fullPage: false });
    pages.push(seen);
    await context.close();
  }
  console.log(`RESULT ${JSON.stringify({ ok: true, pages, external, violations, pageErrors })}`);
} catch (error) {
  if (current) await current.screenshot({ path: join(config.artifacts, "failure.png") }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), pages, external, violations, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
