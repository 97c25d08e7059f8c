import type { LogPosition } from '../../ports/event-store';
import type { FoldWaiter } from './owner-watermarks';

/**
 * The account and agent changes this process made that the `accounts` and `agents` read models may not include
 * yet: for each account or agent id, the log position of its last change here (an archive, a reset, a risk
 * profile, a suspension). Whoever reads an owner's standing from those read models asks {@link unfolded} first and,
 * while it is true, reads the owner's own stream instead: the row is known to be older than the stream.
 *
 * A lookup of an id with nothing recorded is one `Map.has` (the normal case costs nothing more). An entry is
 * forgotten the first time a lookup finds the read models past it. Bounded: at most `limit` ids are remembered
 * (the oldest change is forgotten first), far more than a process changes in any read-model lag.
 */
export class UnfoldedChanges {
  private readonly positions = new Map<string, LogPosition>();

  constructor(
    private readonly projections: FoldWaiter,
    private readonly readModels: readonly string[] = ['accounts', 'agents'],
    private readonly limit = 10_000,
  ) {}

  /** Records that `position` holds a change of the account or agent `id`. */
  record(id: string, position: LogPosition): void {
    // Delete first so the map's order stays the order of the last changes (the oldest is evicted).
    this.positions.delete(id);
    this.positions.set(id, position);
    while (this.positions.size > this.limit) {
      const oldest = this.positions.keys().next().value;
      if (oldest === undefined) break;
      this.positions.delete(oldest);
    }
  }

  /**
   * Whether a change of `id` made here is not yet in the read models. Nothing recorded: false at once. Else one
   * look at the projections (no wait: `waitFor(position, 0)`, in memory where this process folds, a read of the
   * checkpoints otherwise); once they include it the entry is forgotten.
   */
  async unfolded(id: string): Promise<boolean> {
    const position = this.positions.get(id);
    if (!position) return false;
    const reached = await this.projections.waitFor(position, 0, this.readModels);
    if (reached && this.positions.get(id) === position) this.positions.delete(id);
    return !reached;
  }

  /** Whether anything is recorded for `id` (no projection look; for the hot path's first test). */
  has(id: string): boolean {
    return this.positions.has(id);
  }
}
