/**
 * Every string the pages show, in English and French. The language is the user's own
 * (`language` of GET /me/, changed with PATCH /me/); before sign-in, the one the server chose
 * for the page from the browser's Accept-Language (`<html lang>`). Messages from the server
 * (errors) come already translated into the user's language.
 */
import type { Language, Schemas } from "../../clients/typescript/src/index";

const en = {
  app_name: "Tutor",
  student_page: "My tutor",
  teacher_page: "My students' memories",
  noscript: "This page needs JavaScript.",
  loading: "Loading…",
  language: "Language",
  signed_in_as: "Signed in as {name}",
  logout: "Sign out",
  login_heading: "Sign in",
  username: "Username",
  password: "Password",
  login: "Sign in",
  wrong_page_student: "This page is for students. Teachers have their own page:",
  wrong_page_teacher: "This page is for teachers. Students have their own page:",
  go_student_page: "the student page",
  go_teacher_page: "the teacher page",
  error_network: "The server could not be reached. Check your connection and try again.",
  error_http: "Something went wrong (HTTP {status}). Try again in a moment.",
  error_stream: "The reply was cut off. Send your message again.",
  // Student: the conversation
  chat_heading: "Conversation",
  subject: "Subject (optional)",
  start_conversation: "Start a new conversation",
  no_conversation: "Start a conversation to talk with your tutor.",
  conversation_open: "Conversation started {date}.",
  conversation_open_subject: "Conversation about {subject}, started {date}.",
  conversation_ended: "This conversation has ended. Start a new one to talk again.",
  messages_label: "Messages",
  you: "You",
  tutor: "Tutor",
  your_message: "Your message",
  send: "Send",
  sending: "The tutor is answering…",
  end_conversation: "End the conversation",
  memory_saved: "The tutor noted: {title}",
  summary_pending: "Your tutor is writing a summary of this conversation…",
  summary_ready: "The summary of your conversation is in your memories.",
  summary_late: "The summary is not ready yet; it will appear in your memories later.",
  // Memories
  memories_heading: "What your tutor remembers",
  memories_intro: "Your tutor remembers these notes from one conversation to the next.",
  refresh: "Refresh",
  show_more: "Show more",
  no_memories: "Nothing yet.",
  memory_count: "{count} memories",
  // Teacher
  students_heading: "Choose a student",
  student: "Student",
  no_students: "You have no students yet.",
  show: "Show",
  status_active: "Active",
  status_archived: "Archived",
  status_all: "All",
  teacher_memories_heading: "Memories of {name}",
  add_note_heading: "Add a note",
  title: "Title",
  content: "Content",
  visibility: "Who can see it",
  add_note: "Add the note",
  note_added: "Note added.",
  correct: "Correct",
  save: "Save the correction",
  corrected: "Memory corrected.",
  archive: "Archive",
  archive_reason: "Reason for archiving",
  archive_confirm: "Archive this memory",
  archived: "Memory archived.",
  // Provenance
  kind: "Kind",
  source: "Source",
  author: "Author",
  status: "Status",
  confidence: "Confidence",
  created: "Created",
  updated: "Updated",
  source_conversation: "From conversation",
  archived_reason: "Archived because",
  needs_review: "Needs review",
  yes: "yes",
  author_you: "you",
  author_teacher: "teacher #{id}",
  none: "—",
  // Every memory kind and source has one (checked against the schema's enums below). A note's
  // author is told by its source: the tutor, a teacher's import, or an app over MCP.
  kind_summary: "Conversation summary",
  kind_note: "Note",
  kind_teacher_note: "Teacher note",
  kind_quiz_result: "Quiz result",
  kind_file: "Shared file",
  kind_fact: "Fact",
  kind_approach: "What worked",
  source_summary_task: "Summary of a conversation",
  source_save_memory_tool: "Saved by the tutor during a conversation",
  source_teacher: "Written by a teacher",
  source_quiz: "From a graded quiz",
  source_file_upload: "From a file shared in a conversation",
  source_extraction: "Drawn from other memories",
  source_merge: "Merged from similar memories",
  source_import: "Imported",
  source_mcp_tool: "Written by a connected app (MCP)",
  status_superseded: "Superseded",
  visibility_student: "The student and teachers",
  visibility_teacher_only: "Teachers only",
  conversation_number: "#{id}",
  // Teacher: the safety queue
  safety_heading: "Safety",
  safety_intro: "What screening found in your students' messages, files and tutor replies. Open flags come first, the most serious first.",
  no_flags: "No safety flags.",
  flag_student: "Student",
  flag_when: "When",
  flag_status: "Status",
  flag_category: "Category",
  flag_severity: "Severity",
  flag_outcome: "Outcome note",
  acknowledge: "Acknowledge",
  acknowledge_note: "Note (optional)",
  acknowledged: "Flag acknowledged.",
  resolve: "Resolve",
  resolve_note: "What was done",
  resolve_outcome: "Outcome",
  resolve_confirm: "Close this flag",
  resolved: "Flag closed.",
  severity_info: "Info",
  severity_concern: "Concern",
  severity_crisis: "Crisis",
  category_self_harm: "Self-harm",
  category_abuse: "Abuse or danger disclosed",
  category_violence: "Violence or threats",
  category_harassment: "Harassment and bullying",
  category_sexual: "Sexual content",
  category_sexual_minors: "Sexual content involving minors",
  category_hate: "Hate",
  category_jailbreak: "Leaving the tutor's role",
  category_distress: "Distress",
  flag_status_open: "Open",
  flag_status_acknowledged: "Acknowledged",
  flag_status_resolved: "Resolved",
  flag_status_false_positive: "False positive",
  source_message: "Student message",
  source_file: "Uploaded file",
  source_reply: "Tutor reply (withheld)",
  source_pattern: "Pattern across conversations",
} as const;

