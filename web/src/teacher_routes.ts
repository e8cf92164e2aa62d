/**
 * The teacher workspace's places, in the URL's fragment so that back and forward work and a
 * place can be linked to: `#overview` (the class overview, the default), `#student/<id>` or
 * `#student/<id>/<section>` (a student's view, scrolled to one of its sections), `#school` (a
 * school administrator's view). `#flag-<id>` (where alerts link) shows the overview, whose safety
 * queue brings that flag into view (./safety).
 */

export const SECTIONS = ["ask", "card", "review", "learning", "conversations", "note", "memories"] as const;
export type Section = (typeof SECTIONS)[number];

/** The element each section of the student's view is. */
export const SECTION_IDS: Record<Section, string> = {
  ask: "ask",
  card: "card",
  review: "review",
  learning: "learning",
  conversations: "conversations",
  note: "note",
  memories: "memories-section",
};

export type Route =
  | { view: "overview" }
  | { view: "school" }
  | { view: "student"; student: number; section: Section | null };

export function parseRoute(hash: string): Route {
  const student = /^#student\/(\d+)(?:\/([a-z]+))?$/.exec(hash);
  if (student) {
    const section = SECTIONS.find((s) => s === student[2]) ?? null;
    return { view: "student", student: Number(student[1]), section };
  }
  if (hash === "#school") return { view: "school" };
  return { view: "overview" };
}

export function routeHash(route: Route): string {
  if (route.view === "student") return `#student/${route.student}${route.section ? `/${route.section}` : ""}`;
  return `#${route.view}`;
}

let show: () => Promise<void> = async () => undefined;

/** What draws the place the URL names (the page's, set once). */
export function onRoute(apply: () => Promise<void>): void {
  show = apply;
}

/** Go to `route`: a new entry in the history (unless it is the current one), then shown. */
export async function go(route: Route): Promise<void> {
  const hash = routeHash(route);
  if (window.location.hash !== hash) window.history.pushState(null, "", hash);
  await show();
}

export function currentRoute(): Route {
  return parseRoute(window.location.hash);
}
