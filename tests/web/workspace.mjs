// Drives the teacher workspace (/app/teacher/) in Chromium, at desktop (1280x800) and phone
// (390x844) widths, against a running server: the class overview's roster, a student's view
// reached from it, its section nav and the history; then a school administrator's view. Run by
// tests/web/test_teacher_workspace.py, which seeds the data and checks what was read.
//
//   node tests/web/workspace.mjs '<json config>'
//
// Prints "RESULT <json>" (what was read off the page, the screenshots, page errors). Exits 1 on
// the first failed check, after a screenshot.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { baseUrl, artifacts, teacher, administrator, data } = config;
const TIMEOUT = 20_000;
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
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

/** The page's width against the window's: nothing may scroll sideways. */
async function overflow(page, label) {
  const { scroll, inner } = await page.evaluate(() => ({
    scroll: document.scrollingElement.scrollWidth,
    inner: window.innerWidth,
  }));
  check(scroll <= inner, `${label}: the page scrolls sideways (${scroll} px in ${inner} px)`);
  return { scroll, inner };
}

async function signIn(page, who, hash = "") {
  await page.goto(`${baseUrl}/app/teacher/${hash}`);
  await page.locator("#username").fill(who.username);
  await page.locator("#password").fill(who.password);
  await page.locator("#login-form button[type=submit]").click();
  await page.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
}

/** The roster's rows: the student's name and each figure by its field. */
async function rosterRows(page) {
  return page.locator("#roster tbody tr").evaluateAll((rows) =>
    rows.map((row) => ({
      id: Number(row.dataset.student),
      name: row.querySelector("th").textContent.trim(),
      ...Object.fromEntries(Array.from(row.querySelectorAll("td[data-field]"), (td) => [td.dataset.field, td.textContent.trim()])),
      bars: Array.from(row.querySelectorAll("svg.spark rect.bar"), (bar) => ({
        skill: bar.dataset.skill,
        band: bar.getAttribute("class").replace("bar ", ""),
        height: Number(bar.getAttribute("height")),
      })),
      chartLabel: row.querySelector("svg.spark")?.getAttribute("aria-label") ?? null,
    })),
  );
}

/** The top of a section against the bottom of the sticky nav (in view, not under the nav). */
async function sectionPlace(page, id) {
  return page.evaluate((id) => {
    const nav = document.getElementById("section-nav").getBoundingClientRect();
    const box = document.getElementById(id).getBoundingClientRect();
    return { top: Math.round(box.top), navBottom: Math.round(nav.bottom), navTop: Math.round(nav.top), inner: window.innerHeight };
  }, id);
}

