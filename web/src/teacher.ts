/**
 * The teacher's page (/app/teacher/): the safety queue of one's students (./safety); the class at
 * a glance, its skills table and a question about the class (./teacher_class, ./teacher_ask);
 * then one student of one's classes: a question about them, their card (./teacher_card), what
 * waits for review (./teacher_review), their skills, quizzes and tasks (./teacher_learning),
 * their conversations' transcripts (./teacher_transcript), and their memories with the evidence
 * behind each one, a note to add, a memory to correct or archive (./teacher_memories).
 */
import { type User, unwrap } from "../../clients/typescript/src/index";
import { act, api, byId, displayName, h, run, showError } from "./common";
import { t } from "./i18n";
import { loadFlags, onReadConversation, redrawFlags, resetFlags } from "./safety";
import type { Classroom } from "./teacher_api";
import { type AskBox, askBox } from "./teacher_ask";
import { loadCard, redrawCard, reloadCard, startCard } from "./teacher_card";
import { loadClasses, redrawClasses, resetClasses, startClasses } from "./teacher_class";
import { forgetEvidence } from "./teacher_evidence";
import { loadLearning, redrawLearning } from "./teacher_learning";
import { loadMemories, redrawMemories, resetMemories, startMemories } from "./teacher_memories";
import { loadReviews, redrawReviews, showCardPending, startReviews } from "./teacher_review";
import { loadConversations, openConversation, redrawConversations } from "./teacher_transcript";

let students: User[] = [];
let classroom: Classroom | null = null;

const studentSelect = () => byId<HTMLSelectElement>("student");

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
  byId("no-students").hidden = students.length > 0;
  byId("student-view").hidden = students.length === 0;
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
  (id) => void pickStudent(id),
);

/** Load every part of the page about the chosen student; each part shows its own failure. */
async function loadStudent(): Promise<void> {
  const student = selectedStudent();
  studentAsk.clear();
  await Promise.all([
    act(null, () => loadMemories(student)),
    loadReviews(student),
    loadCard(student),
    loadLearning(student),
    loadConversations(student),
  ]);
}

async function pickStudent(id: number): Promise<void> {
  if (!students.some((s) => s.id === id)) return;
  studentSelect().value = String(id);
  const view = byId("student-view");
  view.scrollIntoView({ block: "start" });
  await loadStudent();
}

// A flag's "Read the conversation": its student's view, then the transcript at the flagged message.
onReadConversation((flag) => {
  if (flag.conversation === null || flag.conversation === undefined) return;
  const conversation = flag.conversation;
  void (async () => {
    if (students.some((s) => s.id === flag.student.id) && selectedStudent()?.id !== flag.student.id) {
      studentSelect().value = String(flag.student.id);
      await loadStudent();
    }
    await openConversation(conversation, null, flag.message ?? null);
  })();
});

startCard(showCardPending);
startReviews((what) => {
  if (what === "card") void reloadCard();
  else void Promise.all([act(null, () => loadMemories(selectedStudent())), loadReviews(selectedStudent())]);
});
startClasses(
  (id) => void pickStudent(id),
  (chosen) => {
    classroom = chosen;
    classAsk.clear();
  },
);
studentSelect().addEventListener("change", () => {
  byId("action-status").textContent = "";
  void loadStudent();
});

void run({
  roles: ["teacher", "administrator"],
  async start(user) {
    startMemories(user, () => void loadReviews(selectedStudent()));
    await Promise.all([loadFlags(), loadStudents().then(loadStudent), loadClasses()]);
  },
  redraw() {
    redrawFlags();
    drawStudents();
    redrawClasses();
    classAsk.redraw();
    studentAsk.redraw();
    redrawCard();
    redrawReviews();
    redrawLearning();
    redrawConversations();
    redrawMemories();
  },
  reset() {
    students = [];
    classroom = null;
    showError(null);
    resetFlags();
    resetClasses();
    resetMemories();
    forgetEvidence();
    drawStudents();
    classAsk.clear();
    studentAsk.clear();
    void loadStudent();
  },
});
