// Runs a Python helper script with the project's Python: $PYTHON, else the repository's
// .venv, else python3 on PATH. Used by the npm scripts so they work with or without a venv.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const venvPython = path.join(root, ".venv", "bin", "python");
const python = process.env.PYTHON ?? (existsSync(venvPython) ? venvPython : "python3");
const result = spawnSync(python, process.argv.slice(2), { stdio: "inherit", cwd: root });
if (result.error) {
  console.error(`Cannot run ${python}: ${result.error.message}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
