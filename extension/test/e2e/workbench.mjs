// What a user does in the VS Code workbench, for Playwright: run a command from the
// palette, open a file, go to a line, read the Problems panel, hover, read notifications,
// look into a webview. DOM hooks are those of VS Code 1.100 (code-server 4.100.x).
import { writeFileSync } from "node:fs";
import path from "node:path";

const SHORT = 15_000;

export class Workbench {
  /** @param {import("playwright-core").Page} page */
  constructor(page, artifactsDir) {
    this.page = page;
    this.artifactsDir = artifactsDir;
    this.shots = [];
  }

  async waitReady() {
    await this.page.waitForSelector(".monaco-workbench", { timeout: 90_000 });
    await this.page.waitForSelector(".statusbar", { timeout: 60_000 });
    // The extension host and the Explorer settle shortly after the shell appears.
    await this.page.waitForSelector(".explorer-folders-view, .explorer-viewlet", { timeout: 60_000 }).catch(() => {});
  }

  async screenshot(name) {
    const file = path.join(this.artifactsDir, `${name}.png`);
    await this.page.screenshot({ path: file });
    this.shots.push(file);
    return file;
  }

  async dismissNotifications() {
    await this.runCommand("Notifications: Clear All Notifications").catch(() => {});
  }

  /**
   * Opens the command palette with F1, which works whatever has focus; a key press that
   * lands while focus moves between a webview and the workbench is lost, so it retries.
   */
  async openQuickInput() {
    const input = this.page.locator(".quick-input-widget input");
    for (let attempt = 1; ; attempt++) {
      await this.page.keyboard.press("F1");
      try {
        await input.waitFor({ state: "visible", timeout: 4_000 });
        return input;
      } catch (error) {
        if (attempt === 3) {
          throw error;
        }
      }
    }
  }

