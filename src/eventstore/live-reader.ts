import { backoffDelayMs } from '../../domain/shared/backoff';
import type {
  AllSubscription,
  LogPosition,
  ReadAllOptions,
  ReadAllResult,
  RecordedEvent,
  SubscribeOptions,
} from '../../ports/event-store';
import { comparePositions, START } from '../../ports/event-store';
import { WakeableSleep } from '../core/wakeable-sleep';

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
  /** Events of the shared tail kept for subscriptions a little behind the head (default 5,000; at most twice as many are held). */
  tailEvents?: number;
  /** Largest read of the shared tail (events, default 5,000). */
  tailReadMax?: number;
  /** The poll while {@link LiveReader.pollQuickly} is in force (ms, default 25). */
  quickPollMs?: number;
}

/** A page a subscription gets from {@link SharedTail.page}. */
interface TailPage {
  events: RecordedEvent[];
  next: LogPosition;
  /**
   * Whether the page is as recent as a read started after the subscription's mark: when it is not, a wake-up
   * may have come between that read and the mark, so the subscription reads again rather than sleeping.
   */
  fresh: boolean;
  /** The tail read the page's end reflects: a poll after this page waits for a newer one (or starts it). */
  seen: number;
}

/** A read of the tail's head in flight: its sequence number orders it against the subscriptions' marks. */
interface TailRead {
  seq: number;
  done: Promise<void>;
}

/**
 * One process's shared read of the head of `$all` (issue 23): the subscriptions of a process (the projection
 * runner, the matching engine, the webhook subscriber) follow the same log, and each used to read and decode every
 * page itself — three statements and three decodings of the same rows per wake-up. The tail keeps the most recent
 * run of the log in memory, contiguous from `from` (every event of the log after `from` up to its last event, in
 * log order, as `readAll` returned them), and extends it with one read at a time from its end. A subscription
 * whose position lies in the tail is served a slice of it; one at the tail's end waits for (or starts) the next
 * read; one behind the tail (catching up from an old checkpoint) reads `$all` itself. Every subscription still
 * gets exactly the events the source's `readAll` (the store's, eliding its large fields if so configured) would have given it, in order, each once: the tail is only ever a prefix of
 * the log after `from` below the visibility horizon, which `readAll` never goes back on.
 */
class SharedTail {
  private from: LogPosition = START;
  private events: RecordedEvent[] = [];
  /** Set once the tail has a start (the first subscription to reach the head sets it). */
  private started = false;
  /** Bumped when the tail restarts elsewhere, so a read of the old tail's head is not appended to the new one. */
  private generation = 0;
  private seq = 0;
  /** The sequence number of the latest completed read of the tail's head. */
  private checkedSeq = 0;
  private inFlight: TailRead | undefined;

  constructor(
    private readonly source: LiveReaderSource,
    private readonly keep: number,
    private readonly readMax: number,
  ) {}

  /** A mark taken before a subscription's read: a tail read started after it saw every wake-up before it. */
  mark(): number {
    return this.seq;
  }

  /** Up to `max` events after `after`, from the tail when it holds them (see the class). */
  async page(after: LogPosition, max: number, mark: number): Promise<TailPage> {
    for (;;) {
      const index = this.indexAfter(after);
      if (index === undefined) {
        if (this.started && comparePositions(after, this.head()) <= 0) {
          // Behind the tail (catching up from an old checkpoint), or inside its range but not one of its positions
          // (an event deleted since): this subscription reads on its own, the tail stays with the head.
          const page = await this.source.readAll({ after, maxCount: max });
          return { events: page.events, next: page.next, fresh: true, seen: mark };
        }
        // Ahead of the tail (or no tail yet): the tail restarts at this subscription's position.
        this.restart(after);
        continue;
      }
      if (index < this.events.length) {
        const events = this.events.slice(index, index + max);
        const reachesHead = index + max >= this.events.length;
        return {
          events,
          next: events[events.length - 1]!.position,
          fresh: !reachesHead || this.checkedSeq > mark,
          seen: this.checkedSeq,
        };
      }
      // At the tail's head: done when a read started after the mark found nothing more; otherwise share the read
      // in flight (a read started after the mark answers this subscription too) or start one.
      if (this.checkedSeq > mark) return { events: [], next: after, fresh: true, seen: this.checkedSeq };
      if (this.inFlight) await this.inFlight.done;
      else this.readHead();
    }
  }

  private head(): LogPosition {
    return this.events.length ? this.events[this.events.length - 1]!.position : this.from;
  }

  private restart(at: LogPosition): void {
    this.generation++;
    this.from = at;
    this.events = [];
    this.started = true;
    this.checkedSeq = 0;
  }

