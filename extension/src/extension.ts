/**
 * Entry point of the Faultline VS Code extension: wires the output channel, the server
 * controller, the status item, the commands, the report view and the terminal watcher.
 * The client is thin: every diagnosis comes from the Python language server.
 */
import * as vscode from "vscode";
import { locateServerBundle } from "./bundle";
import { registerCommands } from "./commands";
import { Diagnoser } from "./diagnoser";
import { KnownFailureLines } from "./failureLines";
import { describeError, Logger } from "./logger";
import { onActiveInterpreterChange } from "./pythonExtension";
import { ReportPanel } from "./reportPanel";
import { LOG_DOCUMENTS, ServerController } from "./server";
import { readSettings, RESTART_SETTINGS, SECTION } from "./settings";
import { StatusItem } from "./status";
import { TerminalDiagnosis } from "./terminalDiagnosis";
import { FailureLinkProvider } from "./terminalLinks";
import { TerminalRecorder } from "./terminalRecorder";
import { OUTPUT_SCHEME, TextSources } from "./textSources";

let serverController: ServerController | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const logger = new Logger("Faultline");
  logger.setLevel(readSettings().logLevel);
  const version = (context.extension.packageJSON as { version?: string }).version ?? "?";
  logger.info(`Faultline ${version} activated in VS Code ${vscode.version}`);

  const bundle = locateServerBundle(context.extensionPath);
  const server = new ServerController(logger, bundle, context.extensionPath);
  serverController = server;
  const status = new StatusItem(LOG_DOCUMENTS.map((filter) => ({ language: filter.language })));
  const sources = new TextSources();
  const report = new ReportPanel(sources, logger);
  const diagnoser = new Diagnoser(server, report, sources, logger);
  const knownLines = new KnownFailureLines();
  const recorder = new TerminalRecorder(() => readSettings().terminalMaxRecordedBytes, logger);
  const terminalDiagnosis = new TerminalDiagnosis(recorder, diagnoser, sources, knownLines, logger);

  context.subscriptions.push(
    logger,
    server,
    status,
    report,
    recorder,
    terminalDiagnosis,
    server.onDidChangeStatus((serverStatus) => {
      status.update(serverStatus);
    }),
    vscode.workspace.registerTextDocumentContentProvider(OUTPUT_SCHEME, sources),
    vscode.window.registerTerminalLinkProvider(new FailureLinkProvider(knownLines, terminalDiagnosis)),
    ...registerCommands({ server, diagnoser, report, terminalDiagnosis, logger }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration(SECTION)) {
        return;
      }
      if (RESTART_SETTINGS.some((setting) => event.affectsConfiguration(setting))) {
        server.requestRestart("settings changed");
      } else {
        server.pushSettings().catch((error: unknown) => {
          logger.error("Could not send the changed settings to the server", error);
        });
      }
    }),
    vscode.workspace.onDidOpenTextDocument((document) => {
      startForLogDocument(server, logger, document);
    }),
    // Trusting the workspace lifts the restrictions (workspace signatures, interpreter): start afresh.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      server.requestRestart("workspace trusted");
    }),
  );

  // Follow the Python extension's interpreter once the server is first needed (so the
  // Python extension is not activated just because Faultline watches terminals); it only
  // matters while the setting does not choose an interpreter.
  let followingInterpreter = false;
  context.subscriptions.push(
    server.onDidChangeStatus((serverStatus) => {
      if (followingInterpreter || serverStatus.state === "stopped") {
        return;
      }
      followingInterpreter = true;
      onActiveInterpreterChange(() => {
        if (readSettings().interpreter.length === 0) {
          server.requestRestart("the Python extension's interpreter changed");
        }
      }).then(
        (subscription) => {
          if (subscription !== undefined) {
            context.subscriptions.push(subscription);
          }
        },
        (error: unknown) => {
          logger.warn(`Could not follow the Python extension's interpreter: ${describeError(error)}`);
        },
      );
    }),
  );

  for (const document of vscode.workspace.textDocuments) {
    startForLogDocument(server, logger, document);
  }
}

/** The server starts the first time a log document is open (not on every activation). */
function startForLogDocument(server: ServerController, logger: Logger, document: vscode.TextDocument): void {
  if (document.languageId !== "log" || (document.uri.scheme !== "file" && document.uri.scheme !== "untitled")) {
    return;
  }
  const state = server.currentStatus.state;
  if (state === "running" || state === "starting" || state === "failed") {
    return;
  }
  server.ensureStarted().catch((error: unknown) => {
    logger.debug(`Server not started for ${document.uri.toString()}: ${describeError(error)}`);
  });
}

export async function deactivate(): Promise<void> {
  await serverController?.stop();
  serverController = undefined;
}
