/**
 * The language-status item shown next to the language of log files: the server's state
 * (starting, running with which Python, stopped, failed); clicking it opens the logs.
 */
import * as vscode from "vscode";
import type { ServerStatus } from "./server";

export class StatusItem implements vscode.Disposable {
  private readonly item: vscode.LanguageStatusItem;

  constructor(selector: vscode.DocumentSelector) {
    this.item = vscode.languages.createLanguageStatusItem("faultline.server", selector);
    this.item.name = "Faultline";
    this.item.command = { title: "Show logs", command: "faultline.showLogs" };
    this.update({ state: "stopped", detail: "starts when a log is diagnosed" });
  }

  update(status: ServerStatus): void {
    const item = this.item;
    item.busy = status.state === "starting";
    item.detail = status.detail;
    switch (status.state) {
      case "running":
        item.text = "$(check) Faultline";
        item.severity = vscode.LanguageStatusSeverity.Information;
        break;
      case "starting":
        item.text = "Faultline: starting";
        item.severity = vscode.LanguageStatusSeverity.Information;
        break;
      case "failed":
        item.text = "$(error) Faultline: not running";
        item.severity = vscode.LanguageStatusSeverity.Error;
        break;
      case "stopped":
        item.text = "Faultline: stopped";
        item.severity = vscode.LanguageStatusSeverity.Information;
        break;
    }
    item.accessibilityInformation = { label: `Faultline server ${status.state}: ${status.detail}` };
  }

  dispose(): void {
    this.item.dispose();
  }
}
