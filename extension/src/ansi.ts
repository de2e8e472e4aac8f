/**
 * Turns raw terminal output (as read from shell integration) into plain log text:
 * escape sequences removed, CRLF normalised, and carriage-return overwrites (progress
 * bars) resolved to what a person saw on the screen.
 */

// CSI (colours, cursor moves), OSC (titles, shell-integration marks) and the short
// two-byte escapes. OSC ends with BEL or ST (ESC \).
const ESCAPE_SEQUENCE =
  // eslint-disable-next-line no-control-regex
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x1b[()][0-9A-Za-z]/g;

/** Removes terminal escape sequences and resolves `\r` overwrites line by line. */
export function terminalOutputToText(raw: string): string {
  const withoutEscapes = raw.replace(ESCAPE_SEQUENCE, "");
  return withoutEscapes
    .replace(/\r+\n/g, "\n")
    .split("\n")
    .map(lastOverwrite)
    .join("\n");
}

/** Strips escape sequences from one rendered line (terminal link provider input). */
export function stripEscapes(line: string): string {
  return line.replace(ESCAPE_SEQUENCE, "");
}

// A progress bar redraws with `\r`: only the text after the last one stays visible.
function lastOverwrite(line: string): string {
  const lastReturn = line.lastIndexOf("\r");
  return lastReturn === -1 ? line : line.slice(lastReturn + 1);
}
