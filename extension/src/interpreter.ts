/**
 * Chooses the Python interpreter that runs the server, in this documented order, and
 * logs every step:
 *   1. the `faultline.interpreter` setting (when set it is the only candidate),
 *   2. the Python extension's active interpreter (ms-python.python), when installed,
 *   3. `python3` on PATH.
 * Each candidate is run once to learn its version (3.10 or newer is needed).
 */
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import type { Logger } from "./logger";
import { activeInterpreterPath, pythonExtensionInstalled } from "./pythonExtension";
import {
  formatVersion,
  parseProbeOutput,
  PROBE_SCRIPT,
  unsupportedReason,
  type PythonVersion,
} from "./pythonVersion";

const PROBE_TIMEOUT_MS = 15_000;

export interface Interpreter {
  command: string[];
  source: string;
  version: PythonVersion;
  executable: string;
}

export type InterpreterLookup =
  | { found: true; interpreter: Interpreter }
  | { found: false; problems: string[] };

interface Candidate {
  command: string[];
  source: string;
}

function probe(command: readonly string[]): Promise<{ stdout: string; error?: string }> {
  const [executable, ...args] = command;
  return new Promise((resolve) => {
    if (executable === undefined) {
      resolve({ stdout: "", error: "empty command" });
      return;
    }
    execFile(
      executable,
      [...args, "-c", PROBE_SCRIPT],
      { timeout: PROBE_TIMEOUT_MS, windowsHide: true },
      (error, stdout, stderr) => {
        if (error !== null) {
          const detail = stderr.trim().split("\n").pop() ?? "";
          resolve({ stdout, error: detail.length > 0 ? `${error.message} (${detail})` : error.message });
        } else {
          resolve({ stdout });
        }
      },
    );
  });
}

async function candidates(settingCommand: readonly string[], logger: Logger): Promise<Candidate[]> {
  if (settingCommand.length > 0) {
    logger.info(`Interpreter: using the faultline.interpreter setting: ${settingCommand.join(" ")}`);
    return [{ command: [...settingCommand], source: "the faultline.interpreter setting" }];
  }
  logger.info("Interpreter: faultline.interpreter is not set");
  const found: Candidate[] = [];
  if (!vscode.workspace.isTrusted) {
    // The Python extension's interpreter can be chosen by the workspace: not in a restricted window.
    logger.info("Interpreter: untrusted workspace, so the Python extension's interpreter is not asked");
  } else if (pythonExtensionInstalled()) {
    try {
      const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
      const activePath = await activeInterpreterPath(resource);
      if (activePath === undefined) {
        logger.info("Interpreter: the Python extension has no active interpreter");
      } else {
        logger.info(`Interpreter: the Python extension's active interpreter is ${activePath}`);
        found.push({ command: [activePath], source: "the Python extension's active interpreter" });
      }
    } catch (error) {
      logger.error("Interpreter: could not ask the Python extension", error);
    }
  } else {
    logger.info("Interpreter: the Python extension (ms-python.python) is not installed");
  }
  found.push({ command: ["python3"], source: "python3 on PATH" });
  return found;
}

/**
 * The first usable interpreter, or every reason why none was usable.
 * `bundledMinorVersions`: Python versions the packaged binary wheels support.
 */
export async function findInterpreter(
  settingCommand: readonly string[],
  bundledMinorVersions: readonly string[] | undefined,
  logger: Logger,
): Promise<InterpreterLookup> {
  const problems: string[] = [];
  for (const candidate of await candidates(settingCommand, logger)) {
    const shown = candidate.command.join(" ");
    const result = await probe(candidate.command);
    const parsed = result.error === undefined ? parseProbeOutput(result.stdout) : undefined;
    if (parsed === undefined) {
      const problem = `${shown} (${candidate.source}) could not be run: ${result.error ?? "unexpected output"}`;
      logger.warn(`Interpreter: ${problem}`);
      problems.push(problem);
      continue;
    }
    const reason = unsupportedReason(parsed.version, bundledMinorVersions);
    if (reason !== undefined) {
      const problem = `${parsed.executable} (${candidate.source}): ${reason}`;
      logger.warn(`Interpreter: ${problem}`);
      problems.push(problem);
      continue;
    }
    logger.info(
      `Interpreter: chose ${parsed.executable} (Python ${formatVersion(parsed.version)}) from ${candidate.source}`,
    );
    return {
      found: true,
      interpreter: {
        command: candidate.command,
        source: candidate.source,
        version: parsed.version,
        executable: parsed.executable,
      },
    };
  }
  return { found: false, problems };
}
