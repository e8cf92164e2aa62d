// A teacher prints the class's sign-in cards and a student signs in with one, in Chromium
// (playwright-core), against a running server. Run by tests/web/test_sign_in_cards.py.
//
//   node tests/web/sign_in_cards.mjs '<json config>'
//
// config: {baseUrl, chromium, artifacts, teacher: {username, password}, cardFor, typedFor,
//          subject, question, reply}
// Prints "RESULT <json>": {ok, cards: [{name, code, link, viewBox, path}], seen, error?}.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, teacher } = config;
const TIMEOUT = 20_000;
mkdirSync(artifacts, { recursive: true });

const seen = {};
const pageErrors = [];
let cards = [];

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

async function newPage(who) {
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1000, height: 900 } });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`${who}: ${error.message}`));
  return page;
}

let current = null;
try {
  // ------------------------------------------------------------ the teacher prints the cards
  const t = await newPage("teacher");
  current = t;
  await t.goto(`${baseUrl}/app/teacher/`);
  await t.getByLabel("Username").fill(teacher.username);
  await t.getByLabel("Password").fill(teacher.password);
  await t.getByRole("button", { name: "Sign in", exact: true }).click();
  await t.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  const link = t.getByRole("link", { name: "Print the class's sign-in cards" });
  await link.waitFor({ state: "visible", timeout: TIMEOUT });
  await link.click();
  await t.locator("#cards-form").waitFor({ state: "visible", timeout: TIMEOUT });
  await t.getByLabel(/^Valid for/).fill("7");
  await t.getByRole("button", { name: "Make and print the cards" }).click();
  await t.locator(".sign-in-card").first().waitFor({ timeout: TIMEOUT });
  cards = await t.evaluate(() =>
    Array.from(document.querySelectorAll(".sign-in-card"), (card) => ({
      name: card.querySelector(".sign-in-card-name")?.textContent?.trim() ?? "",
      classroom: card.querySelector(".sign-in-card-class")?.textContent?.trim() ?? "",
      code: card.querySelector(".sign-in-card-code")?.textContent?.trim() ?? "",
      link: card.getAttribute("data-link") ?? "",
      svgs: card.querySelectorAll("svg").length,
      viewBox: card.querySelector("svg")?.getAttribute("viewBox") ?? "",
      path: card.querySelector("svg path")?.getAttribute("d") ?? "",
      // Drawn, not only present: the QR code has a size on screen.
      width: card.querySelector("svg")?.getBoundingClientRect().width ?? 0,
    })),
  );
  await t.screenshot({ path: join(artifacts, "1-cards-screen.png"), fullPage: true });
  await t.emulateMedia({ media: "print" });
  check(await t.locator("header.top").isHidden(), "the page's header is printed");
  await t.screenshot({ path: join(artifacts, "2-cards-print.png"), fullPage: true });

  // ------------------------------------------- a student opens their card's link (the QR code)
  const card = cards.find((c) => c.name === config.cardFor);
  check(card, `no card for ${config.cardFor}: ${JSON.stringify(cards.map((c) => c.name))}`);
  const s = await newPage("student");
  current = s;
  await s.goto(card.link);
  await s.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  check((await text(s.locator("#whoami"))).includes(config.cardFor), "whoami does not name the card's student");
  seen.addressAfterSignIn = s.url();
  check(!s.url().includes("#") && !s.url().includes(card.code), `the code stays in the address: ${s.url()}`);
  seen.historyLength = await s.evaluate(() => history.length);
  await s.getByLabel("Subject (optional)").fill(config.subject);
  await s.getByRole("button", { name: "Start a new conversation" }).click();
  await s.getByLabel("Your message").waitFor({ state: "visible", timeout: TIMEOUT });
  await s.getByLabel("Your message").fill(config.question);
  await s.getByRole("button", { name: "Send", exact: true }).click();
  const reply = s.locator(".message.tutor:not(.streaming) .text");
  await reply.waitFor({ timeout: TIMEOUT });
  seen.reply = await text(reply);
  await s.screenshot({ path: join(artifacts, "3-student-signed-in-by-link.png"), fullPage: true });

  // ------------------------------------------------ another student types their code instead
  const typed = cards.find((c) => c.name === config.typedFor);
  check(typed, `no card for ${config.typedFor}`);
  const b = await newPage("typing student");
  current = b;
  await b.goto(`${baseUrl}/app/`);
  await b.getByLabel("The code on your card").fill(typed.code.toLowerCase().replaceAll("-", " "));
  await b.getByRole("button", { name: "Sign in with the code" }).click();
  await b.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.typedWhoami = await text(b.locator("#whoami"));

  // ------------------------------- a link with a wrong code: the server's message, the form
  const w = await newPage("wrong code");
  current = w;
  await w.goto(`${baseUrl}/app/#code=0000-0000-0000-0000`);
  await w.locator("#error").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.wrongCodeError = await text(w.locator("#error"));
  check(await w.locator("#login-form").isVisible(), "no sign-in form after a wrong code");
  check(!w.url().includes("#"), "the wrong code stays in the address");

  check(pageErrors.length === 0, `uncaught errors in the pages: ${pageErrors.join("; ")}`);
  console.log(`RESULT ${JSON.stringify({ ok: true, cards, seen })}`);
} catch (error) {
  if (current) await current.screenshot({ path: join(artifacts, "failure.png") }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), cards, seen, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
