/**
 * What both pages share: the API client (a session, with the CSRF token on every write; a token
 * after an LTI launch), small DOM helpers, error messages, and signing in and out with the
 * language switch.
 */
import {
  ApiError,
  createClient,
  type Language,
  type Memory,
  type Schemas,
  type User,
  unwrap,
} from "../../clients/typescript/src/index";
import { formatDate, language, setLanguage, t, translatePage, type Key, type LabelKey } from "./i18n";

// The client every module uses (a live binding): a session's, or a launch's token's.
export let api = createClient({ auth: { session: true } });
let launchToken: string | null = null;

/** Where an LTI launch led, once its code was exchanged: the course's class, the student's conversation. */
export const launched: { classroom: number | null; conversation: number | null } = {
  classroom: null,
  conversation: null,
};

/** The Authorization header of a launch's token, for the modules that call fetch themselves. */
export function tokenAuthorization(): string | null {
  return launchToken === null ? null : `Token ${launchToken}`;
}

type SignInProvider = Schemas["SignInProviderOutput"];

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node as T;
}

type Child = Node | string | null | undefined | false;

/** An element with attributes (`class`, `for`, `aria-*`...) and children; text is never parsed as HTML. */
export function h(tag: string, attrs: Record<string, string | boolean> = {}, ...children: Child[]): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === true) node.setAttribute(name, "");
    else if (value !== false) node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) node.append(child);
  }
  return node;
}

// A page's own wording for some errors (setErrorText); null keeps the default.
let pageErrorText: (error: unknown) => string | null = () => null;

/** Let a page word some errors itself (the student page: never an operator's message). */
export function setErrorText(text: (error: unknown) => string | null): void {
  pageErrorText = text;
}

/** The message to show for a failure: the page's own, else the server's (translated), else ours. */
export function errorMessage(error: unknown): string {
  const own = pageErrorText(error);
  if (own !== null) return own;
  if (error instanceof ApiError) return error.fromServer ? error.message : t("error_http", { status: error.status });
  if (error instanceof TypeError) return t("error_network");
  return error instanceof Error ? error.message : String(error);
}

/** Show an error in the page's alert region (cleared with `null`). */
export function showError(error: unknown): void {
  const region = byId("error");
  region.textContent = error === null ? "" : errorMessage(error);
  region.hidden = error === null;
}

/** Run a user's action with its button disabled, showing any error; true if it succeeded. */
export async function act(button: HTMLButtonElement | null, action: () => Promise<void>): Promise<boolean> {
  showError(null);
  if (button) button.disabled = true;
  try {
    await action();
    return true;
  } catch (error) {
    showError(error);
    return false;
  } finally {
    if (button) button.disabled = false;
  }
}

/** The label of a value of the schema's memory enums (`kind_note`, `source_mcp_tool`...). */
export function label(key: LabelKey): string {
  return t(key);
}

/** A memory's provenance, as a description list (the teacher's page shows it all). */
export function provenance(memory: Memory, me: User): HTMLElement {
  const author =
    memory.author === null || memory.author === undefined
      ? t("none")
      : memory.author === me.id
        ? t("author_you")
        : t("author_teacher", { id: memory.author });
  const rows: [Key, string][] = [
    ["kind", label(`kind_${memory.kind}`)],
    ["source", label(`source_${memory.source}`)],
    ["author", author],
    ["visibility", label(`visibility_${memory.visibility ?? "student"}`)],
    ["status", label(`status_${memory.status ?? "active"}`)],
    ["confidence", memory.confidence === undefined ? t("none") : `${Math.round(memory.confidence * 100)} %`],
    ["created", formatDate(memory.created_at)],
    ["updated", formatDate(memory.updated_at)],
  ];
  if (memory.source_conversation) {
    rows.push(["source_conversation", t("conversation_number", { id: memory.source_conversation })]);
  }
  if (memory.status === "archived") rows.push(["archived_reason", memory.archived_reason || t("none")]);
  if (memory.needs_review) rows.push(["needs_review", memory.review_reason || t("yes")]);
  const list = h("dl", { class: "provenance" });
  for (const [key, value] of rows) {
    list.append(h("div", { "data-field": key }, h("dt", {}, t(key)), h("dd", {}, value)));
  }
  return list;
}

export interface Page {
  /** Who the page is for (a school administrator uses the teachers' page). */
  roles: NonNullable<User["role"]>[];
  /** Sign in with a sign-in card's code too: typed (#code-form) or in the address (`#code=`). */
  signInWithCode?: boolean;
  /** Called once signed in (again after each sign-in). */
  start(me: User): Promise<void>;
  /** Called after the language changed: redraw what was drawn from data. */
  redraw(): void;
  /** Called on sign-out: forget what was shown. */
  reset(): void;
}

/**
 * Sign-in, sign-out and the language switch around a page: shows the sign-in form until a
 * session exists, then the page (or a pointer to the other page for the other role).
 */
