import type { LogPosition } from '../../ports/event-store';

/** What {@link OwnerWatermarks} needs of the projection runner. */
export interface FoldWaiter {
  /**
   * Resolves `true` once the named read models (default: all) have folded the log up to `position`, `false` after
   * `timeoutMs` or when one of them has failed.
   */
  waitFor(position: LogPosition, timeoutMs: number, readModels?: readonly string[]): Promise<boolean>;
}

/**
 * Read your writes on the read side (docs/architecture.md, "Read your writes"): for each wallet owner (and, for
 * the `/trade` commands, the account that owns it), the `$all` position of the last event this process appended
 * for it that the read models may not include yet: the `/trade` commands' (which answer before their fold with
 * `READ_YOUR_WRITES=on-read`) and every other wallet append, a matching-engine fill too (which the `orders`
 * channel pushes before its fold). A later request
 * of that owner waits for the projections to reach its watermark before it reads them ({@link settle}), so a
 * client that places an order and then reads its balance, positions or orders still sees the order — while the
 * order's own response goes out as soon as its events are durable.
 *
 * Bounded: at most `limit` owners are remembered (the oldest write is forgotten first); a forgotten watermark
 * is older than any fold the runner could still owe, since a wait is cut off after `timeoutMs` anyway.
 */
export class OwnerWatermarks {
  private readonly positions = new Map<string, LogPosition>();

  constructor(
    private readonly projections: FoldWaiter,
    private readonly timeoutMs: number,
    private readonly limit = 100_000,
  ) {}

  /** Records that `position` holds a write of each of `owners` (owner ids and account ids). */
  record(owners: readonly string[], position: LogPosition): void {
    for (const owner of owners) {
      // Delete first so the map's order stays the order of the last writes (the oldest is evicted).
      this.positions.delete(owner);
      this.positions.set(owner, position);
    }
    while (this.positions.size > this.limit) {
      const oldest = this.positions.keys().next().value;
      if (oldest === undefined) break;
      this.positions.delete(oldest);
    }
  }

  /** Whether a write of `owner` is recorded that is not yet known to be folded. */
  owes(owner: string): boolean {
    return this.positions.has(owner);
  }

  /**
   * Waits until the read models named in `readModels` (default: all of them) include every write recorded for
   * `owner`, at most `timeoutMs`: a read waits only for what it reads. Resolves `true` when they do (or nothing is
   * recorded), `false` after the timeout or when one of them has failed (the caller answers anyway and says its
   * figures may lag: `X-Read-Model-Stale`). The watermark is forgotten once every read model has folded it.
   */
  async settle(owner: string, readModels?: readonly string[]): Promise<boolean> {
    const position = this.positions.get(owner);
    if (!position) return true;
    const reached = await this.projections.waitFor(position, this.timeoutMs, readModels);
    // Forget the watermark once all read models folded it, unless a newer write replaced it meanwhile.
    if (reached && this.positions.get(owner) === position) {
      const all = readModels === undefined || (await this.projections.waitFor(position, 0));
      if (all && this.positions.get(owner) === position) this.positions.delete(owner);
    }
    return reached;
  }

  /** Owners with a watermark not yet known to be folded (for `/health` and tests). */
  get size(): number {
    return this.positions.size;
  }
}
