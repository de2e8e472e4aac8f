/**
 * Makes the failure lines that a diagnosis matched clickable in the terminal; a click
 * opens the diagnosis report of the command that printed the line.
 */
import * as vscode from "vscode";
import { terminalOutputToText } from "./ansi";
import type { KnownFailureLines } from "./failureLines";
import type { TerminalDiagnosis } from "./terminalDiagnosis";

class FailureLineLink extends vscode.TerminalLink {
  constructor(
    startIndex: number,
    length: number,
    readonly terminal: vscode.Terminal,
    readonly lineText: string,
  ) {
    super(startIndex, length, "Faultline: show the diagnosis of this failure");
  }
}

export class FailureLinkProvider implements vscode.TerminalLinkProvider<FailureLineLink> {
  constructor(
    private readonly knownLines: KnownFailureLines,
    private readonly terminalDiagnosis: TerminalDiagnosis,
  ) {}

  provideTerminalLinks(context: vscode.TerminalLinkContext): FailureLineLink[] {
    if (this.knownLines.size === 0) {
      return [];
    }
    const match = this.knownLines.find(context.line);
    return match === undefined ? [] : [new FailureLineLink(match.startIndex, match.length, context.terminal, match.text)];
  }

  async handleTerminalLink(link: FailureLineLink): Promise<void> {
    const recorder = this.terminalDiagnosis.recordings;
    const commands = recorder.commandsOf(link.terminal);
    const printedIt = commands.find((command) => terminalOutputToText(command.output.text()).includes(link.lineText));
    const command = printedIt ?? recorder.lastFailed(link.terminal) ?? commands[0];
    if (command === undefined) {
      void vscode.window.showInformationMessage("Faultline: the output of this command is no longer recorded.");
      return;
    }
    await this.terminalDiagnosis.showReport(command);
  }
}
