/**
 * Diagnoses failed terminal commands: automatically when one exits non-zero (unless
 * `faultline.terminal.autoDiagnose` is off), or on request. The recorded output is
 * cleaned of terminal escapes, diagnosed by the server, kept as a read-only document for
 * revealing lines, and its matched lines are remembered for the terminal link provider.
 */
import * as vscode from "vscode";
import { terminalOutputToText } from "./ansi";
import { matchedLineTexts, type DiagnosisResult } from "./diagnosis";
import type { Diagnoser } from "./diagnoser";
import type { KnownFailureLines } from "./failureLines";
import { describeError, type Logger } from "./logger";
import type { RecordedCommand, TerminalRecorder } from "./terminalRecorder";
import { readSettings } from "./settings";
import type { TextSources } from "./textSources";

const SHOWN_COMMAND_LENGTH = 60;

export class TerminalDiagnosis implements vscode.Disposable {
  private readonly results = new WeakMap<RecordedCommand, DiagnosisResult>();
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly recorder: TerminalRecorder,
    private readonly diagnoser: Diagnoser,
    private readonly sources: TextSources,
    private readonly knownLines: KnownFailureLines,
    private readonly logger: Logger,
  ) {
    this.subscription = recorder.onDidFail((command) => {
      void this.onCommandFailed(command);
    });
  }

  /** A short title for a recorded command. */
  static title(command: RecordedCommand): string {
    const line = command.commandLine.trim();
    return line.length > SHOWN_COMMAND_LENGTH ? `${line.slice(0, SHOWN_COMMAND_LENGTH - 1)}…` : line || "terminal command";
  }

  /** Diagnoses a recorded command once; later calls reuse the result. */
  async diagnose(command: RecordedCommand): Promise<DiagnosisResult | undefined> {
    const cached = this.results.get(command);
    if (cached !== undefined) {
      return cached;
    }
    const text = terminalOutputToText(command.output.text());
    if (text.trim().length === 0) {
      // VS Code does not deliver output that arrives together with the shell's "command
      // started" mark, so a command that fails within milliseconds can look silent.
      this.logger.info(`Terminal: no output was recorded for "${command.commandLine}"; nothing to diagnose`);
      return undefined;
    }
    const name = `terminal #${command.id}: ${TerminalDiagnosis.title(command)}`;
    this.sources.addOutputDocument(name, `terminal-${command.id}`, text);
    const result = await this.diagnoser.diagnoseText(text, name, undefined);
    this.results.set(command, result);
    this.knownLines.add(matchedLineTexts(result.diagnosis));
    return result;
  }

  /** Diagnoses and notifies; used by the automatic path and the link provider. */
  async diagnoseAndNotify(command: RecordedCommand): Promise<DiagnosisResult | undefined> {
    const result = await this.diagnose(command);
    if (result !== undefined) {
      await this.diagnoser.notifyFailure(result, TerminalDiagnosis.title(command), undefined);
    }
    return result;
  }

  dispose(): void {
    this.subscription.dispose();
  }

  private async onCommandFailed(command: RecordedCommand): Promise<void> {
    if (!readSettings().terminalAutoDiagnose) {
      this.logger.debug(`Terminal: "${command.commandLine}" failed; automatic diagnosis is off`);
      return;
    }
    try {
      const result = await this.diagnose(command);
      if (result === undefined) {
        return;
      }
      this.logger.info(`Terminal: "${command.commandLine}" (exit ${command.exitCode ?? "?"}): ${result.diagnosis.verdict}`);
      await this.diagnoser.notifyFailure(result, TerminalDiagnosis.title(command), undefined);
    } catch (error) {
      // The automatic path stays quiet on errors: the command failed, not Faultline's user.
      this.logger.error(`Terminal: diagnosing "${command.commandLine}" failed`, error);
    }
  }

  /** Shows the report of a recorded command, diagnosing it first when needed. */
  async showReport(command: RecordedCommand): Promise<void> {
    try {
      const result = await this.diagnose(command);
      if (result === undefined) {
        void vscode.window.showInformationMessage(
          `Faultline: "${TerminalDiagnosis.title(command)}" printed nothing that VS Code passed on to Faultline; use Diagnose Selection on its output.`,
        );
        return;
      }
      this.diagnoser.present(result, TerminalDiagnosis.title(command));
    } catch (error) {
      this.logger.error("Terminal: diagnosis failed", error);
      void vscode.window.showErrorMessage(`Faultline: diagnosis failed: ${describeError(error)}`, "Show logs").then(
        (choice) => {
          if (choice === "Show logs") {
            this.logger.show();
          }
        },
      );
    }
  }

  /** The recorder, for commands that pick a recorded command. */
  get recordings(): TerminalRecorder {
    return this.recorder;
  }
}
