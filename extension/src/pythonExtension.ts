/**
 * The little of the Python extension's (ms-python.python) public API that Faultline uses:
 * the active interpreter of a folder and the event fired when the user switches it.
 * The extension is optional; without it these return nothing.
 */
import * as vscode from "vscode";

const PYTHON_EXTENSION_ID = "ms-python.python";

interface EnvironmentPath {
  id: string;
  path: string;
}

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
  onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  environments?: PythonEnvironmentsApi;
}

async function environmentsApi(): Promise<PythonEnvironmentsApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  const api = extension.isActive ? extension.exports : await extension.activate();
  return api.environments;
}

/** Whether the Python extension is installed at all (for the log). */
export function pythonExtensionInstalled(): boolean {
  return vscode.extensions.getExtension(PYTHON_EXTENSION_ID) !== undefined;
}

/** The Python extension's active interpreter path for this folder, if any. */
export async function activeInterpreterPath(resource: vscode.Uri | undefined): Promise<string | undefined> {
  const api = await environmentsApi();
  const environmentPath = api?.getActiveEnvironmentPath(resource);
  const interpreterPath = environmentPath?.path;
  return interpreterPath !== undefined && interpreterPath.length > 0 ? interpreterPath : undefined;
}

/** Calls `listener` whenever the user selects another interpreter in the Python extension. */
export async function onActiveInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const api = await environmentsApi();
  return api?.onDidChangeActiveEnvironmentPath(() => {
    listener();
  });
}
