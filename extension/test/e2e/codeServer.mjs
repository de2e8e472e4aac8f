// Starts an isolated code-server (VS Code 1.100 in the browser) for one test run: its own
// HOME, XDG folders, user data and extensions folders under the run folder, the Faultline
// VSIX installed into it, listening on 127.0.0.1 only, without auth, telemetry or update
// checks. stop() kills its whole process group.
import { execFileSync, spawn } from "node:child_process";
import { createWriteStream, mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url, timeoutMs, processExited) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (processExited()) {
      throw new Error("code-server exited during start-up (see code-server.log)");
    }
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`code-server did not answer ${url}/healthz within ${timeoutMs / 1000} s`);
}

/**
 * @param {{codeServerEntry: string, runDir: string, vsix: string, workspace: string,
 *          userSettings: object, logFile: string}} options
 */
export async function startCodeServer(options) {
  const { codeServerEntry, runDir, vsix, workspace, userSettings, logFile } = options;
  const dirs = Object.fromEntries(
    ["home", "config", "data", "cache", "user-data", "extensions"].map((name) => [name, path.join(runDir, name)]),
  );
  for (const dir of Object.values(dirs)) {
    mkdirSync(dir, { recursive: true });
  }
  const port = await freePort();
  const configFile = path.join(runDir, "code-server.yaml");
  writeFileSync(configFile, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  mkdirSync(path.join(dirs["user-data"], "User"), { recursive: true });
  writeFileSync(path.join(dirs["user-data"], "User", "settings.json"), JSON.stringify(userSettings, null, 2));

  const env = {
    ...process.env,
    HOME: dirs.home,
    XDG_CONFIG_HOME: dirs.config,
    XDG_DATA_HOME: dirs.data,
    XDG_CACHE_HOME: dirs.cache,
    SHELL: "/bin/bash",
  };
  const common = [
    "--config", configFile,
    "--user-data-dir", dirs["user-data"],
    "--extensions-dir", dirs.extensions,
  ];
  execFileSync(process.execPath, [codeServerEntry, ...common, "--install-extension", vsix], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });

  const log = createWriteStream(logFile);
  const child = spawn(
    process.execPath,
    [
      codeServerEntry,
      ...common,
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      workspace,
    ],
    { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(url, 60_000, () => exited);
  } catch (error) {
    stopGroup(child.pid);
    throw error;
  }
  return {
    url,
    userDataDir: dirs["user-data"],
    extensionsDir: dirs.extensions,
    stop: () => stopGroup(child.pid),
  };
}

function stopGroup(pid) {
  if (pid === undefined) {
    return;
  }
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    // already gone
  }
}