  /**
   * Runs a command by its palette title ("Faultline: Diagnose Selection"). The palette
   * closes when focus moves (an editor revealed by a webview click takes it a moment
   * later), so a lost attempt is retried.
   */
  async runCommand(title) {
    const page = this.page;
    for (let attempt = 1; ; attempt++) {
      try {
        const input = await this.openQuickInput();
        await input.fill(`>${title}`, { timeout: 5_000 });
        const row = page.locator(".quick-input-widget .monaco-list-row", { hasText: title }).first();
        await row.waitFor({ state: "visible", timeout: 5_000 });
        // The first row is the best match; make sure it is the wanted command.
        const first = page.locator(".quick-input-widget .monaco-list-row").first();
        const label = (await first.getAttribute("aria-label")) ?? (await first.innerText());
        if (label.includes(title)) {
          await page.keyboard.press("Enter");
        } else {
          await row.click({ timeout: 5_000 });
        }
        break;
      } catch (error) {
        if (attempt === 3) {
          throw error;
        }
        await page.keyboard.press("Escape");
      }
    }
    await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: SHORT }).catch(() => {});
  }

  /** Hides the bottom panel if it is shown (the command only exists while it is). */
  async hidePanel() {
    if (await this.page.locator(".part.panel").first().isVisible().catch(() => false)) {
      await this.runCommand("View: Hide Panel");
    }
  }

  /** Opens a workspace file with Quick Open and waits for its editor tab. */
  async openFile(name) {
    const page = this.page;
    // Without the ">" prefix the palette searches files like Quick Open.
    const input = await this.openQuickInput();
    await input.fill(name);
    await page
      .locator(".quick-input-widget .monaco-list-row", { hasText: name })
      .first()
      .waitFor({ state: "visible", timeout: SHORT });
    await page.keyboard.press("Enter");
    await this.activeTab(name);
    await page.locator(".editor-instance .monaco-editor .view-lines").first().waitFor({ timeout: SHORT });
  }

  async activeTab(namePart, timeout = SHORT) {
    const tab = this.page.locator(".tabs-container .tab.active", { hasText: namePart });
    await tab.first().waitFor({ state: "visible", timeout });
    return tab.first();
  }

  /** Closes every editor tab whose label contains the text (with the tab's close button). */
  async closeTabs(labelPart) {
    const tabs = this.page.locator(".tabs-container .tab", { hasText: labelPart });
    for (let count = await tabs.count(); count > 0; count = await tabs.count()) {
      const tab = tabs.first();
      await tab.hover();
      await tab.locator(".tab-actions .action-label").first().click();
      await this.page.waitForTimeout(200);
    }
  }

  async goToLine(line) {
    const page = this.page;
    await this.focusEditor();
    await page.keyboard.press("Control+G");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: SHORT });
    await input.fill(`:${line}`);
    await page.keyboard.press("Enter");
    await page.locator(".quick-input-widget").waitFor({ state: "hidden", timeout: SHORT }).catch(() => {});
  }

  async focusEditor() {
    await this.runCommand("View: Focus Active Editor Group");
  }

  /**
   * "Ln 12, Col 3" of the status bar, as numbers; undefined while the status bar does not show it (right
   * after focus moves from a webview to an editor it may take a moment), so that callers poll.
   */
  async cursorPosition() {
    const text = await this.page
      .locator("#status\\.editor\\.selection")
      .innerText({ timeout: 2_000 })
      .catch(() => "");
    const match = /Ln (\d+), Col (\d+)/.exec(text);
    return match ? { line: Number(match[1]), column: Number(match[2]) } : undefined;
  }

  /** Line numbers (from the gutter) of the rendered lines carrying a squiggle of this kind. */
  async squiggleLines(kind = "error") {
    return this.page.evaluate((squiggleClass) => {
      const editor = document.querySelector(".editor-instance .monaco-editor");
      if (!editor) {
        return [];
      }
      const numbers = [...editor.querySelectorAll(".margin-view-overlays .line-numbers")].map((element) => {
        const box = element.getBoundingClientRect();
        return { top: box.top, bottom: box.bottom, line: Number(element.textContent.trim()) };
      });
      const lines = new Set();
      for (const squiggle of editor.querySelectorAll(`.view-overlays .${squiggleClass}`)) {
        const box = squiggle.getBoundingClientRect();
        const middle = (box.top + box.bottom) / 2;
        const row = numbers.find((number) => middle >= number.top && middle <= number.bottom);
        if (row) {
          lines.add(row.line);
        }
      }
      return [...lines].sort((a, b) => a - b);
    }, `squiggly-${kind}`);
  }

  /** Hovers the mouse over the first squiggle of a kind on a rendered line; returns the hover text. */
  async hoverSquiggleOnLine(line, kind = "error") {
    const page = this.page;
    const box = await page.evaluate(
      ({ squiggleClass, wanted }) => {
        const editor = document.querySelector(".editor-instance .monaco-editor");
        const number = [...editor.querySelectorAll(".margin-view-overlays .line-numbers")].find(
          (element) => Number(element.textContent.trim()) === wanted,
        );
        if (!number) {
          return undefined;
        }
        const lineBox = number.getBoundingClientRect();
        for (const squiggle of editor.querySelectorAll(`.view-overlays .${squiggleClass}`)) {
          const squiggleBox = squiggle.getBoundingClientRect();
          const middle = (squiggleBox.top + squiggleBox.bottom) / 2;
          if (middle >= lineBox.top && middle <= lineBox.bottom) {
            return { x: squiggleBox.left + Math.min(40, squiggleBox.width / 2), y: middle - 4 };
          }
        }
        return undefined;
      },
      { squiggleClass: `squiggly-${kind}`, wanted: line },
    );
    if (box === undefined) {
      throw new Error(`no ${kind} squiggle is rendered on line ${line}`);
    }
    await page.mouse.move(box.x - 30, box.y + 40);
    await page.mouse.move(box.x, box.y, { steps: 5 });
    const hover = page.locator(".monaco-hover:not(.hidden)").filter({ hasText: /\S/ }).first();
    await hover.waitFor({ state: "visible", timeout: SHORT });
    return hover;
  }

  /** Opens the Problems panel; returns its rows as {text, severity}. */
  async problems() {
    const page = this.page;
    await this.runCommand("View: Focus Problems");
    const rows = page.locator(".markers-panel .monaco-list-row");
    await rows.first().waitFor({ state: "visible", timeout: SHORT });
    return rows.evaluateAll((elements) =>
      elements.map((element) => {
        // Rows read "Error: <message> at line N and character C. ..." to screen readers.
        const aria = element.getAttribute("aria-label") ?? "";
        const icon = element.querySelector(".marker-icon");
        const iconClass = icon ? icon.className : "";
        const word = /^(Error|Warning|Info)\b/.exec(aria)?.[1] ?? /codicon-(error|warning|info)\b/.exec(iconClass)?.[1] ?? "";
        return { text: element.textContent ?? "", severity: word.toLowerCase(), aria };
      }),
    );
  }

  /** Error/warning/info counts of the status bar's problems item ("No Errors" counts as 0). */
  async problemCounts() {
    const label = (await this.page.locator("#status\\.problems").first().getAttribute("aria-label")) ?? "";
    const count = (kind) => {
      if (new RegExp(`No ${kind}s?\\b`, "i").test(label)) {
        return 0;
      }
      return Number(new RegExp(`${kind}s?:\\s*(\\d+)`, "i").exec(label)?.[1] ?? "0");
    };
    return { errors: count("Error"), warnings: count("Warning"), infos: count("Info"), label };
  }

  /** A visible notification toast whose text matches. */
  notification(textPattern) {
    return this.page.locator(".notifications-toasts .notification-toast", { hasText: textPattern }).first();
  }

  /** The content frame of the active webview (the Faultline report). */
  webview() {
    return this.page.frameLocator("iframe.webview.ready").last().frameLocator("iframe#active-frame");
  }

  writeText(name, text) {
    writeFileSync(path.join(this.artifactsDir, name), text);
  }
}
