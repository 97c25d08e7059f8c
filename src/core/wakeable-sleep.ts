/**
 * A sleep that another party can cut short: a background loop waits for its next round with {@link sleep}, and
 * `stop()` or news of work calls {@link wake} so the loop goes on at once instead of at its timer.
 *
 * With `latch`, a wake that comes while the loop is not sleeping (busy with a round) is kept, and the next sleep
 * returns at once: news that arrives during a round is not lost until the timer. {@link reset} forgets it (the
 * loop is about to look for work anyway).
 */
export class WakeableSleep {
  private wakeUp: (() => void) | undefined;
  private woken = false;

  constructor(private readonly latch = false) {}

  /** Resolves after `ms` (negative counts as 0), or at the next {@link wake}; never rejects. */
  sleep(ms: number): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.wakeUp = done;
    });
  }

  /** Ends the current sleep now; with `latch`, makes the next sleep return at once when none is running. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else if (this.latch) this.woken = true;
  }

  /** Forgets a latched wake. */
  reset(): void {
    this.woken = false;
  }
}
