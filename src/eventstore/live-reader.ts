import { backoffDelayMs } from '../../domain/shared/backoff';
import type {
  AllSubscription,
  LogPosition,
  ReadAllOptions,
  ReadAllResult,
  RecordedEvent,
  SubscribeOptions,
} from '../../ports/event-store';
import { START } from '../../ports/event-store';

/** What a {@link LiveReader} needs from its store. */
export interface LiveReaderSource {
  readAll(options: ReadAllOptions): Promise<ReadAllResult>;
  /**
   * Starts a wake-up channel (LISTEN); `onWake` receives the notified global position when known, and is called
   * without one after the channel was lost and re-subscribed (notifications may have been missed meanwhile).
   */
  listen?(onWake: (position?: bigint) => void): Promise<() => Promise<void>>;
}

/** Tuning of a {@link LiveReader}; the defaults suit both PGlite and a server. */
export interface LiveReaderOptions {
  /** Fallback poll when no wake-up arrives (ms). */
  idlePollMs?: number;
  /** Re-read delay while a notified event is still below the visibility horizon (ms). */
  horizonRetryMs?: number;
  /** A notified position not seen after this long is forgotten (its stream may have been deleted) (ms). */
  forgetNotifiedAfterMs?: number;
}

/**
 * Catch-up-then-live subscriptions over `readAll` (ARCHITECTURE §5). Wake-ups come from LISTEN/NOTIFY and
 * from this process's own appends; they are hints only: the log is always re-read, and an idle poll covers
 * lost notifications. A notified event that is not yet readable (an older transaction still running holds the
 * horizon back) triggers quick re-reads until it shows up, which keeps delivery latency low without skipping.
 */
export class LiveReader {
  private readonly subscriptions = new Set<LiveSubscription>();
  private unlisten: Promise<(() => Promise<void>) | undefined> | undefined;
  private closed = false;
  private readonly options: Required<LiveReaderOptions>;

  constructor(
    private readonly source: LiveReaderSource,
    options: LiveReaderOptions = {},
  ) {
    this.options = { idlePollMs: 1000, horizonRetryMs: 5, forgetNotifiedAfterMs: 5000, ...options };
  }

  /** Signals that events up to global position `position` were committed. */
  wake(position?: bigint): void {
    for (const s of this.subscriptions) s.wake(position);
  }

  /** Opens a subscription; the first one starts the LISTEN channel. */
  subscribe(options: SubscribeOptions = {}): AllSubscription {
    if (this.closed) throw new Error('event store is closed');
    if (!this.unlisten && this.source.listen) {
      this.unlisten = this.source.listen((p) => this.wake(p)).catch(() => undefined);
    }
    const sub = new LiveSubscription(this.source, options, this.options, () =>
      this.subscriptions.delete(sub),
    );
    this.subscriptions.add(sub);
    return sub;
  }

  /** Ends every subscription and the LISTEN channel. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    const un = await this.unlisten;
    await un?.();
  }
}

class LiveSubscription implements AllSubscription {
  private closed = false;
  private wakeUp: (() => void) | undefined;
  private readonly pending = new Map<bigint, number>();
  /** Recently delivered global positions, so a late NOTIFY of a delivered event is not awaited again. */
  private readonly delivered = new Set<bigint>();
  private woken = false;

  constructor(
    private readonly source: LiveReaderSource,
    private readonly options: SubscribeOptions,
    private readonly tuning: Required<LiveReaderOptions>,
    private readonly onClose: () => void,
  ) {}

  wake(position?: bigint): void {
    // Our own append and its NOTIFY both announce the same event: once delivered, ignore the echo.
    if (position !== undefined && this.delivered.has(position)) return;
    if (position !== undefined) this.pending.set(position, Date.now());
    this.woken = true;
    this.wakeUp?.();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.onClose();
    this.wakeUp?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent[]> {
    let after: LogPosition = this.options.after ?? START;
    const maxBatch = this.options.maxBatch ?? 1000;
    let failures = 0;
    while (!this.closed) {
      this.woken = false;
      let page: ReadAllResult;
      try {
        page = await this.source.readAll({ after, maxCount: maxBatch });
        failures = 0;
      } catch {
        // The database is briefly away (restart, failover): back off a little and read again (a read waits for
        // the server itself, up to a few seconds, so this loop does not spin while it is away).
        failures++;
        await this.sleep(backoffDelayMs(failures, { baseMs: 10, maxMs: 200 }));
        continue;
      }
      if (this.closed) return;
      if (page.events.length > 0) {
        after = page.next;
        for (const e of page.events) this.markDelivered(e.position.prepare);
        yield page.events;
        if (page.events.length === maxBatch) continue;
      }
      if (this.woken) continue;
      this.forgetStale();
      await this.sleep(this.pending.size > 0 ? this.tuning.horizonRetryMs : this.tuning.idlePollMs);
    }
  }

  private markDelivered(position: bigint): void {
    this.pending.delete(position);
    this.delivered.add(position);
    if (this.delivered.size > 4096) {
      const oldest = this.delivered.values().next().value;
      if (oldest !== undefined) this.delivered.delete(oldest);
    }
  }

  private forgetStale(): void {
    const cutoff = Date.now() - this.tuning.forgetNotifiedAfterMs;
    for (const [position, at] of this.pending) if (at < cutoff) this.pending.delete(position);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = undefined;
        done();
      };
    });
  }
}
