/**
 * Collapses bursts of requests (settings edits, interpreter switches, restart commands)
 * into one action that runs once things have been quiet for `delayMs`.
 */

export class Debouncer<Reason> {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private reasons: Reason[] = [];

  constructor(
    private readonly delayMs: number,
    private readonly action: (reasons: Reason[]) => void,
  ) {}

  /** Schedules the action; every earlier pending request is merged into this one. */
  request(reason: Reason): void {
    this.reasons.push(reason);
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const reasons = this.reasons;
      this.reasons = [];
      this.action(reasons);
    }, this.delayMs);
  }

  get pending(): boolean {
    return this.timer !== undefined;
  }

  dispose(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.reasons = [];
  }
}
