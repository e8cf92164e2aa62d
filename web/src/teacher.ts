/**
 * The teacher workspace (/app/teacher/), for a teacher and for a school administrator, in three
 * places the URL's fragment names (./teacher_routes, so back and forward work):
 * - the class overview: the chosen class's roster with each student's figures and homework for
 *   the class (./teacher_roster), the safety queue of one's students (./safety), the class's
 *   skills table and a question about the class (./teacher_class, ./teacher_ask);
 * - a student's view, reached from the roster, in sections a sticky nav jumps between: a
 *   question about them, their card (./teacher_card), what waits for review (./teacher_review),
 *   their skills, quizzes and tasks (./teacher_learning), their conversations' transcripts
 *   (./teacher_transcript), a note to add and their memories with the evidence behind each one
 *   (./teacher_memories);
 * - a school administrator's view of their school (./teacher_school).
 */
import { type User, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, displayName, h, launched, run, showError } from "./common";
import { t } from "./i18n";
import { loadFlags, onReadConversation, redrawFlags, resetFlags } from "./safety";
import type { Classroom } from "./teacher_api";
import { type AskBox, askBox } from "./teacher_ask";
import { loadCard, redrawCard, reloadCard, startCard } from "./teacher_card";
import { chooseClassroom, loadClasses, redrawClasses, resetClasses, startClasses } from "./teacher_class";
import { forgetEvidence } from "./teacher_evidence";
import { loadLearning, redrawLearning } from "./teacher_learning";
import { loadMemories, redrawMemories, resetMemories, startMemories } from "./teacher_memories";
import { loadReviews, redrawReviews, showCardPending, startReviews } from "./teacher_review";
import { loadRoster, redrawRoster, resetRoster, startRoster } from "./teacher_roster";
import { currentRoute, go, onRoute, parseRoute, type Route, routeHash, SECTION_IDS, type Section } from "./teacher_routes";
import { redrawSchool, resetSchool } from "./teacher_school";
import { loadConversations, openConversation, redrawConversations } from "./teacher_transcript";

let me: User | null = null;
let students: User[] = [];
let classroom: Classroom | null = null;
let loaded: number | null = null; // the student whose view is loaded
let route: Route = { view: "overview" };

const studentSelect = () => byId<HTMLSelectElement>("student");
const isAdministrator = () => me?.role === "administrator";

function selectedStudent(): User | null {
  return students.find((s) => String(s.id) === studentSelect().value) ?? null;
}

function nameOf(id: number): string {
  const student = students.find((s) => s.id === id);
  return student ? displayName(student) : t("student_number", { id });
}

function drawStudents(): void {
  const select = studentSelect();
  const chosen = select.value;
  select.replaceChildren(...students.map((s) => h("option", { value: String(s.id) }, displayName(s))));
  if (chosen) select.value = chosen;
}

/** The student's heading and the section nav's links, for the student shown. */
function drawStudentHead(): void {
  const student = selectedStudent();
  byId("students-heading").textContent = student ? displayName(student) : "";
  const current = route.view === "student" ? route.section : null;
  for (const link of byId("section-nav").querySelectorAll<HTMLAnchorElement>("a[data-section]")) {
    const section = link.dataset.section as Section;
    if (student) link.href = routeHash({ view: "student", student: student.id, section });
    if (section === current) link.setAttribute("aria-current", "location");
    else link.removeAttribute("aria-current");
  }
}