async function teacherPart(browser) {
  const context = await browser.newContext({ locale: "en-US", viewport: DESKTOP });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await signIn(page, teacher);

  // The overview: exactly the class's students, with their figures.
  await page.locator("#roster tbody tr").first().waitFor({ timeout: TIMEOUT });
  seen.overviewHeading = await text(page.locator("#overview-heading"));
  seen.caption = await text(page.locator("#roster caption"));
  seen.rows = await rosterRows(page);
  seen.studentViewHidden = await page.locator("#student-view").isHidden();
  await overflow(page, "overview, desktop");
  await shot(page, "overview-desktop", false);

  // Homework for the whole class.
  await page.locator("#homework summary").click();
  await page.locator("#homework-title").fill(config.homework.title);
  await page.locator("#homework-subject").fill(config.homework.subject);
  await page.locator("#homework").getByRole("button", { name: "Set the homework" }).click();
  await page.locator("#homework-status", { hasText: config.homework.title }).waitFor({ timeout: TIMEOUT });
  seen.homeworkStatus = await text(page.locator("#homework-status"));

  // A name opens the student's view, at its top, in the URL.
  await page.locator(`#roster tr[data-student="${data.alice}"] th button`).click();
  await page.locator("#memories-heading", { hasText: "alice" }).waitFor({ timeout: TIMEOUT });
  seen.afterOpen = {
    hash: await page.evaluate(() => window.location.hash),
    overviewHidden: await page.locator("#overview-view").isHidden(),
    heading: await text(page.locator("#students-heading")),
  };
  // The section nav jumps: the section's top just below the nav, which stays in view.
  await page.locator("#section-nav").getByRole("link", { name: "Conversations" }).click();
  await page.waitForFunction(() => window.location.hash.endsWith("/conversations"), null, { timeout: TIMEOUT });
  seen.jumpConversations = { hash: await page.evaluate(() => window.location.hash), ...(await sectionPlace(page, "conversations")) };
  await page.locator("#section-nav").getByRole("link", { name: "Card" }).click();
  await page.waitForFunction(() => window.location.hash.endsWith("/card"), null, { timeout: TIMEOUT });
  seen.jumpCard = { hash: await page.evaluate(() => window.location.hash), ...(await sectionPlace(page, "card")) };
  seen.current = await text(page.locator("#section-nav a[aria-current]"));
  await overflow(page, "student, desktop");
  await shot(page, "student-card-desktop", false);

  // Back and forward: the conversations again, then the overview, then forward to the student.
  await page.goBack();
  await page.waitForFunction(() => window.location.hash.endsWith("/conversations"), null, { timeout: TIMEOUT });
  seen.backToConversations = await sectionPlace(page, "conversations");
  await page.goBack();
  await page.goBack();
  await page.locator("#overview-view").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.backToOverview = { hash: await page.evaluate(() => window.location.hash), studentHidden: await page.locator("#student-view").isHidden() };
  await page.goForward();
  await page.locator("#student-view").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.forward = await page.evaluate(() => window.location.hash);

  // A link to a student's section, opened afresh (reload): that section.
  await page.goto(`${baseUrl}/app/teacher/#student/${data.bob}/learning`);
  await page.locator("#learning-heading", { hasText: "bob" }).waitFor({ timeout: TIMEOUT });
  await page.waitForFunction(() => {
    const nav = document.getElementById("section-nav").getBoundingClientRect();
    const box = document.getElementById("learning").getBoundingClientRect();
    return Math.abs(box.top - nav.bottom) < 40;
  }, null, { timeout: TIMEOUT });
  seen.deepLink = await sectionPlace(page, "learning");

  // Phone width: nothing scrolls sideways, in the student's view and in the overview.
  await page.setViewportSize(PHONE);
  await page.locator("#section-nav").getByRole("link", { name: "Memories" }).click();
  await page.waitForFunction(() => window.location.hash.endsWith("/memories"), null, { timeout: TIMEOUT });
  seen.phoneStudent = await overflow(page, "student, phone");
  seen.phoneJump = await sectionPlace(page, "memories-section");
  await shot(page, "student-phone", false);
  await page.locator("#back-to-class").click();
  await page.locator("#roster tbody tr").first().waitFor({ timeout: TIMEOUT });
  seen.phoneOverview = await overflow(page, "overview, phone");
  seen.phoneRowWidth = await page.locator("#roster tbody tr").first().evaluate((row) => Math.round(row.getBoundingClientRect().right));
  await shot(page, "overview-phone");

  // French: the overview's words follow.
  await page.locator("#language").selectOption("fr");
  await page.waitForFunction(() => document.documentElement.lang === "fr", null, { timeout: TIMEOUT });
  seen.frenchHeaders = await page.locator("#roster td[data-field]").first().evaluate(() =>
    Array.from(document.querySelectorAll("#roster thead th"), (th) => th.textContent.trim()),
  );
  seen.frenchHomework = await text(page.locator("#homework summary"));
  await overflow(page, "overview, phone, French");
  await context.close();
}

async function administratorPart(browser) {
  const context = await browser.newContext({ locale: "en-US", viewport: DESKTOP });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(error.message));
  await signIn(page, administrator, "#school");
  await page.locator("#school-classes tbody tr").first().waitFor({ timeout: TIMEOUT });
  seen.adminClasses = await texts(page.locator("#school-classes tbody th"));
  seen.adminViews = await texts(page.locator("#views a"));
  await shot(page, "school-desktop", false);
  // A class opens its overview, with its roster.
  await page.locator("#school-classes").getByRole("button", { name: config.adminOpens }).click();
  await page.locator("#roster tbody tr").first().waitFor({ timeout: TIMEOUT });
  seen.adminRoster = (await rosterRows(page)).map((row) => row.name);
  seen.adminHash = await page.evaluate(() => window.location.hash);
  await page.setViewportSize(PHONE);
  await overflow(page, "administrator's overview, phone");
  await page.locator("#views").getByRole("link", { name: "My school" }).click();
  await page.locator("#school-view").waitFor({ state: "visible", timeout: TIMEOUT });
  await overflow(page, "school, phone");
  await shot(page, "school-phone");
  await context.close();
}

const browser = await chromium.launch({
  executablePath: config.chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

try {
  await teacherPart(browser);
  await administratorPart(browser);
  console.log(`RESULT ${JSON.stringify({ ok: true, seen, screenshots, pageErrors })}`);
} catch (error) {
  for (const context of browser.contexts()) {
    for (const page of context.pages()) await page.screenshot({ path: join(artifacts, "failure.png"), fullPage: true }).catch(() => undefined);
  }
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), seen, screenshots, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
