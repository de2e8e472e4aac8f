/**
 * Finds, in a rendered terminal line, the log lines a diagnosis matched (its events), so
 * the terminal link provider can make exactly those lines clickable. The client does not
 * know any failure pattern itself: the texts come from the server's diagnosis.
 */
import { stripEscapes } from "./ansi";

/** Event texts shorter than this are too generic to underline everywhere. */
const MINIMUM_TEXT_LENGTH = 12;

export interface LineMatch {
  startIndex: number;
  length: number;
  text: string;
}

export class KnownFailureLines {
  private readonly texts = new Set<string>();

  add(texts: Iterable<string>): void {
    for (const text of texts) {
      const normalized = stripEscapes(text).trim();
      if (normalized.length >= MINIMUM_TEXT_LENGTH) {
        this.texts.add(normalized);
      }
    }
  }

  get size(): number {
    return this.texts.size;
  }

  clear(): void {
    this.texts.clear();
  }

  /**
   * The known text found in this terminal line, as a range of the line. When the
   * terminal wrapped or clipped the line, a line that is a long enough part of a known
   * text also counts.
   */
  find(line: string): LineMatch | undefined {
    const rendered = stripEscapes(line);
    const trimmed = rendered.trim();
    if (trimmed.length < MINIMUM_TEXT_LENGTH) {
      return undefined;
    }
    for (const text of this.texts) {
      const index = rendered.indexOf(text);
      if (index !== -1) {
        return { startIndex: index, length: text.length, text };
      }
      if (text.includes(trimmed)) {
        return { startIndex: rendered.indexOf(trimmed), length: trimmed.length, text };
      }
    }
    return undefined;
  }
}
