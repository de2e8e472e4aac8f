/**
 * Typed access to the `faultline.*` settings and the server settings object the
 * language server receives (initializationOptions and workspace/didChangeConfiguration
 * under the key "faultline").
 */
import * as os from "node:os";
import * as vscode from "vscode";
import { expandFolderPath } from "./folderPaths";
import { isLogLevel, type LogLevel } from "./logger";

export const SECTION = "faultline";

const SEVERITIES = ["error", "warning", "information", "hint"] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface FaultlineSettings {
  interpreter: string[];
  signatureFolders: string[];
  diagnoseOnOpen: boolean;
  terminalAutoDiagnose: boolean;
  terminalMaxRecordedBytes: number;
  severity: { rootCause: Severity; collateral: Severity; suspicious: Severity };
  debounceMs: number;
  maxDocumentBytes: number;
  logLevel: LogLevel;
}

/** The settings object of the contract between the client and the server. */
export interface ServerSettings {
  signatureFolders: string[];
  severity: { rootCause: Severity; collateral: Severity; suspicious: Severity };
  debounceMs: number;
  maxDocumentBytes: number;
  enabled: boolean;
  /** The server's own log level; it has no "trace" (that is the client's message trace). */
  logLevel: "error" | "warning" | "info" | "debug";
  /** False in a restricted (untrusted) window: the server then loads only its built-in signatures. */
  workspaceTrusted: boolean;
}

/** Settings whose change needs a new server process rather than a settings update. */
export const RESTART_SETTINGS = [`${SECTION}.interpreter`] as const;

function severity(value: unknown, fallback: Severity): Severity {
  return typeof value === "string" && (SEVERITIES as readonly string[]).includes(value)
    ? (value as Severity)
    : fallback;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((item): item is string => typeof item === "string" && item.trim().length > 0)
    : [];
}

function positiveNumber(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function firstWorkspaceFolder(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

export function readSettings(): FaultlineSettings {
  const config = vscode.workspace.getConfiguration(SECTION);
  const pathContext = { homeDirectory: os.homedir(), workspaceFolder: firstWorkspaceFolder() };
  const signatureFolders = stringList(config.get("signatureFolders"))
    .map((folder) => expandFolderPath(folder, pathContext))
    .filter((folder): folder is string => folder !== undefined);
  const logLevel = config.get("logLevel");
  // VS Code already ignores workspace values of the restricted settings in an untrusted window; user-level
  // signature folders are dropped too, since a restricted window loads the built-in signatures only.
  return {
    interpreter: stringList(config.get("interpreter")),
    signatureFolders: vscode.workspace.isTrusted ? signatureFolders : [],
    diagnoseOnOpen: config.get("diagnoseOnOpen") !== false,
    terminalAutoDiagnose: config.get("terminal.autoDiagnose") !== false,
    terminalMaxRecordedBytes: Math.max(10_000, positiveNumber(config.get("terminal.maxRecordedBytes"), 2_000_000)),
    severity: {
      rootCause: severity(config.get("severity.rootCause"), "error"),
      collateral: severity(config.get("severity.collateral"), "warning"),
      suspicious: severity(config.get("severity.suspicious"), "information"),
    },
    debounceMs: positiveNumber(config.get("debounceMs"), 300),
    maxDocumentBytes: positiveNumber(config.get("maxDocumentBytes"), 20_000_000),
    logLevel: isLogLevel(logLevel) ? logLevel : "info",
  };
}

export function serverSettings(settings: FaultlineSettings): ServerSettings {
  return {
    signatureFolders: settings.signatureFolders,
    severity: settings.severity,
    debounceMs: settings.debounceMs,
    maxDocumentBytes: settings.maxDocumentBytes,
    enabled: settings.diagnoseOnOpen,
    logLevel: settings.logLevel === "trace" ? "debug" : settings.logLevel,
    workspaceTrusted: vscode.workspace.isTrusted,
  };
}
