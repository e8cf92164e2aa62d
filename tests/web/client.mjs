// Runs the typed client (clients/typescript/src/index.ts, bundled here by esbuild) in Node.js
// against a running server: sends chat turns with `turnStream` and prints what it yields. Run
// by tests/web/test_client.py, which starts the server and scripts the model.
//
//   node tests/web/client.mjs '<json config>'
//
// config: {baseUrl, token, conversationId, turns: [{content, client_message_id}]}. Prints
// "RESULT <json>": for each turn, the events the client yielded ({event, data}), or the error
// it threw.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

// esbuild comes from the client's package (clients/typescript): one package-lock.
const require = createRequire(new URL("../../clients/typescript/package.json", import.meta.url));
const { build } = require("esbuild");

const entry = fileURLToPath(new URL("../../clients/typescript/src/index.ts", import.meta.url));
const bundle = await build({
  entryPoints: [entry],
  bundle: true,
  format: "esm",
  platform: "node",
  target: ["node20"],
  write: false,
  logLevel: "error",
});
const source = bundle.outputFiles[0].text;
const client = await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`);

const config = JSON.parse(process.argv[2]);
const api = client.createClient({ baseUrl: config.baseUrl, auth: { token: config.token } });
const turns = [];
for (const body of config.turns) {
  const events = [];
  try {
    for await (const event of client.turnStream(api, config.conversationId, body)) events.push(event);
    turns.push({ events });
  } catch (error) {
    turns.push({ events, thrown: { name: error?.name, message: String(error?.message ?? error) } });
  }
}
console.log(`RESULT ${JSON.stringify({ turns })}`);
