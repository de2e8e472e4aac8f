/**
 * The language server's lifecycle: choose the interpreter, check that the server can be
 * imported, start `python -m faultline` over stdio with vscode-languageclient, restart it
 * on one debounced path (command, settings change, interpreter change), and report the
 * state. The server is started lazily, the first time a log file or a command needs it.
 */
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  CloseAction,
  DidChangeConfigurationNotification,
  ErrorAction,
  ExecuteCommandRequest,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  Trace,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import type { ServerBundle } from "./bundle";
import { Debouncer } from "./debounce";
import { findInterpreter, type Interpreter } from "./interpreter";
import { describeError, type Logger } from "./logger";
import { formatVersion } from "./pythonVersion";
import { buildServerLaunch, type ServerLaunch } from "./serverLaunch";
import { readSettings, SECTION, serverSettings } from "./settings";

export type ServerState = "stopped" | "starting" | "running" | "failed";

export interface ServerStatus {
  state: ServerState;
  detail: string;
}

/** Documents the server diagnoses as they are opened and edited. */
export const LOG_DOCUMENTS: { scheme: string; language: string }[] = [
  { scheme: "file", language: "log" },
  { scheme: "untitled", language: "log" },
];

/** Commands this extension implements for the server's code actions (see commands.ts). */
const CLIENT_COMMANDS = ["faultline.runVerification", "faultline.copyText"];
const RESTART_DEBOUNCE_MS = 400;
const PREFLIGHT_TIMEOUT_MS = 60_000;
const CRASH_WINDOW_MS = 3 * 60_000;
const MAX_CRASH_RESTARTS = 3;
const REPEATED_ERROR_QUIET_MS = 60_000;

/**
 * vscode-languageclient pops up its own error messages for start failures and crashes;
 * Faultline shows one clear message with a "Show logs" button instead, so the client's
 * messages only go to the output channel.
 */
class FaultlineLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown): void {
    super.error(message, data, false);
  }
}

