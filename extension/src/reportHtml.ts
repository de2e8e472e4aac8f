/**
 * Prepares the server's HTML report for a VS Code webview: a strict Content Security
 * Policy, no script of the document's own, and one nonce'd script that asks the
 * extension to reveal a log line when an `.fl-event` element is clicked.
 */
import { randomBytes } from "node:crypto";

/** A fresh unguessable nonce for one webview render. */
export function makeNonce(): string {
  return randomBytes(18).toString("base64");
}

/** The Content Security Policy of the report webview. */
export function reportCsp(nonce: string, cspSource: string): string {
  return [
    "default-src 'none'",
    // The report's styles are inline in the document; scripts are not.
    `style-src ${cspSource} 'unsafe-inline'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
}

/**
 * Posts `{type: "reveal", file, line}` for a click (or Enter/Space) on an `.fl-event`
 * element, and makes those elements reachable with the keyboard.
 */
export const REVEAL_SCRIPT = `
(function () {
  const vscode = acquireVsCodeApi();
  function eventOf(target) {
    return target instanceof Element ? target.closest(".fl-event") : null;
  }
  function reveal(element) {
    const file = element.getAttribute("data-file");
    const line = Number(element.getAttribute("data-line"));
    if (file && Number.isInteger(line) && line > 0) {
      vscode.postMessage({ type: "reveal", file: file, line: line });
    }
  }
  for (const element of document.querySelectorAll(".fl-event")) {
    if (!element.hasAttribute("tabindex")) { element.setAttribute("tabindex", "0"); }
    element.setAttribute("role", "link");
    element.style.cursor = "pointer";
  }
  document.addEventListener("click", function (event) {
    const element = eventOf(event.target);
    if (element) { event.preventDefault(); reveal(element); }
  });
  document.addEventListener("keydown", function (event) {
    const element = eventOf(event.target);
    if (element && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); reveal(element); }
  });
})();
`;

const SCRIPT_ELEMENT = /<script\b[\s\S]*?<\/script\s*>/gi;
const CSP_META = /<meta\b[^>]*http-equiv\s*=\s*["']?content-security-policy["']?[^>]*>/gi;

/** The webview document: the report with our CSP and our script injected. */
export function prepareReportHtml(reportHtml: string, nonce: string, cspSource: string): string {
  // The report is meant to carry no script; anything that looks like one is dropped so
  // that only the nonce'd script below can ever run.
  let html = reportHtml.replace(SCRIPT_ELEMENT, "").replace(CSP_META, "");
  const cspTag = `<meta http-equiv="Content-Security-Policy" content="${reportCsp(nonce, cspSource)}">`;
  const scriptTag = `<script nonce="${nonce}">${REVEAL_SCRIPT}</script>`;

  if (/<head\b[^>]*>/i.test(html)) {
    html = html.replace(/<head\b[^>]*>/i, (head) => `${head}\n${cspTag}`);
  } else if (/<html\b[^>]*>/i.test(html)) {
    html = html.replace(/<html\b[^>]*>/i, (root) => `${root}\n<head>${cspTag}</head>`);
  } else {
    html = `<!DOCTYPE html><html><head>${cspTag}</head><body>${html}</body></html>`;
  }
  return /<\/body\s*>/i.test(html)
    ? html.replace(/<\/body\s*>(?![\s\S]*<\/body\s*>)/i, `${scriptTag}\n</body>`)
    : `${html}\n${scriptTag}`;
}
