import { LRUCache } from 'lru-cache';
import type { RecordedEvent } from '../ports/event-store';

/**
 * A bounded read-through cache over read-model queries, kept exact by the projection runner that writes those
 * read models: every committed page is shown to {@link ReadThroughCache.observe}, and a page with an event that
 * `affects` the cached rows empties the cache (as does a generation swap, {@link ReadThroughCache.clear}).
 * A load that was already running when such a page committed is answered but not remembered (a version
 * counter), so a value read just before a change can never outlive it.
 *
 * Only valid in a process whose projection runner folds locally: an API-only process sees no pages and must
 * query the read models directly (see `installTrading`).
 */
export class ReadThroughCache<V extends {}> {
  private readonly entries: LRUCache<string, V>;
  private version = 0;

  /**
   * @param capacity entries kept (least recently used dropped first)
   * @param affects whether an event may change a cached value
   */
  constructor(
    capacity: number,
    private readonly affects: (event: RecordedEvent) => boolean,
  ) {
    this.entries = new LRUCache({ max: capacity });
  }

  /** The cached value of `key`, else `load()`'s (remembered unless it is `undefined` or went stale). */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const version = this.version;
    const value = await load();
    if (value !== undefined && version === this.version) this.entries.set(key, value);
    return value;
  }

  /** A committed page of the log: empties the cache when one of its events `affects` cached values. */
  observe(events: readonly RecordedEvent[]): void {
    if (events.some(this.affects)) this.clear();
  }

  /** Forgets everything (and every load in flight). */
  clear(): void {
    this.version++;
    this.entries.clear();
  }
}