export class ServerUnavailableError extends Error {}

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private status: ServerStatus = { state: "stopped", detail: "not started yet" };
  private lifecycle: Promise<void> = Promise.resolve();
  private crashTimes: number[] = [];
  private lastError: { message: string; at: number } | undefined;
  private readonly statusEmitter = new vscode.EventEmitter<ServerStatus>();
  private readonly restartDebouncer: Debouncer<string>;
  private readonly disposables: vscode.Disposable[] = [];

  readonly onDidChangeStatus = this.statusEmitter.event;

  constructor(
    private readonly logger: Logger,
    private readonly bundle: ServerBundle,
    private readonly extensionRoot: string,
  ) {
    this.restartDebouncer = new Debouncer(RESTART_DEBOUNCE_MS, (reasons) => {
      this.enqueue(() => this.restart(reasons));
    });
  }

  get currentStatus(): ServerStatus {
    return this.status;
  }

  /** The one restart path: every trigger lands here and is merged with its neighbours. */
  requestRestart(reason: string): void {
    this.logger.debug(`Server: restart requested (${reason})`);
    this.restartDebouncer.request(reason);
  }

  /** Starts the server unless it runs or is starting; resolves once it is running. */
  async ensureStarted(): Promise<LanguageClient> {
    if (this.client?.isRunning() !== true && !this.restartDebouncer.pending) {
      this.enqueue(async () => {
        if (this.client?.isRunning() !== true) {
          await this.start();
        }
      });
    }
    await this.lifecycle;
    const client = this.client;
    if (client?.isRunning() !== true) {
      throw new ServerUnavailableError(`the Faultline server is not running (${this.status.detail})`);
    }
    return client;
  }

  /** Runs a server-side command (`workspace/executeCommand`) with one argument object. */
  async executeCommand(command: string, argument: object, token?: vscode.CancellationToken): Promise<unknown> {
    const client = await this.ensureStarted();
    this.logger.debug(`Server command ${command}`);
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: [argument] }, token);
  }

  /** Sends changed settings to a running server (no restart needed). */
  async pushSettings(): Promise<void> {
    const client = this.client;
    const settings = readSettings();
    this.logger.setLevel(settings.logLevel);
    if (client?.isRunning() === true) {
      await client.setTrace(settings.logLevel === "trace" ? Trace.Verbose : Trace.Off);
      await client.sendNotification(DidChangeConfigurationNotification.type, {
        settings: { [SECTION]: serverSettings(settings) },
      });
      this.logger.info("Server: settings updated");
    }
  }

  async stop(): Promise<void> {
    this.restartDebouncer.dispose();
    this.enqueue(() => this.stopClient());
    await this.lifecycle;
  }

  dispose(): void {
    void this.stop();
    this.statusEmitter.dispose();
    for (const disposable of this.disposables) {
      disposable.dispose();
    }
  }

  // Start and stop never interleave: every lifecycle step waits for the previous one.
  private enqueue(step: () => Promise<void>): void {
    this.lifecycle = this.lifecycle.then(step).catch((error: unknown) => {
      this.logger.error("Server: lifecycle step failed", error);
    });
  }

  private setStatus(state: ServerState, detail: string): void {
    this.status = { state, detail };
    this.statusEmitter.fire(this.status);
  }

  private async restart(reasons: string[]): Promise<void> {
    this.logger.info(`Server: restarting (${[...new Set(reasons)].join(", ")})`);
    this.crashTimes = [];
    this.lastError = undefined;
    await this.stopClient();
    await this.start();
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client === undefined) {
      return;
    }
    this.logger.info("Server: stopping");
    try {
      await client.stop(5_000);
    } catch (error) {
      this.logger.warn(`Server: did not stop cleanly: ${describeError(error)}`);
    }
    await client.dispose().catch(() => undefined);
    this.setStatus("stopped", "stopped");
  }

  private async start(): Promise<void> {
    const settings = readSettings();
    this.logger.setLevel(settings.logLevel);
    this.setStatus("starting", "looking for Python");
    this.logger.info(`Server: starting; server code: ${this.bundle.description}`);

    const lookup = await findInterpreter(settings.interpreter, this.bundle.pythonVersions, this.logger);
    if (!lookup.found) {
      const tried = lookup.problems.length > 0 ? ` Tried: ${lookup.problems.join("; ")}.` : "";
      this.fail(
        `No usable Python interpreter (3.10 or newer) was found.${tried} Set "faultline.interpreter" or select an interpreter with the Python extension.`,
      );
      return;
    }
    const interpreter = lookup.interpreter;
    const launch = buildServerLaunch({
      interpreter: interpreter.command,
      bundledLibs: this.bundle.libs,
      sourceServerDir: this.bundle.sourceServerDir,
      baseEnv: process.env,
    });
    this.logger.info(`Server: command: ${[launch.command, ...launch.args].join(" ")}`);
    this.logger.info(`Server: PYTHONPATH=${launch.env.PYTHONPATH ?? "(unset)"}`);

    const importProblem = await this.preflight(launch);
    if (importProblem !== undefined) {
      this.fail(`The server cannot be imported with ${interpreter.executable}: ${importProblem}`);
      return;
    }

    const client = this.createClient(launch, settings.logLevel === "trace");
    this.client = client;
    client.onDidChangeState((event) => {
      const name = State[event.newState];
      this.logger.debug(`Server: client state ${name}`);
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        this.setStatus("running", describeInterpreter(interpreter));
      } else if (event.newState === State.Starting) {
        this.setStatus("starting", "starting the server");
      } else if (this.status.state !== "failed") {
        this.setStatus("stopped", "stopped");
      }
    });
    this.setStatus("starting", "starting the server");
    try {
      await client.start();
      await client.setTrace(settings.logLevel === "trace" ? Trace.Verbose : Trace.Off);
      this.setStatus("running", describeInterpreter(interpreter));
      this.logger.info(`Server: running (${describeInterpreter(interpreter)})`);
    } catch (error) {
      this.client = undefined;
      await client.dispose().catch(() => undefined);
      this.fail(`The server exited during start-up: ${describeError(error)}`);
    }
  }

  /** Imports the server package once, so a broken setup gives a clear reason. */
  private preflight(launch: ServerLaunch): Promise<string | undefined> {
    const args = [...launch.interpreterArgs, "-c", "import faultline.lsp.server"];
    return new Promise((resolve) => {
      execFile(
        launch.command,
        args,
        { env: launch.env, timeout: PREFLIGHT_TIMEOUT_MS, cwd: this.extensionRoot, windowsHide: true },
        (error, _stdout, stderr) => {
          if (error === null) {
            resolve(undefined);
            return;
          }
          this.logger.error(`Server: import check failed:\n${stderr.trim()}`);
          const lastLine = stderr.trim().split("\n").pop();
          resolve(lastLine !== undefined && lastLine.length > 0 ? lastLine : error.message);
        },
      );
    });
  }

  private createClient(launch: ServerLaunch, traceMessages: boolean): LanguageClient {
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { env: launch.env, cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? this.extensionRoot },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: LOG_DOCUMENTS,
      outputChannel: this.logger.channel,
      traceOutputChannel: this.logger.channel,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      // The client-side commands the server's code actions may use.
      initializationOptions: { ...serverSettings(readSettings()), clientCommands: CLIENT_COMMANDS },
      initializationFailedHandler: (error: unknown) => {
        this.logger.error("Server: initialization failed", error);
        return false;
      },
      errorHandler: {
        error: (error, _message, count): ErrorHandlerResult => {
          this.logger.error("Server: connection error", error);
          return { action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
        },
        closed: (): CloseHandlerResult => this.connectionClosed(),
      },
      middleware: {
        workspace: {
          // The server asks for the "faultline" section: answer with the resolved server
          // settings (expanded folders), not the raw settings tree.
          configuration: async (params, token, next) => {
            const answer = await next(params, token);
            if (!Array.isArray(answer)) {
              return answer;
            }
            const settings = serverSettings(readSettings());
            return params.items.map((item, index): unknown =>
              item.section === SECTION ? settings : (answer[index] as unknown),
            );
          },
        },
      },
    };
    const client = new FaultlineLanguageClient("faultline", "Faultline", serverOptions, clientOptions);
    if (traceMessages) {
      this.logger.trace("Server: tracing every LSP message");
    }
    return client;
  }

  private connectionClosed(): CloseHandlerResult {
    if (this.status.state !== "running") {
      // Closed during start-up or stop: start() reports it.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashTimes = this.crashTimes.filter((time) => now - time < CRASH_WINDOW_MS);
    this.crashTimes.push(now);
    if (this.crashTimes.length <= MAX_CRASH_RESTARTS) {
      this.logger.warn(`Server: the process exited unexpectedly; restarting (${this.crashTimes.length}/${MAX_CRASH_RESTARTS})`);
      return { action: CloseAction.Restart, handled: true };
    }
    this.fail(`The server exited ${this.crashTimes.length} times in a few minutes and was not restarted.`);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private fail(message: string): void {
    this.setStatus("failed", message);
    this.logger.error(`Server: ${message}`);
    const now = Date.now();
    if (this.lastError?.message === message && now - this.lastError.at < REPEATED_ERROR_QUIET_MS) {
      return;
    }
    this.lastError = { message, at: now };
    void vscode.window
      .showErrorMessage(`Faultline could not start its language server. ${message}`, "Show logs")
      .then((choice) => {
        if (choice === "Show logs") {
          this.logger.show();
        }
      });
  }
}

function describeInterpreter(interpreter: Interpreter): string {
  return `Python ${formatVersion(interpreter.version)} (${interpreter.executable}) from ${interpreter.source}`;
}
