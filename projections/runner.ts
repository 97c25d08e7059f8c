import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { backoffDelayMs } from '../domain/shared/backoff';
import {
  type AllSubscription,
  comparePositions,
  type EventStore,
  formatPosition,
  isAfter,
  type LogPosition,
  type RecordedEvent,
  START,
} from '../ports/event-store';
import {
  applyBatch,
  applyBatches,
  ensureLiveGeneration,
  type Generation,
  liveCheckpoints,
  liveGeneration,
} from './generations';
import type { Projection } from './projection';
import type { ReadModels } from './read-models';
import { rebuildProjection } from './rebuild';

/** Options of {@link ProjectionRunner}. */
export interface ProjectionRunnerOptions {
  /** Events per transaction (default 500). */
  batchSize?: number;
  /**
   * How long (ms) the runner may hold back reading and folding new events that nobody waits for (default 0:
   * fold at once). A `waitFor` cuts the pause short, so read-your-writes is not delayed; only events whose
   * command does not wait (a backtest step, a matching-engine fill) are folded up to this much later, many at a
   * time instead of one page each. Use it only where the waiters are in this process (`serve`), never in a
   * standalone worker, whose waiters poll from other processes (docs/architecture.md, "Projections").
   */
  unwaitedFoldDelayMs?: number;
  /**
   * Fold a page in up to this many transactions at once (default 1: one transaction for every member). Each
   * projection that has events in the page gets a transaction of its own and they run concurrently on the
   * pool, so a page takes as long as its slowest read model instead of the sum of them; members without events
   * in the page ride along in the lightest group (their checkpoints still move). Only worth it on a server
   * pool: PGlite runs one statement at a time anyway.
   */
  concurrentFolds?: number;
  /**
   * True for an error that says the database is away (a lost connection, a restart), not that a projector
   * failed: the page is then retried as a whole once the database answers (`waitForDatabase`), without marking
   * any projection failed or growing its back-off, so the read models catch up right after a recovery.
   */
  isTransient?: (error: unknown) => boolean;
  /** Resolves once the database answers again (true), or false after `timeoutMs`. */
  waitForDatabase?: (timeoutMs: number) => Promise<boolean>;
  logger?: Logger;
}

/** Status of one projection for `/health` and `projections status`. */
export interface ProjectionStatus {
  name: string;
  version: number;
  generation: number | null;
  state: 'starting' | 'catching_up' | 'live' | 'rebuilding' | 'failed' | 'stopped';
  checkpoint: string;
  /** Events in the log after the checkpoint (filled by {@link ProjectionRunner.status}). */
  lag_events?: number;
  /** Age (ms) of the oldest event after the checkpoint, 0 when caught up (filled by {@link ProjectionRunner.status}). */
  lag_ms?: number;
  last_error?: string;
}

/** Hears each committed page of the log, or `'swapped'` when a read model's tables were replaced. */
export type FoldListener = (change: readonly RecordedEvent[] | 'swapped') => void;

/** One projection inside the runner: its generation, committed checkpoint and health. */
interface Member {
  projection: Projection;
  generation: Generation | undefined;
  /** Committed checkpoint of `generation` (what waiters compare against). */
  checkpoint: LogPosition;
  state: ProjectionStatus['state'];
  lastError?: string;
  /** Consecutive failed batches (drives the back-off). */
  failures: number;
  /** While failed: when it may take part again (ms since epoch). */
  retryAt?: number;
}

/**
 * Whether some projection named in `readModels` (default: all) has not folded `position`: its checkpoint
 * (`checkpointOf`; missing: nothing folded) is before it ({@link comparePositions}). A selection that names none
 * of `projections` counts as behind (nothing known folded).
 */
const someBehind = (
  projections: readonly Projection[],
  readModels: readonly string[] | undefined,
  position: LogPosition,
  checkpointOf: (name: string) => LogPosition | undefined,
): boolean => {
  let named = false;
  for (const p of projections) {
    if (readModels && !readModels.includes(p.name)) continue;
    named = true;
    const c = checkpointOf(p.name);
    if (c === undefined || isAfter(position, c)) return true;
  }
  return !named;
};

/** How often (ms) a process that does not fold reads the checkpoints for {@link ProjectionRunner.lagging} at most. */
const LAG_POLL_MS = 20;

