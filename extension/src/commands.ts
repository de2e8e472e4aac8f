/**
 * The commands of the palette and the context menus: diagnose a selection, a file, a
 * folder of per-rank logs or the last failed terminal command; show the report; restart
 * the server; show the logs; and the client-side commands that the server's code actions
 * use (`faultline.runVerification`, `faultline.copyText`).
 */
import * as path from "node:path";
import * as vscode from "vscode";
import type { DiagnosisResult } from "./diagnosis";
import type { Diagnoser } from "./diagnoser";
import { describeError, type Logger } from "./logger";
import type { ReportPanel } from "./reportPanel";
import type { ServerController } from "./server";
import type { TerminalDiagnosis } from "./terminalDiagnosis";

export interface CommandContext {
  server: ServerController;
  diagnoser: Diagnoser;
  report: ReportPanel;
  terminalDiagnosis: TerminalDiagnosis;
  logger: Logger;
}

/** Runs a diagnosis with a progress notification; errors become one clear message. */
async function withDiagnosisProgress(
  context: CommandContext,
  title: string,
  run: (token: vscode.CancellationToken) => Promise<DiagnosisResult | undefined>,
): Promise<DiagnosisResult | undefined> {
  try {
    return await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Faultline: diagnosing ${title}…`, cancellable: true },
      (_progress, token) => run(token),
    );
  } catch (error) {
    context.logger.error(`Diagnosing ${title} failed`, error);
    const choice = await vscode.window.showErrorMessage(
      `Faultline: diagnosing ${title} failed: ${describeError(error)}`,
      "Show logs",
    );
    if (choice === "Show logs") {
      context.logger.show();
    }
    return undefined;
  }
}

async function diagnoseSelection(context: CommandContext): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    void vscode.window.showInformationMessage("Faultline: select the log text to diagnose in an editor first.");
    return;
  }
  const document = editor.document;
  const selection = editor.selection;
  // A selection that ends at the start of a line does not include that line.
  const end =
    selection.end.character === 0 && selection.end.line > selection.start.line
      ? document.lineAt(selection.end.line - 1).range.end
      : selection.end;
  const range = selection.isEmpty ? undefined : new vscode.Range(selection.start, end);
  const text = document.getText(range);
  if (text.trim().length === 0) {
    void vscode.window.showInformationMessage("Faultline: there is no text to diagnose.");
    return;
  }
  const base = path.basename(document.uri.path) || document.uri.toString();
  const name =
    range === undefined ? base : `${base} (selection, lines ${range.start.line + 1}-${range.end.line + 1})`;
  const lineOffset = range?.start.line ?? 0;
  const result = await withDiagnosisProgress(context, range === undefined ? base : "the selection", (token) =>
    context.diagnoser.diagnoseText(text, name, { uri: document.uri, lineOffset }, token),
  );
  if (result !== undefined) {
    context.diagnoser.present(result, name);
  }
}

async function diagnoseFile(context: CommandContext, target: unknown): Promise<void> {
  const uri = target instanceof vscode.Uri ? target : vscode.window.activeTextEditor?.document.uri;
  if (uri === undefined) {
    void vscode.window.showInformationMessage("Faultline: open a log file first, or pick one in the Explorer.");
    return;
  }
  const openDocument = vscode.workspace.textDocuments.find((document) => document.uri.toString() === uri.toString());
  const title = path.basename(uri.path) || uri.toString();
  const result = await withDiagnosisProgress(context, title, (token) => {
    // Unsaved or virtual documents are diagnosed as text; files on disk by path.
    if (uri.scheme === "file" && openDocument?.isDirty !== true) {
      return context.diagnoser.diagnosePaths([uri.fsPath], token);
    }
    const text = openDocument?.getText() ?? "";
    return context.diagnoser.diagnoseText(text, uri.scheme === "file" ? uri.fsPath : uri.toString(), {
      uri,
      lineOffset: 0,
    }, token);
  });
  if (result !== undefined) {
    context.diagnoser.present(result, title);
  }
}

async function diagnoseFolder(context: CommandContext, target: unknown): Promise<void> {
  let folder = target instanceof vscode.Uri ? target : undefined;
  if (folder === undefined) {
    const picked = await vscode.window.showOpenDialog({
      canSelectFiles: false,
      canSelectFolders: true,
      canSelectMany: false,
      openLabel: "Diagnose",
      title: "Faultline: folder of per-rank logs",
      defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
    });
    folder = picked?.[0];
  }
  if (folder === undefined) {
    return;
  }
  if (folder.scheme !== "file") {
    void vscode.window.showWarningMessage("Faultline: only folders on this machine's disk can be diagnosed.");
    return;
  }
  const title = path.basename(folder.fsPath);
  const folderPath = folder.fsPath;
  const result = await withDiagnosisProgress(context, `${title}/`, (token) =>
    context.diagnoser.diagnosePaths([folderPath], token),
  );
  if (result !== undefined) {
    context.diagnoser.present(result, `${title}/`);
  }
}

async function diagnoseLastFailedCommand(context: CommandContext, target: unknown): Promise<void> {
  const terminal = isTerminal(target) ? target : vscode.window.activeTerminal;
  const recorder = context.terminalDiagnosis.recordings;
  const command = (terminal === undefined ? undefined : recorder.lastFailed(terminal)) ?? recorder.lastFailed();
  if (command === undefined) {
    void vscode.window.showInformationMessage(
      "Faultline: no failed terminal command was recorded. Run the command in an integrated terminal with shell integration enabled (terminal.integrated.shellIntegration.enabled).",
    );
    return;
  }
  await context.terminalDiagnosis.showReport(command);
}

function isTerminal(value: unknown): value is vscode.Terminal {
  return vscode.window.terminals.some((terminal) => terminal === value);
}

async function showReport(context: CommandContext): Promise<void> {
  const document = vscode.window.activeTextEditor?.document;
  if (document?.languageId === "log") {
    const title = path.basename(document.uri.path) || document.uri.toString();
    try {
      const result = await context.diagnoser.reportForDocument(document.uri);
      if (result !== undefined) {
        context.report.show(result, title);
        return;
      }
    } catch (error) {
      context.logger.warn(`No stored report for ${title}: ${describeError(error)}`);
    }
    await diagnoseFile(context, document.uri);
    return;
  }
  if (!context.report.showLast()) {
    void vscode.window.showInformationMessage(
      "Faultline: open a log file or diagnose a selection, a file, a folder or a terminal command first.",
    );
  }
}

async function runVerification(context: CommandContext, command: unknown): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage(
      "Faultline: verification commands are not run in a restricted (untrusted) window. Trust the workspace first.",
    );
    return;
  }
  if (typeof command !== "string" || command.trim().length === 0) {
    void vscode.window.showWarningMessage("Faultline: no verification command was given.");
    return;
  }
  const choice = await vscode.window.showWarningMessage(
    "Run this verification command in a new terminal?",
    { modal: true, detail: command },
    "Run",
  );
  if (choice !== "Run") {
    return;
  }
  context.logger.info(`Running verification command: ${command}`);
  const terminal = vscode.window.createTerminal({
    name: "Faultline verification",
    cwd: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  terminal.show();
  terminal.sendText(command, true);
}

async function copyText(text: unknown): Promise<void> {
  if (typeof text !== "string") {
    return;
  }
  await vscode.env.clipboard.writeText(text);
  vscode.window.setStatusBarMessage("$(check) Faultline: copied to the clipboard", 4000);
}

export function registerCommands(context: CommandContext): vscode.Disposable[] {
  const register = (id: string, handler: (...args: unknown[]) => Promise<void> | void): vscode.Disposable =>
    vscode.commands.registerCommand(id, handler);
  return [
    register("faultline.diagnoseSelection", () => diagnoseSelection(context)),
    register("faultline.diagnoseFile", (target) => diagnoseFile(context, target)),
    register("faultline.diagnoseFolder", (target) => diagnoseFolder(context, target)),
    register("faultline.diagnoseLastFailedCommand", (target) => diagnoseLastFailedCommand(context, target)),
    register("faultline.showReport", () => showReport(context)),
    register("faultline.restartServer", () => {
      context.server.requestRestart("Restart Server command");
    }),
    register("faultline.showLogs", () => {
      context.logger.show();
    }),
    register("faultline.runVerification", (command) => runVerification(context, command)),
    register("faultline.copyText", (text) => copyText(text)),
  ];
}
