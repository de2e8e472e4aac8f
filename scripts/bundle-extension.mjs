// Bundles the TypeScript client (extension/src) into one CommonJS file,
// extension/dist/extension.js, with vscode-languageclient inlined, so the VSIX needs no
// node_modules. Type checking is `tsc -p .`; this only bundles.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import path from "node:path";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const production = process.argv.includes("--production");

await build({
  absWorkingDir: root,
  entryPoints: ["extension/src/extension.ts"],
  outfile: "extension/dist/extension.js",
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
  sourcemap: production ? false : "linked",
  minify: production,
  logLevel: "info",
});