/** The largest lag `status()` counts (events; a longer lag shows as this many). */
const MAX_COUNTED_LAG = 100_000;
/** Events per page where the lag is counted by reading the log. */
const LAG_PAGE = 10_000;

/**
 * Runs projections as one catch-up subscription (ARCHITECTURE §6): a single `$all` reader feeds every projection,
 * and each page is folded into all of them in one transaction together with their checkpoints (effectively
 * exactly once), first the history, then live. One reader and one commit per page instead of one per projection
 * is what keeps read-your-writes cheap under load (docs/benchmarks.md, "Trading").
 *
 * Each projection keeps its own checkpoint: the reader starts at the lowest one and a projection skips what it
 * already folded. A projection whose batch fails is isolated (the page is retried one projection per
 * transaction), marked `failed` and retried with back-off while the others go on; a projection whose code
 * `version` differs from its live generation is rebuilt in the background while the old generation keeps serving
 * reads, and joins the shared reader when the views are swapped. `waitFor(position)` lets a command's response
 * wait until every read model includes its events (read your writes).
 */
export class ProjectionRunner {
  private readonly members = new Map<string, Member>();
  private readonly waiters = new Set<{
    position: LogPosition;
    readModels: readonly string[] | undefined;
    resolve: (ok: boolean) => void;
  }>();
  /** Waits of `pollCheckpoints` (this process does not fold), served by one `pollLoop`. */
  private readonly remoteWaiters = new Set<{
    position: LogPosition;
    named: readonly Projection[];
    deadline: number;
    resolve: (ok: boolean) => void;
    reject: (error: unknown) => void;
  }>();
  private polling = false;
  private running = false;
  private readonly batchSize: number;
  private subscription: AllSubscription | undefined;
  /** Set when membership or a checkpoint moved backwards: the reader restarts from the lowest checkpoint. */
  private restartRequested = false;
  private wakeIdle: (() => void) | undefined;
  /** Position of the last event the current subscription delivered (where its next page starts). */
  private readPosition: LogPosition = { commit: 0n, prepare: 0n };
  private loop: Promise<void> | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listeners = new Set<FoldListener>();

  constructor(
    private readonly store: EventStore,
    private readonly db: Kysely<ReadModels>,
    readonly projections: readonly Projection[],
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
  }

  /** Creates missing first generations and starts the shared reader; resolves once it is started. */
  async start(): Promise<void> {
    this.running = true;
    for (const projection of this.projections) {
      const member: Member = {
        projection,
        generation: undefined,
        checkpoint: { commit: 0n, prepare: 0n },
        state: 'starting',
        failures: 0,
      };
      this.members.set(projection.name, member);
      const live = await ensureLiveGeneration(this.db, projection);
      member.generation = live;
      member.checkpoint = live.checkpoint;
      if (live.version !== projection.version) this.rebuildInBackground(member);
      else member.state = 'catching_up';
    }
    this.loop = this.run();
  }

  /** True while this process folds the log itself (so {@link onFolded} hears every change). */
  get folding(): boolean {
    return this.running;
  }

  /** Names of the read models this process folds that have failed (no database read: for `/health`). */
  get failed(): string[] {
    return [...this.members.values()].filter((m) => m.state === 'failed').map((m) => m.projection.name);
  }

