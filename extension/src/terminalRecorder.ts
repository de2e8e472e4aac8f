/**
 * Records the output of every command run in an integrated terminal with shell
 * integration (stable API since VS Code 1.93): the last `maxRecordedBytes` of each
 * command's output, its command line and exit code. Nothing is written to disk.
 */
import * as vscode from "vscode";
import { BoundedText } from "./boundedText";
import type { Logger } from "./logger";

const KEPT_EXECUTIONS = 20;
/** How long to wait for the output stream to drain after the command ended. */
const DRAIN_TIMEOUT_MS = 3_000;

export interface RecordedCommand {
  readonly id: number;
  readonly terminal: vscode.Terminal;
  readonly commandLine: string;
  readonly cwd: vscode.Uri | undefined;
  readonly output: BoundedText;
  exitCode: number | undefined;
  finished: boolean;
}

interface ActiveRecording {
  command: RecordedCommand;
  drained: Promise<void>;
}

export class TerminalRecorder implements vscode.Disposable {
  private readonly active = new Map<vscode.TerminalShellExecution, ActiveRecording>();
  private readonly finished: RecordedCommand[] = [];
  private readonly failedEmitter = new vscode.EventEmitter<RecordedCommand>();
  private readonly disposables: vscode.Disposable[] = [];
  private nextId = 1;

  /** Fires when a recorded command ended with a non-zero exit code. */
  readonly onDidFail = this.failedEmitter.event;

  constructor(
    private readonly maxRecordedBytes: () => number,
    private readonly logger: Logger,
  ) {
    this.disposables.push(
      vscode.window.onDidStartTerminalShellExecution((event) => {
        this.start(event.terminal, event.execution);
      }),
      vscode.window.onDidEndTerminalShellExecution((event) => {
        void this.end(event.execution, event.exitCode);
      }),
      vscode.window.onDidCloseTerminal((terminal) => {
        this.forgetTerminal(terminal);
      }),
    );
  }

  /** The most recent command that failed, in any terminal (or only in `terminal`). */
  lastFailed(terminal?: vscode.Terminal): RecordedCommand | undefined {
    for (let index = this.finished.length - 1; index >= 0; index--) {
      const command = this.finished[index];
      if (
        command !== undefined &&
        command.exitCode !== undefined &&
        command.exitCode !== 0 &&
        (terminal === undefined || command.terminal === terminal)
      ) {
        return command;
      }
    }
    return undefined;
  }

  /** Finished commands of a terminal, newest first. */
  commandsOf(terminal: vscode.Terminal): RecordedCommand[] {
    return this.finished.filter((command) => command.terminal === terminal).reverse();
  }

  dispose(): void {
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
    this.failedEmitter.dispose();
    this.active.clear();
  }

  private start(terminal: vscode.Terminal, execution: vscode.TerminalShellExecution): void {
    const command: RecordedCommand = {
      id: this.nextId++,
      terminal,
      commandLine: execution.commandLine.value,
      cwd: execution.cwd,
      output: new BoundedText(this.maxRecordedBytes()),
      exitCode: undefined,
      finished: false,
    };
    // read() must be called as the command starts, or early output is lost.
    const stream = execution.read();
    const drained = (async () => {
      for await (const data of stream) {
        command.output.append(data);
      }
    })().catch((error: unknown) => {
      this.logger.warn(`Terminal: reading the output of "${command.commandLine}" failed: ${String(error)}`);
    });
    this.active.set(execution, { command, drained });
    this.logger.trace(`Terminal: recording "${command.commandLine}" in ${terminal.name}`);
  }

  private async end(execution: vscode.TerminalShellExecution, exitCode: number | undefined): Promise<void> {
    const recording = this.active.get(execution);
    if (recording === undefined) {
      return;
    }
    this.active.delete(execution);
    await Promise.race([recording.drained, new Promise((resolve) => setTimeout(resolve, DRAIN_TIMEOUT_MS))]);
    const command = recording.command;
    command.exitCode = exitCode;
    command.finished = true;
    this.finished.push(command);
    if (this.finished.length > KEPT_EXECUTIONS) {
      this.finished.shift();
    }
    this.logger.debug(
      `Terminal: "${command.commandLine}" ended with exit code ${exitCode ?? "unknown"} (${command.output.byteLength} bytes kept${command.output.truncated ? ", older output dropped" : ""})`,
    );
    if (exitCode !== undefined && exitCode !== 0) {
      this.failedEmitter.fire(command);
    }
  }

  private forgetTerminal(terminal: vscode.Terminal): void {
    for (let index = this.finished.length - 1; index >= 0; index--) {
      if (this.finished[index]?.terminal === terminal) {
        this.finished.splice(index, 1);
      }
    }
  }
}
