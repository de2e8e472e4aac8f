// Installs what the end-to-end test needs when it is missing, into <repo>/.e2e/tools:
// code-server (a real VS Code workbench served to a browser, with a real extension host),
// playwright-core (drives the browser) and Debian's chromium. Nothing is downloaded from
// outside npm and apt: ripgrep (a code-server dependency that would come from GitHub)
// is taken from Debian's package. See /work/shared/reference/vscode-e2e.md.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

export const CODE_SERVER_VERSION = "4.100.3";
const RIPGREP_CACHE = "vscode-ripgrep-cache-1.15.11";
const RIPGREP_ARCHIVE = "ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz";

function have(command) {
  return spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}

function run(command, args, options = {}) {
  console.log(`$ ${command} ${args.join(" ")}`);
  execFileSync(command, args, { stdio: "inherit", ...options });
}

function aptInstall(packages) {
  const missing = packages.filter(
    (name) => spawnSync("dpkg", ["-s", name], { stdio: "ignore" }).status !== 0,
  );
  if (missing.length === 0) {
    return;
  }
  if (!have("apt-get")) {
    throw new Error(`missing system packages ${missing.join(", ")} and no apt-get to install them`);
  }
  const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
  const aptGet = (...args) => (sudo.length ? run("sudo", ["apt-get", ...args]) : run("apt-get", args));
  aptGet("update");
  aptGet("install", "-y", ...missing);
}

export function chromiumPath() {
  for (const candidate of ["/usr/bin/chromium", "/usr/bin/chromium-browser"]) {
    if (existsSync(candidate)) {
      return candidate;
    }
  }
  throw new Error("chromium is not installed (apt-get install -y chromium)");
}

/** Returns { codeServer, playwrightCore } paths, installing them first if needed. */
export function ensureTools(repoRoot) {
  const toolsDir = path.join(repoRoot, ".e2e", "tools");
  const codeServerEntry = path.join(toolsDir, "node_modules", "code-server", "out", "node", "entry.js");
  const playwrightCore = path.join(toolsDir, "node_modules", "playwright-core", "index.js");
  const vscodeModules = path.join(toolsDir, "node_modules", "code-server", "lib", "vscode", "node_modules.asar");

  aptInstall(["chromium", "libkrb5-dev", "ripgrep"]);

  if (existsSync(codeServerEntry) && existsSync(playwrightCore) && existsSync(vscodeModules)) {
    return { codeServerEntry, playwrightCore, chromium: chromiumPath() };
  }
  console.log(`Installing code-server@${CODE_SERVER_VERSION} and playwright-core into ${toolsDir} (a few minutes)`);
  mkdirSync(toolsDir, { recursive: true });
  const tmp = path.join(repoRoot, ".e2e", "tmp");
  const ripgrepCache = path.join(tmp, RIPGREP_CACHE);
  mkdirSync(ripgrepCache, { recursive: true });
  // @vscode/ripgrep would download rg from GitHub; its cache is filled from Debian's rg.
  run("tar", ["czf", path.join(ripgrepCache, RIPGREP_ARCHIVE), "-C", "/usr/bin", "rg"]);
  if (!existsSync(path.join(toolsDir, "package.json"))) {
    writeFileSync(path.join(toolsDir, "package.json"), '{ "name": "faultline-e2e-tools", "private": true }\n');
  }
  run("npm", ["install", `code-server@${CODE_SERVER_VERSION}`, "playwright-core", "--no-audit", "--no-fund"], {
    cwd: toolsDir,
    env: {
      ...process.env,
      TMPDIR: tmp,
      // code-server's postinstall builds native modules and installs VS Code's own
      // dependencies; npm >= 11 skips dependency install scripts unless allowed.
      npm_config_dangerously_allow_all_scripts: "true",
      npm_config_unsafe_perm: "true",
      npm_config_yes: "true",
      // node-gyp finds Node's headers locally instead of downloading them.
      ...(existsSync("/usr/include/node/node.h") ? { npm_config_nodedir: "/usr" } : {}),
    },
  });
  if (!existsSync(codeServerEntry) || !existsSync(vscodeModules)) {
    throw new Error(`code-server did not install completely into ${toolsDir}`);
  }
  return { codeServerEntry, playwrightCore, chromium: chromiumPath() };
}