  /**
   * Calls `listener` after each committed page with its events, and with `'swapped'` when a read model's tables
   * were replaced (a rebuild): caches over the read models use it to stay exact. Returns the unsubscribe.
   */
  onFolded(listener: FoldListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private tell(change: readonly RecordedEvent[] | 'swapped'): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (error) {
        this.options.logger?.error({ err: error }, 'projection listener failed');
      }
    }
  }

  /** Stops the reader after the batch in flight (committed or rolled back) and fails pending waits. */
  async stop(): Promise<void> {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.wakeIdle?.();
    await this.subscription?.close();
    await this.loop;
    for (const m of this.members.values()) if (m.state !== 'rebuilding') m.state = 'stopped';
    for (const w of this.waiters) w.resolve(false);
    this.waiters.clear();
  }

  /**
   * Resolves `true` once the read models named in `readModels` (default: every projection) have folded the log up
   * to `position`, or `false` after `timeoutMs` (the caller answers anyway and says the read models may lag). A
   * named read model that has failed (`failed`, retried with back-off) is not waited for: the wait ends as soon as
   * the others arrive and resolves `false`, so one broken read model does not hold reads of the others nor make its
   * own readers wait the full bound. Without a local reader (an API-only process) it polls the checkpoints in the
   * database.
   */
  waitFor(position: LogPosition, timeoutMs: number, readModels?: readonly string[]): Promise<boolean> {
    if (this.projections.length === 0) return Promise.resolve(true);
    if (!this.running) return this.pollCheckpoints(position, timeoutMs, readModels);
    const now = this.progress(position, readModels);
    if (now !== 'behind') return Promise.resolve(now === 'reached');
    return new Promise((resolve) => {
      const waiter = {
        position,
        readModels,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.waiters.add(waiter);
      // A waiter ends a pause between pages at once (see `lull`).
      this.wakeIdle?.();
    });
  }

  /**
   * Whether this process knows the named read models (default: all) to be behind the log's head: another process
   * announced an append (`EventStore.heardHead`) at a log position past what they have folded, compared in full
   * (`comparePositions`: the announcement carries the transaction id and the global position). The normal case
   * answers synchronously without a statement: nothing heard from others (a lone process: one comparison), or heard
   * and folded (a loop over the named members' checkpoints, in memory).
   * A process that folds compares with its members' checkpoints (in memory); one that does not reads the checkpoints
   * the folding process commits, once per {@link LAG_POLL_MS} at most for all callers (one statement; only while
   * something it heard is not known folded). A read that fails counts as behind.
   */
  lagging(readModels?: readonly string[]): boolean | Promise<boolean> {
    const heard = this.store.heardHead?.() ?? START;
    if (heard.prepare === 0n || this.projections.length === 0) return false;
    if (this.running)
      return someBehind(this.projections, readModels, heard, (n) => this.members.get(n)?.checkpoint);
    const polled = (n: string) => this.polled.checkpoints.get(n);
    if (!someBehind(this.projections, readModels, heard, polled)) return false;
    if (Date.now() - this.polled.at < LAG_POLL_MS) return true;
    this.polled.pending ??= liveCheckpoints(this.db)
      .then((checkpoints) => {
        this.polled.checkpoints = checkpoints;
      })
      .catch(() => undefined)
      .finally(() => {
        this.polled.at = Date.now();
        this.polled.pending = undefined;
      });
    return this.polled.pending.then(() => someBehind(this.projections, readModels, heard, polled));
  }

  /** The checkpoints {@link lagging} last read (a process that does not fold), and when. */
  private readonly polled = {
    checkpoints: new Map<string, LogPosition>(),
    at: Number.NEGATIVE_INFINITY,
    pending: undefined as Promise<void> | undefined,
  };

  /** Checkpoints and state of each projection, with `lag_events` counted against the log. */
  async status(): Promise<ProjectionStatus[]> {
    const out: ProjectionStatus[] = [];
    // Projections that share the shared reader usually share a checkpoint: each distinct one is counted once.
    const lags = new Map<string, Promise<number>>();
    for (const p of this.projections) {
      const member = this.members.get(p.name);
      const gen = member?.generation ?? (await liveGeneration(this.db, p.name));
      const checkpoint = member?.checkpoint ?? gen?.checkpoint ?? { commit: 0n, prepare: 0n };
      const key = formatPosition(checkpoint);
      if (!lags.has(key)) lags.set(key, this.countAfter(checkpoint));
      const lag = await lags.get(key)!;
      const oldest =
        lag > 0 ? (await this.store.readAll({ after: checkpoint, maxCount: 1 })).events[0] : undefined;
      out.push({
        name: p.name,
        version: p.version,
        generation: gen?.generation ?? null,
        state: member?.state === 'catching_up' && lag === 0 ? 'live' : (member?.state ?? 'stopped'),
        checkpoint: formatPosition(checkpoint),
        lag_events: lag,
        lag_ms: oldest ? Math.max(0, Date.now() - oldest.recordedAt.getTime()) : 0,
        ...(member?.lastError ? { last_error: member.lastError } : {}),
      });
    }
    return out;
  }

  /** Events after `checkpoint`, counted up to {@link MAX_COUNTED_LAG}: by the store where it can count, else by pages. */
  private async countAfter(checkpoint: LogPosition): Promise<number> {
    if (this.store.countEventsAfter) return this.store.countEventsAfter(checkpoint, MAX_COUNTED_LAG);
    let count = 0;
    let after = checkpoint;
    // Count by reading pages: works on every adapter; the lag is small when healthy.
    for (let i = 0; i < MAX_COUNTED_LAG / LAG_PAGE; i++) {
      const page = await this.store.readAll({ after, maxCount: LAG_PAGE });
      count += page.events.length;
      if (page.events.length < LAG_PAGE) break;
      after = page.next;
    }
    return count;
  }

  /**
   * Where the named read models (default: all) stand against `position`: `reached` when all have folded it,
   * `behind` while one that is running has not, `failed` when only failed ones have not.
   */
  private progress(position: LogPosition, readModels?: readonly string[]): 'reached' | 'behind' | 'failed' {
    let failed = false;
    for (const m of this.members.values()) {
      if (readModels && !readModels.includes(m.projection.name)) continue;
      if (comparePositions(m.checkpoint, position) >= 0) continue;
      if (m.state === 'failed') failed = true;
      else return 'behind';
    }
    return failed ? 'failed' : 'reached';
  }

  private notifyWaiters(): void {
    for (const w of this.waiters) {
      const now = this.progress(w.position, w.readModels);
      if (now !== 'behind') w.resolve(now === 'reached');
    }
  }

  /**
   * `waitFor` in a process that does not fold (an API process with `PROJECTIONS=false`): the checkpoints the
   * folding process commits are polled — by one loop for all the waiting requests, so a burst of waiting orders
   * costs one query per 20 ms, not one per request (many concurrent pollers slowed the folding process's own
   * catch-up after a database outage).
   */
  private pollCheckpoints(
    position: LogPosition,
    timeoutMs: number,
    readModels?: readonly string[],
  ): Promise<boolean> {
    const named = readModels ? this.projections.filter((p) => readModels.includes(p.name)) : this.projections;
    return new Promise((resolve, reject) => {
      this.remoteWaiters.add({ position, named, deadline: Date.now() + timeoutMs, resolve, reject });
      if (!this.polling) void this.pollLoop();
    });
  }

  private async pollLoop(): Promise<void> {
    this.polling = true;
    try {
      while (this.remoteWaiters.size > 0) {
        let checkpoints: Map<string, LogPosition> | undefined;
        try {
          checkpoints = await liveCheckpoints(this.db);
        } catch (error) {
          // The database is away: a write that is already durable answers as stale (at its deadline) instead of
          // failing; any other error fails every wait.
          if (!this.options.isTransient?.(error)) {
            for (const w of this.remoteWaiters) w.reject(error);
            this.remoteWaiters.clear();
            return;
          }
        }
        const now = Date.now();
        for (const w of this.remoteWaiters) {
          const reached =
            checkpoints !== undefined &&
            w.named.every((p) => {
              const c = checkpoints.get(p.name);
              return c !== undefined && comparePositions(c, w.position) >= 0;
            });
          if (reached || now >= w.deadline) {
            this.remoteWaiters.delete(w);
            w.resolve(reached);
          }
        }
        if (this.remoteWaiters.size > 0) await new Promise((r) => setTimeout(r, checkpoints ? 20 : 50));
      }
    } finally {
      this.polling = false;
    }
  }

  /** Members the shared reader feeds now: not rebuilding, not waiting out a failure's back-off. */
  private active(): Member[] {
    const now = Date.now();
    return [...this.members.values()].filter(
      (m) =>
        m.generation !== undefined &&
        m.state !== 'rebuilding' &&
        !(m.state === 'failed' && (m.retryAt ?? 0) > now),
    );
  }

  /** Makes the reader start again from the lowest checkpoint of the active members. */
  private requestRestart(): void {
    this.restartRequested = true;
    void this.subscription?.close();
    this.wakeIdle?.();
  }

  /**
   * After a page that was not full: pauses up to `unwaitedFoldDelayMs` unless someone waits for the read
   * models, so events that arrive meanwhile are read and folded as one page (one `$all` read and one
   * transaction instead of one each). A new waiter, a restart or stop ends the pause at once.
   */
  private async lull(lastPageFull: boolean): Promise<void> {
    const ms = this.options.unwaitedFoldDelayMs ?? 0;
    if (ms <= 0 || lastPageFull || this.waiters.size > 0 || !this.running || this.restartRequested) return;
    await this.pause(ms);
  }

  /** Sleeps `ms`, or less when a waiter arrives, a restart is requested or the runner stops. */
  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      this.wakeIdle = resolve;
      this.later(ms, resolve);
    });
    this.wakeIdle = undefined;
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }

  private async run(): Promise<void> {
    let failures = 0;
    /** Pages lost to the database in a row (reset by a folded page). */
    let lostPages = 0;
    while (this.running) {
      this.restartRequested = false;
      const members = this.active();
      if (members.length === 0) {
        // Everything is rebuilding or backing off: wait for one of them to come back.
        await this.pause(1000);
        continue;
      }
      const from = members.map((m) => m.checkpoint).reduce((a, b) => (comparePositions(a, b) <= 0 ? a : b));
      const subscription = this.store.subscribeToAll({ after: from, maxBatch: this.batchSize });
      this.readPosition = from;
      this.subscription = subscription;
      try {
        for await (const batch of subscription) {
          await this.fold(batch);
          failures = 0;
          lostPages = 0;
          if (this.restartRequested || !this.running) break;
          await this.lull(batch.length >= this.batchSize);
          if (this.restartRequested || !this.running) break;
        }
      } catch (error) {
        if (this.options.isTransient?.(error) && this.options.waitForDatabase) {
          // The database went away under a page: nothing of it committed; read again from the checkpoints as
          // soon as the database answers. A lost connection is most often one terminated backend (a failover, a
          // proxy's timeout, `pg_terminate_backend`) on a server that answers at once: the first retry goes now,
          // on a fresh connection, rather than after a probe of its own (~100 ms under load; issue 16's bound
          // is a second from the fault to read models that include the log); a second loss in a row waits.
          this.options.logger?.warn(
            { err: error },
            'projection reader: database unavailable, resuming when back',
          );
          if (lostPages++ > 0 && !(await this.options.waitForDatabase(5_000))) await this.pause(100);
          continue;
        }
        // The reader itself failed: back off and read again from the checkpoints.
        failures++;
        this.options.logger?.error({ err: error }, 'projection reader failed');
        await this.pause(backoffDelayMs(failures, { baseMs: 100, maxMs: 5_000 }));
      } finally {
        await subscription.close();
        this.subscription = undefined;
      }
    }
  }

  /** Folds one page into every active member behind it, in one transaction (isolating a failing member). */
  private async fold(batch: readonly RecordedEvent[]): Promise<void> {
    const last = batch[batch.length - 1];
    if (!last) return;
    // Only a member that has folded everything before this page may take part: one that came back from a
    // back-off (or a rebuild) behind the reader would otherwise skip the events in between. It makes the reader
    // start again from its checkpoint instead.
    const pageStart = this.readPosition;
    this.readPosition = last.position;
    const active = this.active();
    if (active.some((m) => comparePositions(m.checkpoint, pageStart) < 0)) this.requestRestart();
    const members = active.filter(
      (m) => comparePositions(m.checkpoint, pageStart) >= 0 && isAfter(last.position, m.checkpoint),
    );
    if (members.length === 0) return;
    const outcomes = await Promise.all(
      foldGroups(members, batch, this.options.concurrentFolds ?? 1).map((group) =>
        this.foldGroup(group, batch),
      ),
    );
    const results = new Map<Member, LogPosition | 'retired' | 'failed'>();
    for (const o of outcomes) for (const [m, r] of o) results.set(m, r);
    for (const m of members) {
      const r = results.get(m)!;
      if (r === 'failed') continue;
      if (r === 'retired') {
        await this.switchToLive(m);
        continue;
      }
      m.checkpoint = r;
      m.failures = 0;
      m.lastError = undefined;
      m.retryAt = undefined;
      m.state = batch.length < this.batchSize ? 'live' : 'catching_up';
    }
    this.tell(batch);
    this.notifyWaiters();
  }

  /** Folds `batch` into `group` in one transaction; when a projector fails, one transaction per member instead. */
  private async foldGroup(
    group: readonly Member[],
    batch: readonly RecordedEvent[],
  ): Promise<Map<Member, LogPosition | 'retired' | 'failed'>> {
    const out = new Map<Member, LogPosition | 'retired' | 'failed'>();
    try {
      const results = await this.db.transaction().execute((trx) =>
        applyBatches(
          trx,
          group.map((m) => ({ projection: m.projection, gen: m.generation! })),
          batch,
        ),
      );
      for (const [i, m] of group.entries()) out.set(m, results[i]!);
    } catch (error) {
      // The database went away: no projector is at fault; the reader retries the page when it is back.
      if (this.options.isTransient?.(error)) throw error;
      // Some projector failed and rolled the page back for the group: fold it one projection per transaction
      // so the healthy ones go on and only the failing one stops (and says why).
      for (const m of group) {
        try {
          out.set(
            m,
            await this.db.transaction().execute((trx) => applyBatch(trx, m.projection, m.generation!, batch)),
          );
        } catch (error) {
          if (this.options.isTransient?.(error)) throw error;
          this.fail(m, error);
          out.set(m, 'failed');
        }
      }
    }
    return out;
  }

  private fail(m: Member, error: unknown): void {
    m.failures++;
    m.state = 'failed';
    m.lastError = (error as Error).message;
    const backoff = backoffDelayMs(m.failures, { baseMs: 100, maxMs: 30_000 });
    m.retryAt = Date.now() + backoff;
    this.options.logger?.error({ err: error, projection: m.projection.name }, 'projection batch failed');
    // Waits that were held only by this read model end now (stale) instead of at their bound.
    this.notifyWaiters();
    // Retry from its committed checkpoint once the back-off is over; a poison event keeps failing visibly.
    this.later(backoff, () => this.requestRestart());
  }

  /** The generation this member folded was swapped out (a rebuild elsewhere): follow the new live one. */
  private async switchToLive(m: Member): Promise<void> {
    const live = await liveGeneration(this.db, m.projection.name);
    if (!live) return;
    m.generation = live;
    m.checkpoint = live.checkpoint;
    this.tell('swapped');
    this.requestRestart();
    this.notifyWaiters();
    this.options.logger?.info(
      { projection: m.projection.name, generation: live.generation },
      'projection generation swapped',
    );
  }

  private rebuildInBackground(m: Member): void {
    m.state = 'rebuilding';
    this.options.logger?.info(
      { projection: m.projection.name, from: m.generation?.version, to: m.projection.version },
      'projection version changed: rebuilding beside the live generation',
    );
    rebuildProjection(this.store, this.db, m.projection, { batchSize: 5_000 })
      .then((result) => {
        m.generation = result.generation;
        m.checkpoint = result.generation.checkpoint;
        m.state = 'catching_up';
        this.tell('swapped');
        // The rebuild may already have folded what a waiter waits for: no later batch would tell it.
        this.notifyWaiters();
        // Join the shared reader, which may have to go back to this member's checkpoint.
        this.requestRestart();
      })
      .catch((error) => {
        m.state = 'failed';
        m.lastError = (error as Error).message;
        this.options.logger?.error(
          { err: error, projection: m.projection.name },
          'projection rebuild failed',
        );
      });
  }
}

