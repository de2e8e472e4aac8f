/**
 * The report view: one webview panel showing the server-rendered HTML diagnosis, behind a
 * strict Content Security Policy. Clicking an event in it reveals that log line.
 */
import * as vscode from "vscode";
import type { DiagnosisResult } from "./diagnosis";
import { describeError, type Logger } from "./logger";
import { makeNonce, prepareReportHtml } from "./reportHtml";
import type { TextSources } from "./textSources";

interface RevealMessage {
  type: "reveal";
  file: string;
  line: number;
}

function isRevealMessage(message: unknown): message is RevealMessage {
  if (typeof message !== "object" || message === null) {
    return false;
  }
  const candidate = message as Partial<RevealMessage>;
  return (
    candidate.type === "reveal" &&
    typeof candidate.file === "string" &&
    typeof candidate.line === "number" &&
    Number.isInteger(candidate.line) &&
    candidate.line > 0
  );
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private lastShown: { result: DiagnosisResult; title: string } | undefined;

  constructor(
    private readonly sources: TextSources,
    private readonly logger: Logger,
  ) {}

  get hasReport(): boolean {
    return this.lastShown !== undefined;
  }

  /** Shows (or refreshes) the report beside the editor. */
  show(result: DiagnosisResult, title: string): void {
    this.lastShown = { result, title };
    const panel = this.ensurePanel();
    panel.title = `Faultline: ${title}`;
    const html =
      result.html ??
      `<!DOCTYPE html><html><head></head><body><p>The server sent no report for ${escapeHtml(title)}.</p></body></html>`;
    panel.webview.html = prepareReportHtml(html, makeNonce(), panel.webview.cspSource);
    panel.reveal(vscode.ViewColumn.Beside, true);
  }

  /** Shows the last report again, if there is one. */
  showLast(): boolean {
    if (this.lastShown === undefined) {
      return false;
    }
    this.show(this.lastShown.result, this.lastShown.title);
    return true;
  }

  dispose(): void {
    this.panel?.dispose();
  }

  private ensurePanel(): vscode.WebviewPanel {
    if (this.panel !== undefined) {
      return this.panel;
    }
    const panel = vscode.window.createWebviewPanel(
      "faultline.report",
      "Faultline report",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, enableCommandUris: false, enableFindWidget: true, localResourceRoots: [] },
    );
    panel.webview.onDidReceiveMessage((message: unknown) => {
      if (!isRevealMessage(message)) {
        this.logger.debug(`Report: ignored message ${JSON.stringify(message)}`);
        return;
      }
      this.sources.reveal(message.file, message.line).then(
        (revealed) => {
          if (!revealed) {
            void vscode.window.showWarningMessage(`Faultline: cannot open ${message.file}.`);
          }
        },
        (error: unknown) => {
          this.logger.error(`Report: could not reveal ${message.file}:${message.line}`, error);
          void vscode.window.showWarningMessage(
            `Faultline: cannot open ${message.file}:${message.line}: ${describeError(error)}`,
          );
        },
      );
    });
    panel.onDidDispose(() => {
      this.panel = undefined;
    });
    this.panel = panel;
    return panel;
  }
}
