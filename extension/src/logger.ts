/**
 * The one "Faultline" output channel: the extension's own log lines (filtered by the
 * `faultline.logLevel` setting) and, through the language client, the server's. It is
 * never revealed automatically; "Faultline: Show Logs" and the status item open it.
 */
import * as vscode from "vscode";

export const LOG_LEVELS = ["error", "warning", "info", "debug", "trace"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

export class Logger implements vscode.Disposable {
  readonly channel: vscode.OutputChannel;
  private level: LogLevel = "info";

  constructor(name: string) {
    this.channel = vscode.window.createOutputChannel(name);
  }

  setLevel(level: LogLevel): void {
    this.level = level;
  }

  getLevel(): LogLevel {
    return this.level;
  }

  error(message: string, error?: unknown): void {
    this.write("error", error === undefined ? message : `${message}: ${describeError(error)}`);
  }

  warn(message: string): void {
    this.write("warning", message);
  }

  info(message: string): void {
    this.write("info", message);
  }

  debug(message: string): void {
    this.write("debug", message);
  }

  trace(message: string): void {
    this.write("trace", message);
  }

  /** Opens the channel without taking focus from the editor. */
  show(): void {
    this.channel.show(true);
  }

  dispose(): void {
    this.channel.dispose();
  }

  private write(level: LogLevel, message: string): void {
    if (LOG_LEVELS.indexOf(level) > LOG_LEVELS.indexOf(this.level)) {
      return;
    }
    this.channel.appendLine(`${new Date().toISOString()} [client ${level}] ${message}`);
  }
}

export function describeError(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  if (typeof error === "string") {
    return error;
  }
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
