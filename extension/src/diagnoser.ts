/**
 * Asks the server for diagnoses (text, paths, an open document's last result) and
 * presents them: the report view, and the failure notification with its actions
 * ("Show diagnosis", "Apply fix", "Copy verification command").
 */
import * as vscode from "vscode";
import {
  failureHeadline,
  readDiagnosisResult,
  readDocumentReport,
  type DiagnosisResult,
} from "./diagnosis";
import { describeError, type Logger } from "./logger";
import type { ReportPanel } from "./reportPanel";
import type { ServerController } from "./server";
import type { TextSource, TextSources } from "./textSources";

const SHOW_DIAGNOSIS = "Show diagnosis";
const APPLY_FIX = "Apply fix";
const COPY_VERIFICATION = "Copy verification command";

interface ApplyFixResult {
  applied: boolean;
  file: string | null;
  message: string;
}

function readApplyFixResult(value: unknown): ApplyFixResult {
  const record = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  return {
    applied: record.applied === true,
    file: typeof record.file === "string" ? record.file : null,
    message: typeof record.message === "string" ? record.message : "The server gave no answer.",
  };
}

export class Diagnoser {
  constructor(
    private readonly server: ServerController,
    private readonly report: ReportPanel,
    private readonly sources: TextSources,
    private readonly logger: Logger,
  ) {}

  /** Diagnoses text under `name`; `source` says where its lines are, for revealing them. */
  async diagnoseText(
    text: string,
    name: string,
    source: TextSource | undefined,
    token?: vscode.CancellationToken,
  ): Promise<DiagnosisResult> {
    if (source !== undefined) {
      this.sources.register(name, source);
    }
    this.logger.info(`Diagnosing ${name} (${text.length} characters)`);
    const answer = await this.server.executeCommand(
      "faultline.diagnoseText",
      { text, name, includeHtml: true },
      token,
    );
    return readDiagnosisResult(answer);
  }

  async diagnosePaths(paths: string[], token?: vscode.CancellationToken): Promise<DiagnosisResult> {
    this.logger.info(`Diagnosing ${paths.join(", ")}`);
    const answer = await this.server.executeCommand("faultline.diagnosePath", { paths, includeHtml: true }, token);
    return readDiagnosisResult(answer);
  }

  /** The server's last result for an open document, if it has one. */
  async reportForDocument(uri: vscode.Uri): Promise<DiagnosisResult | undefined> {
    const answer = await this.server.executeCommand("faultline.reportForDocument", { uri: uri.toString() });
    return readDocumentReport(answer);
  }

  /** Opens the report view; says so when nothing was found. */
  present(result: DiagnosisResult, title: string): void {
    this.report.show(result, title);
    const verdict = result.diagnosis.verdict;
    if (verdict !== "failure") {
      void vscode.window.showInformationMessage(`Faultline (${title}): ${failureHeadline(result.diagnosis)}`);
    }
  }

  /** The failure notification; does nothing unless a root cause was found. */
  async notifyFailure(result: DiagnosisResult, title: string, fixTarget: vscode.Uri | undefined): Promise<void> {
    const diagnosis = result.diagnosis;
    const cause = diagnosis.rootCause;
    if (diagnosis.verdict !== "failure" || cause === undefined) {
      return;
    }
    const actions = [SHOW_DIAGNOSIS];
    if (diagnosis.fix !== undefined && cause.signature_id.length > 0) {
      actions.push(APPLY_FIX);
    }
    if (diagnosis.verificationCommand !== undefined) {
      actions.push(COPY_VERIFICATION);
    }
    const choice = await vscode.window.showErrorMessage(`Faultline: ${failureHeadline(diagnosis)}`, ...actions);
    if (choice === SHOW_DIAGNOSIS) {
      this.report.show(result, title);
      await this.sources.reveal(cause.file, cause.line).catch((error: unknown) => {
        this.logger.warn(`Could not reveal ${cause.file}:${cause.line}: ${describeError(error)}`);
      });
    } else if (choice === APPLY_FIX) {
      await this.applyFix(cause.signature_id, fixTarget);
    } else if (choice === COPY_VERIFICATION && diagnosis.verificationCommand !== undefined) {
      await vscode.commands.executeCommand("faultline.copyText", diagnosis.verificationCommand);
    }
  }

  /** Asks the server to apply a signature's fix to the workspace launch script. */
  async applyFix(signatureId: string, uri: vscode.Uri | undefined): Promise<void> {
    try {
      const argument = uri === undefined ? { signatureId } : { signatureId, uri: uri.toString() };
      const result = readApplyFixResult(await this.server.executeCommand("faultline.applyFix", argument));
      this.logger.info(`Apply fix ${signatureId}: ${result.message}`);
      if (!result.applied) {
        void vscode.window.showWarningMessage(`Faultline: ${result.message}`);
        return;
      }
      const file = result.file;
      const choice = await vscode.window.showInformationMessage(
        `Faultline: ${result.message}`,
        ...(file === null ? [] : ["Open file"]),
      );
      if (choice === "Open file" && file !== null) {
        await vscode.window.showTextDocument(vscode.Uri.file(file));
      }
    } catch (error) {
      this.logger.error(`Apply fix ${signatureId} failed`, error);
      void vscode.window.showErrorMessage(`Faultline: the fix could not be applied: ${describeError(error)}`);
    }
  }
}
