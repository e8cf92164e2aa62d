// Writes src/events.ts from openapi.yaml: the `event` names of the turn's Server-Sent Events
// (the TurnEvent schema's discriminator), so that the client reads every event the server
// documents. `npm run generate` runs it after openapi-typescript; its output is committed.
import { readFileSync, writeFileSync } from "node:fs";
import yaml from "js-yaml";

const here = (path) => new URL(path, import.meta.url);
const schema = yaml.load(readFileSync(here("openapi.yaml"), "utf8"));
const turnEvent = schema?.components?.schemas?.TurnEvent;
const mapping = turnEvent?.discriminator?.propertyName === "event" ? turnEvent.discriminator.mapping : undefined;
const names = Object.keys(mapping ?? {});
if (names.length === 0 || names.length !== (turnEvent.oneOf ?? []).length) {
  throw new Error("openapi.yaml: TurnEvent is not a oneOf discriminated by `event` with a mapping for each event");
}

writeFileSync(
  here("src/events.ts"),
  `// Generated from openapi.yaml by \`npm run generate\` (events.mjs): do not edit.

/** The \`event\` names of the turn's Server-Sent Events: the schema's TurnEvent discriminator. */
export const TURN_EVENT_NAMES = [${names.map((name) => JSON.stringify(name)).join(", ")}] as const;
`,
);
console.log(`src/events.ts: ${names.join(", ")}`);