/**
 * Splits the members a page goes to into at most `limit` transactions: the members with the most events of
 * their types in the page get one each (heaviest first), the rest join the lightest group, so members without
 * work in the page still move their checkpoints without a transaction of their own.
 */
const foldGroups = <M extends { projection: { eventTypes?: readonly string[] } }>(
  members: readonly M[],
  batch: readonly RecordedEvent[],
  limit: number,
): M[][] => {
  if (limit <= 1 || members.length <= 1) return [[...members]];
  const weight = (m: M) => {
    const types = m.projection.eventTypes;
    if (!types) return batch.length;
    let n = 0;
    for (const e of batch) if (types.includes(e.type)) n++;
    return n;
  };
  const weighed = members.map((m) => ({ m, w: weight(m) })).sort((a, b) => b.w - a.w);
  const groups: { members: M[]; w: number }[] = [];
  for (const { m, w } of weighed) {
    // Heaviest first, so a new group is only opened while some member has work; the rest join the lightest.
    if (groups.length === 0 || (w > 0 && groups.length < limit)) {
      groups.push({ members: [m], w });
      continue;
    }
    const lightest = groups.reduce((a, b) => (b.w < a.w ? b : a));
    lightest.members.push(m);
    lightest.w += w;
  }
  return groups.map((g) => g.members);
};