function drawViews(): void {
  const view = route.view;
  byId("overview-view").hidden = view !== "overview";
  byId("student-view").hidden = view !== "student";
  byId("school-view").hidden = view !== "school";
  byId("views").hidden = !isAdministrator();
  for (const link of byId("views").querySelectorAll<HTMLAnchorElement>("a[data-view]")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  drawStudentHead();
}

async function loadStudents(): Promise<void> {
  const all: User[] = [];
  for (let page = 1; ; page++) {
    const data = unwrap(await api.GET("/api/v1/students/", { params: { query: { page, page_size: 100 } } }));
    all.push(...data.results);
    if (!data.next) break;
  }
  students = all;
  drawStudents();
}

const studentAsk: AskBox = askBox(
  "student-ask",
  () => {
    const student = selectedStudent();
    return student ? { path: `/students/${student.id}/ask/`, label: t("ask_about_student", { name: displayName(student) }) } : null;
  },
  nameOf,
);

const classAsk: AskBox = askBox(
  "class-ask",
  () => (classroom ? { path: `/classrooms/${classroom.id}/ask/`, label: t("ask_about_class", { name: classroom.name }) } : null),
  nameOf,
  (id) => void go({ view: "student", student: id, section: null }),
);

/** Load every part of the page about the chosen student; each part shows its own failure. */
async function loadStudent(): Promise<void> {
  const student = selectedStudent();
  loaded = student?.id ?? null;
  studentAsk.clear();
  byId("action-status").textContent = "";
  await Promise.all([
    act(null, () => loadMemories(student)),
    loadReviews(student),
    loadCard(student),
    loadLearning(student),
    loadConversations(student),
  ]);
}

/** Scroll to the section the route names (below the sticky nav), or to the view's top. */
function scrollToRoute(): void {
  if (route.view !== "student" || !route.section) {
    window.scrollTo({ top: 0 });
    return;
  }
  const target = byId(SECTION_IDS[route.section]);
  const nav = byId("section-nav").getBoundingClientRect().height;
  window.scrollTo({ top: target.getBoundingClientRect().top + window.scrollY - nav - 8 });
}

/** Show the place the URL names: the view, the student (loaded when it changed), the section. */
async function applyRoute(): Promise<void> {
  const before = route;
  // An administrator starts at their school, a teacher at their class.
  route = !window.location.hash && isAdministrator() ? { view: "school" } : currentRoute();
  if (route.view === "school" && !isAdministrator()) route = { view: "overview" };
  if (route.view === "student") {
    const id = route.student;
    if (students.some((s) => s.id === id)) studentSelect().value = String(id);
    else route = { view: "overview" };
  }
  drawViews();
  // The same view again keeps its place (an alert's `#flag-<id>` on the overview: ./safety's).
  const moved = route.view !== before.view || route.view === "student";
  if (moved) scrollToRoute();
  if (route.view === "student" && selectedStudent()?.id !== loaded) {
    await loadStudent();
    scrollToRoute();
  }
}

onRoute(applyRoute);

// Back and forward, a fragment typed or followed: the place the URL names now.
window.addEventListener("popstate", () => void applyRoute());
window.addEventListener("hashchange", () => void applyRoute());

// Links between places go through `go` (a link still opens in a new tab as an address).
document.addEventListener("click", (event) => {
  const link = (event.target as Element | null)?.closest?.("a[href^='#']");
  if (!(link instanceof HTMLAnchorElement) || !link.closest("#views, #section-nav, .student-head")) return;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault();
  void go(parseRoute(link.getAttribute("href") ?? ""));
});

// A flag's "Read the conversation": its student's view, then the transcript at the flagged message.
onReadConversation((flag) => {
  if (flag.conversation === null || flag.conversation === undefined) return;
  const conversation = flag.conversation;
  void (async () => {
    await go({ view: "student", student: flag.student.id, section: "conversations" });
    await openConversation(conversation, null, flag.message ?? null);
  })();
});

startCard(showCardPending);
startReviews((what) => {
  if (what === "card") void reloadCard();
  else void Promise.all([act(null, () => loadMemories(selectedStudent())), loadReviews(selectedStudent())]);
});
startRoster((id) => void go({ view: "student", student: id, section: null }));
startClasses(
  (id) => void go({ view: "student", student: id, section: null }),
  (chosen) => {
    classroom = chosen;
    classAsk.clear();
    void loadRoster(chosen);
  },
  redrawSchool,
);
studentSelect().addEventListener("change", () => {
  const id = Number(studentSelect().value);
  void go({ view: "student", student: id, section: route.view === "student" ? route.section : null });
});

void run({
  roles: ["teacher", "administrator"],
  async start(user) {
    me = user;
    startMemories(user, () => void loadReviews(selectedStudent()));
    drawViews();
    await Promise.all([loadFlags(), loadStudents().then(applyRoute), loadClasses()]);
    // An instructor's LTI launch opens the course's class.
    if (launched.classroom !== null) await chooseClassroom(launched.classroom);
  },
  redraw() {
    redrawFlags();
    drawStudents();
    drawViews();
    redrawClasses();
    redrawRoster();
    redrawSchool();
    classAsk.redraw();
    studentAsk.redraw();
    redrawCard();
    redrawReviews();
    redrawLearning();
    redrawConversations();
    redrawMemories();
  },
  reset() {
    me = null;
    students = [];
    classroom = null;
    loaded = null;
    showError(null);
    resetFlags();
    resetClasses();
    resetRoster();
    resetSchool();
    resetMemories();
    forgetEvidence();
    drawStudents();
    drawViews();
    classAsk.clear();
    studentAsk.clear();
    void loadStudent();
  },
});

