/**
 * Expands the folder paths users write in settings (`~`, `${workspaceFolder}`, relative
 * paths) into absolute paths the server can open.
 */
import * as path from "node:path";

export interface PathContext {
  homeDirectory: string;
  /** First workspace folder, when a folder is open. */
  workspaceFolder: string | undefined;
}

/** Absolute path, or undefined when it cannot be resolved (relative path, no folder). */
export function expandFolderPath(value: string, context: PathContext): string | undefined {
  let expanded = value.trim();
  if (expanded.length === 0) {
    return undefined;
  }
  if (expanded.includes("${workspaceFolder}")) {
    if (context.workspaceFolder === undefined) {
      return undefined;
    }
    expanded = expanded.split("${workspaceFolder}").join(context.workspaceFolder);
  }
  if (expanded === "~" || expanded.startsWith("~/")) {
    expanded = path.join(context.homeDirectory, expanded.slice(1));
  }
  if (path.isAbsolute(expanded)) {
    return path.normalize(expanded);
  }
  return context.workspaceFolder === undefined ? undefined : path.resolve(context.workspaceFolder, expanded);
}
