/**
 * Maps the file names that appear in a diagnosis back to documents: real files, the
 * editor a selection came from (with its line offset), and read-only virtual documents
 * holding a terminal command's recorded output. The report view and the notifications
 * use it to reveal a line.
 */
import * as path from "node:path";
import * as vscode from "vscode";

export const OUTPUT_SCHEME = "faultline-output";
const MAX_REMEMBERED = 50;

export interface TextSource {
  uri: vscode.Uri;
  /** Added to a diagnosis line number (1-based) to get the document's line. */
  lineOffset: number;
}

export class TextSources implements vscode.TextDocumentContentProvider {
  private readonly byName = new Map<string, TextSource>();
  private readonly outputs = new Map<string, string>();
  private nextOutputId = 1;

  /** Remembers where the text diagnosed under `name` came from. */
  register(name: string, source: TextSource): void {
    this.byName.delete(name);
    this.byName.set(name, source);
    forgetOldest(this.byName);
  }

  /** A read-only document with this text (terminal output), registered under `name`. */
  addOutputDocument(name: string, title: string, text: string): vscode.Uri {
    const safeTitle = title.replace(/[^\w.-]+/g, "_").slice(0, 60) || "output";
    const uri = vscode.Uri.from({ scheme: OUTPUT_SCHEME, path: `/${this.nextOutputId++}/${safeTitle}.log` });
    this.outputs.set(uri.toString(), text);
    forgetOldest(this.outputs);
    this.register(name, { uri, lineOffset: 0 });
    return uri;
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.outputs.get(uri.toString()) ?? "(this output is no longer kept)";
  }

  /** The document a diagnosis `file` refers to, if it can be found. */
  resolve(file: string): TextSource | undefined {
    const registered = this.byName.get(file);
    if (registered !== undefined) {
      return registered;
    }
    if (/^[a-z][\w+.-]+:\/\//i.test(file) || file.startsWith("untitled:")) {
      return { uri: vscode.Uri.parse(file), lineOffset: 0 };
    }
    if (path.isAbsolute(file)) {
      return { uri: vscode.Uri.file(file), lineOffset: 0 };
    }
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder === undefined ? undefined : { uri: vscode.Uri.joinPath(folder.uri, file), lineOffset: 0 };
  }

  /** Opens the document of `file` and selects its 1-based `line`. */
  async reveal(file: string, line: number): Promise<boolean> {
    const source = this.resolve(file);
    if (source === undefined) {
      return false;
    }
    const document = await vscode.workspace.openTextDocument(source.uri);
    const lineIndex = Math.min(Math.max(line - 1 + source.lineOffset, 0), Math.max(document.lineCount - 1, 0));
    const range = document.lineAt(lineIndex).range;
    await vscode.window.showTextDocument(document, {
      viewColumn: vscode.ViewColumn.One,
      selection: range,
      preserveFocus: false,
    });
    return true;
  }
}

function forgetOldest<Key, Value>(map: Map<Key, Value>): void {
  while (map.size > MAX_REMEMBERED) {
    const oldest = map.keys().next();
    if (oldest.done === true) {
      return;
    }
    map.delete(oldest.value);
  }
}
