/**
 * How the language server process is launched: `python -m faultline` over stdio, with
 * PYTHONPATH pointing at the bundled libraries when the extension is packaged, or at the
 * repository's `server/` folder when it runs from a source checkout.
 */
import * as path from "node:path";

export interface ServerLaunch {
  command: string;
  /** The interpreter's own arguments (from the interpreter setting). */
  interpreterArgs: string[];
  args: string[];
  env: Record<string, string>;
}

export interface LaunchInputs {
  /** The interpreter command: executable first, then its own arguments. */
  interpreter: readonly string[];
  /** Folder holding `faultline` and its dependencies (packaged extension). */
  bundledLibs: string | undefined;
  /** Folder holding the `faultline` package in a source checkout. */
  sourceServerDir: string | undefined;
  baseEnv: NodeJS.ProcessEnv;
}

export function buildServerLaunch(inputs: LaunchInputs): ServerLaunch {
  const [command, ...interpreterArgs] = inputs.interpreter;
  if (command === undefined || command.length === 0) {
    throw new Error("the interpreter command is empty");
  }
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(inputs.baseEnv)) {
    if (value !== undefined) {
      env[name] = value;
    }
  }
  const importRoots = [inputs.bundledLibs, inputs.sourceServerDir].filter(
    (folder): folder is string => folder !== undefined,
  );
  if (importRoots.length > 0) {
    // Our folders go first so the bundled server wins over anything on the user's path.
    const existing = env.PYTHONPATH !== undefined && env.PYTHONPATH.length > 0 ? [env.PYTHONPATH] : [];
    env.PYTHONPATH = [...importRoots, ...existing].join(path.delimiter);
  }
  if (inputs.bundledLibs !== undefined) {
    // Packages in the user's site folder must not shadow the bundled ones.
    env.PYTHONNOUSERSITE = "1";
  }
  env.PYTHONUNBUFFERED = "1";
  env.PYTHONIOENCODING = "utf-8";
  return { command, interpreterArgs, args: [...interpreterArgs, "-m", "faultline"], env };
}
