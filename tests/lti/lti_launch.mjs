// LTI launches in Chromium (playwright-core): the test LMS (tests/lti_platform, on localhost)
// frames the tool (on 127.0.0.1: another site) in its course page. Run by tests/lti/test_browser.py.
//
//   node tests/lti/lti_launch.mjs '<json config>'
//
// config: {chromium, artifacts, learnerUrl, instructorUrl, deepLinkUrl, learnerCourseUrl,
//          question, topic, title}
// Prints "RESULT <json>": {ok, seen, error?}.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { chromium } = require("playwright-core");

const config = JSON.parse(process.argv[2]);
const { artifacts } = config;
const TIMEOUT = 30_000;
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
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"],
});

// Each person in a browser of their own (no cookie or storage shared).
async function newPage(who) {
  const context = await browser.newContext({ locale: "en-US", viewport: { width: 1200, height: 1000 } });
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(`${who}: ${error.message}`));
  return page;
}

function toolFrame(page) {
  return page.frames().find((f) => f !== page.mainFrame());
}

let current = null;
try {
  // ------------------------------------------- a learner opens the tutor from the course page
  const s = await newPage("learner");
  current = s;
  await s.goto(config.learnerUrl);
  const tool = s.frameLocator("#tool");
  await tool.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.learnerTop = s.url();
  seen.learnerFrame = toolFrame(s).url();
  seen.learnerWhoami = await text(tool.locator("#whoami"));
  seen.learnerConversation = await text(tool.locator('li.conversation[aria-current="true"] h3'));
  await tool.getByLabel("Your message").fill(config.question);
  await tool.getByRole("button", { name: "Send", exact: true }).click();
  const reply = tool.locator(".message.tutor:not(.streaming) .text");
  await reply.waitFor({ timeout: TIMEOUT });
  seen.reply = await text(reply);
  seen.frameCookies = (await s.context().cookies()).map((c) => ({
    name: c.name,
    domain: c.domain,
    sameSite: c.sameSite,
    secure: c.secure,
    partitioned: Boolean(c.partitionKey),
  }));
  await s.screenshot({ path: join(artifacts, "1-learner-chat.png"), fullPage: true });

  // ---------------------------------------------- an instructor opens the class from the course
  const t = await newPage("instructor");
  current = t;
  await t.goto(config.instructorUrl);
  const teacher = t.frameLocator("#tool");
  await teacher.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  // Signed in and started (the class chosen): the page's "Loading..." is gone.
  await teacher.locator("#loading").waitFor({ state: "hidden", timeout: TIMEOUT });
  await teacher.locator("#classroom-field").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.instructorFrame = toolFrame(t).url();
  seen.instructorWhoami = await text(teacher.locator("#whoami"));
  seen.instructorClass = await teacher.locator("#classroom").evaluate((select) => select.value);
  seen.instructorClassName = await teacher
    .locator("#classroom")
    .evaluate((select) => select.options[select.selectedIndex]?.textContent ?? "");
  await t.screenshot({ path: join(artifacts, "2-instructor-class.png"), fullPage: true });

  // ------------------------- the instructor adds a tutor on a topic to the course (deep linking)
  const d = await newPage("deep linking");
  current = d;
  await d.goto(config.deepLinkUrl);
  const picker = d.frameLocator("#tool");
  await picker.getByLabel("Topic").fill(config.topic);
  await picker.getByLabel("Title in the course").fill(config.title);
  await picker.getByRole("button", { name: "Add to the course" }).click();
  const added = picker.locator("#added");
  await added.waitFor({ timeout: TIMEOUT });
  seen.added = JSON.parse(await text(added));
  await d.screenshot({ path: join(artifacts, "3-deep-link-added.png"), fullPage: true });

  // ------------------------------------------------ the learner opens the link that was added
  const l = await newPage("learner, added link");
  current = l;
  await l.goto(`${config.learnerCourseUrl}?link=${encodeURIComponent(seen.added.links[0])}`);
  const added_tool = l.frameLocator("#tool");
  await added_tool.locator("#app").waitFor({ state: "visible", timeout: TIMEOUT });
  seen.topicConversation = await text(added_tool.locator('li.conversation[aria-current="true"] h3'));
  await l.screenshot({ path: join(artifacts, "4-learner-topic.png"), fullPage: true });

  check(pageErrors.length === 0, `uncaught errors in the pages: ${pageErrors.join("; ")}`);
  console.log(`RESULT ${JSON.stringify({ ok: true, seen })}`);
} catch (error) {
  if (current) await current.screenshot({ path: join(artifacts, "failure.png") }).catch(() => undefined);
  console.log(`RESULT ${JSON.stringify({ ok: false, error: String(error?.stack ?? error), seen, pageErrors })}`);
  process.exitCode = 1;
} finally {
  await browser.close();
}