export type Key = keyof typeof en;

// A label for every value of the schema's memory and flag enums: a kind or a source the server adds
// fails the type check (`make client`) until it has its strings, instead of showing a raw key.
type Enum<Name extends keyof Schemas> = Schemas[Name] & string;
export type LabelKey =
  | `kind_${Enum<"MemoryKindEnum">}`
  | `source_${Enum<"MemorySourceEnum">}`
  | `status_${Enum<"MemoryStatusEnum">}`
  | `visibility_${Enum<"MemoryVisibilityEnum">}`
  | `severity_${Enum<"FlagSeverityEnum">}`
  | `category_${Enum<"FlagCategoryEnum">}`
  | `flag_status_${Enum<"FlagStatusEnum">}`
  | `source_${Enum<"FlagSourceEnum">}`;
const everyLabel: Record<LabelKey, string> = en;
void everyLabel;

const fr: Record<Key, string> = {
  app_name: "Tuteur",
  student_page: "Mon tuteur",
  teacher_page: "Les mémoires de mes élèves",
  noscript: "Cette page a besoin de JavaScript.",
  loading: "Chargement…",
  language: "Langue",
  signed_in_as: "Connecté·e : {name}",
  logout: "Se déconnecter",
  login_heading: "Connexion",
  username: "Nom d'utilisateur",
  password: "Mot de passe",
  login: "Se connecter",
  wrong_page_student: "Cette page est celle des élèves. Les enseignants ont la leur :",
  wrong_page_teacher: "Cette page est celle des enseignants. Les élèves ont la leur :",
  go_student_page: "la page des élèves",
  go_teacher_page: "la page des enseignants",
  error_network: "Le serveur est injoignable. Vérifiez votre connexion et réessayez.",
  error_http: "Une erreur est survenue (HTTP {status}). Réessayez dans un instant.",
  error_stream: "La réponse a été interrompue. Renvoyez votre message.",
  chat_heading: "Conversation",
  subject: "Sujet (facultatif)",
  start_conversation: "Commencer une nouvelle conversation",
  no_conversation: "Commencez une conversation pour parler avec votre tuteur.",
  conversation_open: "Conversation commencée le {date}.",
  conversation_open_subject: "Conversation sur {subject}, commencée le {date}.",
  conversation_ended: "Cette conversation est terminée. Commencez-en une nouvelle pour continuer.",
  messages_label: "Messages",
  you: "Vous",
  tutor: "Tuteur",
  your_message: "Votre message",
  send: "Envoyer",
  sending: "Le tuteur répond…",
  end_conversation: "Terminer la conversation",
  memory_saved: "Le tuteur a noté : {title}",
  summary_pending: "Votre tuteur rédige le résumé de cette conversation…",
  summary_ready: "Le résumé de votre conversation est dans vos mémoires.",
  summary_late: "Le résumé n'est pas encore prêt ; il apparaîtra plus tard dans vos mémoires.",
  memories_heading: "Ce dont votre tuteur se souvient",
  memories_intro: "Votre tuteur garde ces notes d'une conversation à l'autre.",
  refresh: "Actualiser",
  show_more: "Afficher plus",
  no_memories: "Rien pour l'instant.",
  memory_count: "{count} mémoires",
  students_heading: "Choisir un élève",
  student: "Élève",
  no_students: "Vous n'avez pas encore d'élèves.",
  show: "Afficher",
  status_active: "Actives",
  status_archived: "Archivées",
  status_all: "Toutes",
  teacher_memories_heading: "Mémoires de {name}",
  add_note_heading: "Ajouter une note",
  title: "Titre",
  content: "Contenu",
  visibility: "Qui peut la voir",
  add_note: "Ajouter la note",
  note_added: "Note ajoutée.",
  correct: "Corriger",
  save: "Enregistrer la correction",
  corrected: "Mémoire corrigée.",
  archive: "Archiver",
  archive_reason: "Raison de l'archivage",
  archive_confirm: "Archiver cette mémoire",
  archived: "Mémoire archivée.",
  kind: "Type",
  source: "Origine",
  author: "Auteur",
  status: "Statut",
  confidence: "Confiance",
  created: "Créée",
  updated: "Modifiée",
  source_conversation: "Issue de la conversation",
  archived_reason: "Archivée parce que",
  needs_review: "À revoir",
  yes: "oui",
  author_you: "vous",
  author_teacher: "enseignant n° {id}",
  none: "—",
  kind_summary: "Résumé de conversation",
  kind_note: "Note",
  kind_teacher_note: "Note d'enseignant",
  kind_quiz_result: "Résultat de quiz",
  kind_file: "Fichier partagé",
  kind_fact: "Fait",
  kind_approach: "Ce qui a marché",
  source_summary_task: "Résumé d'une conversation",
  source_save_memory_tool: "Enregistrée par le tuteur pendant une conversation",
  source_teacher: "Écrite par un enseignant",
  source_quiz: "Tirée d'un quiz corrigé",
  source_file_upload: "Tirée d'un fichier partagé dans une conversation",
  source_extraction: "Tirée d'autres mémoires",
  source_merge: "Fusion de mémoires semblables",
  source_import: "Importée",
  source_mcp_tool: "Écrite par une application connectée (MCP)",
  status_superseded: "Remplacée",
  visibility_student: "L'élève et ses enseignants",
  visibility_teacher_only: "Enseignants uniquement",
  conversation_number: "n° {id}",
  safety_heading: "Sécurité",
  safety_intro: "Ce que le filtrage a relevé dans les messages, fichiers et réponses du tuteur de vos élèves. Les alertes ouvertes d'abord, les plus graves en premier.",
  no_flags: "Aucune alerte.",
  flag_student: "Élève",
  flag_when: "Quand",
  flag_status: "Statut",
  flag_category: "Catégorie",
  flag_severity: "Gravité",
  flag_outcome: "Note de clôture",
  acknowledge: "Prendre en charge",
  acknowledge_note: "Note (facultative)",
  acknowledged: "Alerte prise en charge.",
  resolve: "Clore",
  resolve_note: "Ce qui a été fait",
  resolve_outcome: "Issue",
  resolve_confirm: "Clore cette alerte",
  resolved: "Alerte close.",
  severity_info: "Information",
  severity_concern: "Inquiétude",
  severity_crisis: "Crise",
  category_self_harm: "Automutilation",
  category_abuse: "Maltraitance ou danger confié",
  category_violence: "Violence ou menaces",
  category_harassment: "Harcèlement",
  category_sexual: "Contenu sexuel",
  category_sexual_minors: "Contenu sexuel impliquant des mineurs",
  category_hate: "Haine",
  category_jailbreak: "Détournement du tuteur",
  category_distress: "Détresse",
  flag_status_open: "Ouverte",
  flag_status_acknowledged: "Prise en charge",
  flag_status_resolved: "Résolue",
  flag_status_false_positive: "Fausse alerte",
  source_message: "Message de l'élève",
  source_file: "Fichier envoyé",
  source_reply: "Réponse du tuteur (retenue)",
  source_pattern: "Tendance sur plusieurs conversations",
};

const STRINGS: Record<Language, Record<Key, string>> = { en, fr };

let current: Language = document.documentElement.lang.startsWith("fr") ? "fr" : "en";

export function language(): Language {
  return current;
}

export function setLanguage(lang: Language): void {
  current = lang;
  document.documentElement.lang = lang;
}

/** The string `key` in the current language, with `{name}` replaced by `params.name`. */
export function t(key: Key, params: Record<string, string | number> = {}): string {
  return STRINGS[current][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in params ? String(params[name]) : whole,
  );
}

/** Whether `key` names a string (for `data-i18n` attributes). */
export function isKey(key: string): key is Key {
  return key in en;
}

/** Fill every element marked `data-i18n="key"` with its string. */
export function translatePage(root: ParentNode = document): void {
  for (const node of root.querySelectorAll<HTMLElement>("[data-i18n]")) {
    const key = node.dataset.i18n ?? "";
    if (isKey(key)) node.textContent = t(key);
  }
  document.title = t(document.body.dataset.page === "teacher" ? "teacher_page" : "student_page");
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return t("none");
  return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
}