  /** The index in the tail of the first event after `after`, or `undefined` when `after` is not in the tail. */
  private indexAfter(after: LogPosition): number | undefined {
    if (!this.started) return undefined;
    if (comparePositions(after, this.from) === 0) return 0;
    let lo = 0;
    let hi = this.events.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = comparePositions(this.events[mid]!.position, after);
      if (c === 0) return mid + 1;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  private readHead(): void {
    const seq = ++this.seq;
    const generation = this.generation;
    const after = this.head();
    const done = this.source.readAll({ after, maxCount: this.readMax }).then(
      (page) => {
        if (this.inFlight?.seq === seq) this.inFlight = undefined;
        if (generation !== this.generation) return;
        for (const e of page.events) this.events.push(e);
        this.checkedSeq = seq;
        this.trim();
      },
      (error: unknown) => {
        if (this.inFlight?.seq === seq) this.inFlight = undefined;
        throw error;
      },
    );
    this.inFlight = { seq, done };
  }

  /** Drops the oldest events beyond twice the kept number (amortised: one copy per `keep` events). */
  private trim(): void {
    if (this.events.length <= 2 * this.keep) return;
    const drop = this.events.length - this.keep;
    this.from = this.events[drop - 1]!.position;
    this.events = this.events.slice(drop);
  }
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
  private readonly tail: SharedTail;
  /** Until when (ms since epoch) idle subscriptions poll every `quickPollMs` instead of `idlePollMs`. */
  private readonly quick = { until: 0 };

  constructor(
    private readonly source: LiveReaderSource,
    options: LiveReaderOptions = {},
  ) {
    this.options = {
      idlePollMs: 1000,
      horizonRetryMs: 5,
      forgetNotifiedAfterMs: 5000,
      tailEvents: 5_000,
      tailReadMax: 5_000,
      quickPollMs: 25,
      ...options,
    };
    this.tail = new SharedTail(source, this.options.tailEvents, this.options.tailReadMax);
  }

  /** Signals that events up to global position `position` were committed. */
  wake(position?: bigint): void {
    for (const s of this.subscriptions) s.wake(position);
  }

  /**
   * Re-reads the log now and then polls every `quickPollMs` for `forMs` ms: for a time when wake-ups may be
   * missing though nothing was lost, e.g. while other writers have not yet learnt that this process listens
   * (the PostgreSQL store's notifier, `src/eventstore/postgres.ts`).
   */
  pollQuickly(forMs: number): void {
    this.quick.until = Math.max(this.quick.until, Date.now() + forMs);
    this.wake();
  }

  /** Starts the LISTEN channel (wake-ups) unless it runs already; the first subscription does it too. */
  listen(): void {
    if (this.closed || this.unlisten || !this.source.listen) return;
    this.unlisten = this.source.listen((p) => this.wake(p)).catch(() => undefined);
  }

  /** Opens a subscription; the first one starts the LISTEN channel. */
  subscribe(options: SubscribeOptions = {}): AllSubscription {
    if (this.closed) throw new Error('event store is closed');
    this.listen();
    const sub = new LiveSubscription(this.tail, options, this.options, this.quick, () =>
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
  private readonly sleeper = new WakeableSleep();
  private readonly pending = new Map<bigint, number>();
  /** Recently delivered global positions, so a late NOTIFY of a delivered event is not awaited again. */
  private readonly delivered = new Set<bigint>();
  private woken = false;
  /** The tail's mark at the latest wake-up. */
  private wokenMark = 0;

  constructor(
    private readonly tail: SharedTail,
    private readonly options: SubscribeOptions,
    private readonly tuning: Required<LiveReaderOptions>,
    private readonly quick: { readonly until: number },
    private readonly onClose: () => void,
  ) {}

  wake(position?: bigint): void {
    // Our own append and its NOTIFY both announce the same event: once delivered, ignore the echo.
    if (position !== undefined && this.delivered.has(position)) return;
    if (position !== undefined) this.pending.set(position, Date.now());
    // Only a read started after this wake-up sees what it announces.
    this.wokenMark = this.tail.mark();
    this.woken = true;
    this.sleeper.wake();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.onClose();
    this.sleeper.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecordedEvent[]> {
    let after: LogPosition = this.options.after ?? START;
    const maxBatch = this.options.maxBatch ?? 1000;
    let failures = 0;
    // The page must come from a read started after `mark`: at first, after the last wake-up, and for a poll (the
    // idle poll, the re-read while a notified event is below the horizon), a read newer than the one the last
    // page reflects: one another subscription of this process started meanwhile will do, so the subscriptions of
    // a process poll together rather than each on its own timer.
    let mark = this.tail.mark();
    while (!this.closed) {
      if (this.woken) {
        this.woken = false;
        mark = Math.max(mark, this.wokenMark);
      }
      let page: TailPage;
      try {
        page = await this.tail.page(after, maxBatch, mark);
        failures = 0;
      } catch {
        // The database is briefly away (restart, failover): back off a little and read again (a read waits for
        // the server itself, up to a few seconds, so this loop does not spin while it is away).
        failures++;
        await this.sleeper.sleep(backoffDelayMs(failures, { baseMs: 10, maxMs: 200 }));
        mark = this.tail.mark();
        continue;
      }
      if (this.closed) return;
      if (page.events.length > 0) {
        after = page.next;
        for (const e of page.events) this.markDelivered(e.position.prepare);
        yield page.events;
        if (page.events.length === maxBatch || !page.fresh) continue;
      }
      if (this.woken) continue;
      this.forgetStale();
      mark = page.seen;
      await this.sleeper.sleep(
        this.pending.size > 0
          ? this.tuning.horizonRetryMs
          : Date.now() < this.quick.until
            ? this.tuning.quickPollMs
            : this.tuning.idlePollMs,
      );
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
}
