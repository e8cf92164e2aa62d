/**
 * The student's page (/app/): the list of one's conversations (open any, end any open one,
 * start one), the conversation on screen with the reply streaming in, a retry for a message
 * left unanswered, the quizzes to answer and their results, files to share, one's tasks and
 * their status, one's card (the parts a teacher opened to the student are edited there), "what
 * do you know about me?", what the tutor remembers, and the crisis resources when the server
 * sends them. Every error is worded for a student (student_errors). A student signs in with a
 * password or with their sign-in card's code, typed or in the link of the card's QR code.
 */
import { run, setErrorText, showError } from "./common";
import { redrawAsk, resetAsk } from "./student_ask";
import { loadCard, redrawCard, resetCard } from "./student_card";
import { drawChat } from "./student_chat";
import { drawConversations, resetConversations, resumeConversation } from "./student_conversations";
import { studentErrorText } from "./student_errors";
import { redrawFiles } from "./student_files";
import { loadMemories, redrawMemories, resetMemories } from "./student_memories";
import { loadQuizzes, redrawQuizzes, resetQuizzes } from "./student_quizzes";
import { redrawSafety, resetSafety } from "./student_safety";
import { state } from "./student_state";
import { loadTasks, redrawTasks, resetTasks } from "./student_tasks";

setErrorText((error) => studentErrorText(error));

void run({
  roles: ["student"],
  signInWithCode: true,
  async start(me) {
    state.me = me;
    // Each part loads on its own: one failing leaves the others shown, and says why.
    const loads = await Promise.allSettled([
      resumeConversation(),
      loadMemories(),
      loadQuizzes(),
      loadTasks(),
      loadCard(),
    ]);
    const failed = loads.find((load) => load.status === "rejected");
    if (failed) showError(failed.reason);
  },
  redraw() {
    drawConversations();
    drawChat();
    redrawFiles();
    redrawQuizzes();
    redrawTasks();
    redrawCard();
    redrawAsk();
    redrawMemories();
    redrawSafety();
  },
  reset() {
    state.me = null;
    resetConversations();
    resetQuizzes();
    resetTasks();
    resetCard();
    resetAsk();
    resetMemories();
    resetSafety();
  },
});
