// Bundles the web app's pages (web/src/*.ts, which use this client) into web/static/web/*.js,
// committed so that the server needs no Node.js. `make client` runs it; CI checks the result
// matches the committed files.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

await build({
  absWorkingDir: root,
  entryPoints: ["web/src/student.ts", "web/src/teacher.ts", "web/src/guardian.ts"],
  outdir: "web/static/web",
  bundle: true,
  format: "iife",
  target: ["es2020"],
  charset: "utf8",
  legalComments: "none",
  banner: { js: "// Built from web/src by `make client` (clients/typescript/build.mjs): do not edit." },
  logLevel: "info",
});