export async function run(page: Page): Promise<void> {
  translatePage();
  const loginSection = byId("login");
  const account = byId("account");
  const app = byId("app");
  const wrongPage = byId("wrong-page");
  const languageSelect = byId<HTMLSelectElement>("language");
  const loading = byId("loading");
  let me: User | null = null;

  function showLanguage(lang: Language): void {
    setLanguage(lang);
    languageSelect.value = lang;
    translatePage();
    if (me) byId("whoami").textContent = t("signed_in_as", { name: displayName(me) });
    page.redraw();
  }

  async function signedIn(user: User): Promise<void> {
    me = user;
    loginSection.hidden = true;
    account.hidden = false;
    showLanguage(user.language ?? "en");
    if (!page.roles.includes(user.role ?? "student")) {
      wrongPage.hidden = false;
      return;
    }
    app.hidden = false;
    await page.start(user);
  }

  function signedOut(): void {
    me = null;
    // A launch's token was revoked by signing out: back to sessions.
    launchToken = null;
    launched.classroom = null;
    launched.conversation = null;
    api = createClient({ auth: { session: true } });
    account.hidden = true;
    app.hidden = true;
    wrongPage.hidden = true;
    loginSection.hidden = false;
    if (!providersAsked) void showProviders();
    page.reset();
    byId<HTMLInputElement>("username").focus();
  }

  byId<HTMLFormElement>("login-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const username = byId<HTMLInputElement>("username").value;
    const password = byId<HTMLInputElement>("password");
    void act(form.querySelector("button"), async () => {
      // A CSRF cookie first (the page set one, but it may have expired), then the session.
      unwrap(await api.GET("/api/v1/auth/csrf/"));
      const { user } = unwrap(await api.POST("/api/v1/auth/login/", { body: { username, password: password.value } }));
      password.value = "";
      await signedIn(user);
    });
  });

  /**
   * An LTI launch (the page in the LMS's frame, where third-party cookies are blocked): its
   * one-time code for the person's API token, sent as `Authorization: Token` from then on.
   */
  async function launchSignIn(code: string): Promise<void> {
    const answer = unwrap(await createClient().POST("/api/v1/lti/token/", { body: { code } }));
    launchToken = answer.token;
    api = createClient({ auth: { token: answer.token } });
    launched.classroom = answer.classroom ?? null;
    launched.conversation = answer.conversation ?? null;
    await signedIn(answer.user);
  }

  async function codeSignIn(code: string): Promise<void> {
    unwrap(await api.GET("/api/v1/auth/csrf/"));
    const { user } = unwrap(await api.POST("/api/v1/auth/code/login/", { body: { code } }));
    await signedIn(user);
  }

  if (page.signInWithCode) {
    byId<HTMLFormElement>("code-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const form = event.currentTarget as HTMLFormElement;
      const input = byId<HTMLInputElement>("sign-in-code");
      void act(form.querySelector("button"), async () => {
        await codeSignIn(input.value);
        input.value = "";
      });
    });
  }

  byId<HTMLButtonElement>("logout").addEventListener("click", (event) => {
    void act(event.currentTarget as HTMLButtonElement, async () => {
      unwrap(await api.POST("/api/v1/auth/logout/"));
      signedOut();
    });
  });

  languageSelect.addEventListener("change", () => {
    const lang = languageSelect.value === "fr" ? "fr" : "en";
    if (!me) {
      showLanguage(lang);
      drawProviders();
      return;
    }
    void act(null, async () => {
      const user = unwrap(await api.PATCH("/api/v1/me/", { body: { language: lang } }));
      me = user;
      showLanguage(user.language ?? lang);
    }).then((ok) => {
      if (!ok) languageSelect.value = language();
    });
  });

  try {
    const launchCode = takeFromAddress("lti");
    if (launchCode !== null) {
      await launchSignIn(launchCode);
      return;
    }
    const code = page.signInWithCode ? takeFromAddress("code") : null;
    if (code !== null) {
      await codeSignIn(code);
      return;
    }
    const result = await api.GET("/api/v1/me/");
    if (result.response.status === 401 || result.response.status === 403) signedOut();
    else await signedIn(unwrap(result));
  } catch (error) {
    signedOut();
    showError(error);
  } finally {
    loading.hidden = true;
  }
}

// The identity providers the sign-in form offers (GET /auth/providers/, asked once the form
// shows), drawn as links.
let providers: SignInProvider[] = [];
let providersAsked = false;

/**
 * A button per single sign-on provider under the sign-in form: those of the school the page's
 * address names (`?school=<id>`, and its district's), else every active one. Each goes to the
 * provider and comes back signed in to this page (`next`). Nothing is shown when none answers.
 */
async function showProviders(): Promise<void> {
  providersAsked = true;
  const school = new URLSearchParams(window.location.search).get("school");
  const query = school !== null && /^[1-9][0-9]{0,17}$/.test(school) ? { school: Number(school) } : {};
  try {
    providers = unwrap(await api.GET("/api/v1/auth/providers/", { params: { query } })).results;
  } catch {
    providers = [];
  }
  drawProviders();
}

function drawProviders(): void {
  const list = byId("sso-providers");
  const schools = new Set(providers.map((provider) => provider.school));
  const next = window.location.pathname + window.location.hash;
  list.replaceChildren(
    ...providers.map((provider) => {
      const name =
        schools.size > 1
          ? t("sso_sign_in_school", { name: provider.name, school: provider.school_name })
          : t("sso_sign_in", { name: provider.name });
      const href = `${provider.login_url}?${new URLSearchParams({ next }).toString()}`;
      return h("li", {}, h("a", { class: "button", href }, name));
    }),
  );
  byId("sso").hidden = providers.length === 0;
}

/**
 * The code of a sign-in card's link (`/app/#code=...`) or of an LTI launch (`#lti=...`): a
 * fragment never reaches the server. Removed at once from the address bar and the history, so
 * that it is neither left on screen nor kept by a bookmark or the back button.
 */
function takeFromAddress(name: "code" | "lti"): string | null {
  const code = new URLSearchParams(window.location.hash.slice(1)).get(name);
  if (code === null) return null;
  history.replaceState(history.state, "", window.location.pathname + window.location.search);
  return code;
}

export function displayName(user: Pick<User, "username" | "first_name" | "last_name">): string {
  const full = [user.first_name, user.last_name].filter(Boolean).join(" ");
  return full ? `${full} (${user.username})` : user.username;
}
