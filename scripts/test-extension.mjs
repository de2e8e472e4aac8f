// The one entry point for every check of the VS Code extension, for `.ci/run`:
// type check (tsc --strict), lint (eslint), unit tests (node:test), packaging (the
// linux-x64 VSIX with the bundled Python server) and the end-to-end test in a real
// VS Code (code-server + headless Chromium). Prints "N passed, N failed" last and exits
// non-zero when anything failed.
//
// Usage: node scripts/test-extension.mjs [--skip-e2e]
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const skipE2e = process.argv.includes("--skip-e2e");
let passed = 0;
let failed = 0;

function run(command, args) {
  console.log(`\n$ ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`;
  process.stdout.write(output);
  return { ok: result.status === 0, output };
}

function check(name, ok) {
  if (ok) {
    passed++;
  } else {
    failed++;
  }
  console.log(`${ok ? "PASS" : "FAIL"} ${name}`);
  return ok;
}

/** Adds a sub-runner's own "N passed, N failed" (or node:test's "# pass/# fail") to the totals. */
function countFrom(name, outcome, passPattern, failPattern) {
  const passes = passPattern.exec(outcome.output);
  const failures = failPattern.exec(outcome.output);
  if (!passes || !failures) {
    return check(`${name} (no result line)`, false);
  }
  passed += Number(passes[1]);
  failed += Number(failures[1]);
  console.log(`${name}: ${passes[1]} passed, ${failures[1]} failed`);
  return outcome.ok && Number(failures[1]) === 0;
}

function newestVsix() {
  const dist = path.join(root, "dist");
  const files = existsSync(dist) ? readdirSync(dist).filter((name) => name.endsWith("-linux-x64.vsix")) : [];
  files.sort((a, b) => statSync(path.join(dist, b)).mtimeMs - statSync(path.join(dist, a)).mtimeMs);
  return files.length ? path.join(dist, files[0]) : undefined;
}

/** The VSIX carries the client bundle and the Python server with its libraries, and no node_modules. */
function vsixContentsOk(vsix) {
  const listing = spawnSync("python3", ["-m", "zipfile", "-l", vsix], { encoding: "utf8" });
  if (listing.status !== 0) {
    console.log(listing.stderr);
    return false;
  }
  const text = listing.stdout;
  const required = [
    "extension/package.json",
    "extension/extension/dist/extension.js",
    "extension/extension/bundled/manifest.json",
    "extension/extension/bundled/libs/faultline/__main__.py",
    "extension/extension/bundled/libs/faultline/lsp/server.py",
    "extension/extension/bundled/libs/faultline/signatures/memory/cuda-oom.toml",
    "extension/extension/bundled/libs/pygls/",
    "extension/extension/bundled/libs/lsprotocol/",
    "extension/extension/bundled/libs/regex/_regex.cpython-310-x86_64-linux-gnu.so",
    "extension/extension/bundled/libs/regex/_regex.cpython-312-x86_64-linux-gnu.so",
    "extension/extension/bundled/libs/hyperscan/",
  ];
  const missing = required.filter((entry) => !text.includes(entry));
  const forbidden = ["node_modules/", "extension/src/", "__pycache__", ".pyc "].filter((entry) => text.includes(entry));
  for (const entry of missing) {
    console.log(`VSIX lacks ${entry}`);
  }
  for (const entry of forbidden) {
    console.log(`VSIX must not contain ${entry}`);
  }
  return missing.length === 0 && forbidden.length === 0;
}

if (!existsSync(path.join(root, "node_modules", ".bin", "tsc"))) {
  check("npm ci", run("npm", ["ci", "--no-audit", "--no-fund"]).ok);
}
check("tsc --strict (type check)", run("npx", ["tsc", "-p", ".", "--noEmit"]).ok);
check("eslint", run("npx", ["eslint", "extension", "scripts"]).ok);
const compiled = run("npx", ["tsc", "-p", "."]);
if (check("tsc (compile unit tests)", compiled.ok)) {
  countFrom("unit tests", run("node", ["--test", "extension/out/test/unit/"]), /^# pass (\d+)/m, /^# fail (\d+)/m);
}
const packaged = check("npm run package (linux-x64 VSIX)", run("npm", ["run", "package"]).ok);
const vsix = newestVsix();
if (packaged && check("VSIX contents", vsix !== undefined && vsixContentsOk(vsix)) && !skipE2e) {
  countFrom(
    "end-to-end (code-server)",
    run("node", ["extension/test/e2e/run.mjs", "--no-package", "--vsix", vsix]),
    /^(\d+) passed, \d+ failed$/m,
    /^\d+ passed, (\d+) failed$/m,
  );
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
