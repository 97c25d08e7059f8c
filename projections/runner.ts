import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../src/db/schema';
import {
  type AllSubscription,
  comparePositions,
  type EventStore,
  formatPosition,
  type LogPosition,
} from '../src/eventstore/port';
import {
  applyBatch,
  createGeneration,
  ensureRegistered,
  type Generation,
  liveGeneration,
  promote,
  readGeneration,
} from './generations';
import type { Projection } from './projection';
import { rebuildProjection } from './rebuild';

/** Options of {@link ProjectionRunner}. */
export interface ProjectionRunnerOptions {
  /** Events per transaction (default 500). */
  batchSize?: number;
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
  last_error?: string;
}

interface Loop {
  projection: Projection;
  generation: Generation | undefined;
  checkpoint: LogPosition;
  state: ProjectionStatus['state'];
  subscription?: AllSubscription;
  lastError?: string;
}

/**
 * Runs projections as catch-up subscriptions (ARCHITECTURE §6): each batch of events is folded in one
 * transaction together with the checkpoint (effectively exactly once), first the history, then live.
 * `waitFor(position)` lets a command's response wait until read models include its events (read your writes).
 * A projection whose code `version` differs from its live generation is rebuilt in the background while the
 * old generation keeps serving reads; the views are swapped when the new one has caught up.
 */
export class ProjectionRunner {
  private readonly loops = new Map<string, Loop>();
  private readonly waiters = new Set<{ position: LogPosition; resolve: (ok: boolean) => void }>();
  private running = false;
  private readonly batchSize: number;

  constructor(
    private readonly store: EventStore,
    private readonly db: Kysely<Database>,
    readonly projections: readonly Projection[],
    private readonly options: ProjectionRunnerOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
  }

  /** Creates missing first generations and starts every projection's loop; resolves once they are started. */
  async start(): Promise<void> {
    this.running = true;
    for (const projection of this.projections) {
      const loop: Loop = {
        projection,
        generation: undefined,
        checkpoint: { commit: 0n, prepare: 0n },
        state: 'starting',
      };
      this.loops.set(projection.name, loop);
      await ensureRegistered(this.db, projection.name);
      let live = await liveGeneration(this.db, projection.name);
      if (!live) {
        const created = await createGeneration(this.db, projection);
        await this.db.transaction().execute((trx) => promote(trx, projection, created));
        live = { ...created, status: 'live' };
      }
      loop.generation = live;
      loop.checkpoint = live.checkpoint;
      if (live.version !== projection.version) {
        this.rebuildInBackground(loop);
      } else {
        void this.run(loop);
      }
    }
  }

  /** Stops every loop (the current batch finishes or rolls back). */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all([...this.loops.values()].map((l) => l.subscription?.close()));
    for (const w of this.waiters) w.resolve(false);
    this.waiters.clear();
  }

  /**
   * Resolves `true` once every projection has folded the log up to `position`, or `false` after `timeoutMs`
   * (the caller answers anyway and says the read models may lag). Without local loops (an API-only process)
   * it polls the checkpoints in the database.
   */
  waitFor(position: LogPosition, timeoutMs: number): Promise<boolean> {
    if (this.projections.length === 0) return Promise.resolve(true);
    if (!this.running) return this.pollCheckpoints(position, timeoutMs);
    if (this.reached(position)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        position,
        resolve: (ok: boolean) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(ok);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Checkpoints and state of each projection, with `lag_events` counted against the log. */
  async status(): Promise<ProjectionStatus[]> {
    const out: ProjectionStatus[] = [];
    for (const p of this.projections) {
      const loop = this.loops.get(p.name);
      const gen = loop?.generation ?? (await liveGeneration(this.db, p.name));
      const checkpoint = loop?.checkpoint ?? gen?.checkpoint ?? { commit: 0n, prepare: 0n };
      const lag = await this.countAfter(checkpoint);
      out.push({
        name: p.name,
        version: p.version,
        generation: gen?.generation ?? null,
        state: loop?.state === 'catching_up' && lag === 0 ? 'live' : (loop?.state ?? 'stopped'),
        checkpoint: formatPosition(checkpoint),
        lag_events: lag,
        ...(loop?.lastError ? { last_error: loop.lastError } : {}),
      });
    }
    return out;
  }

  private async countAfter(checkpoint: LogPosition): Promise<number> {
    let count = 0;
    let after = checkpoint;
    // Count by reading pages: works on every adapter; the lag is small when healthy.
    for (let i = 0; i < 10; i++) {
      const page = await this.store.readAll({ after, maxCount: 10_000 });
      count += page.events.length;
      if (page.events.length < 10_000) break;
      after = page.next;
    }
    return count;
  }

  private reached(position: LogPosition): boolean {
    for (const loop of this.loops.values()) {
      if (comparePositions(loop.checkpoint, position) < 0) return false;
    }
    return true;
  }

  private notifyWaiters(): void {
    for (const w of this.waiters) if (this.reached(w.position)) w.resolve(true);
  }

  private async pollCheckpoints(position: LogPosition, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let all = true;
      for (const p of this.projections) {
        const gen = await liveGeneration(this.db, p.name);
        if (!gen || comparePositions(gen.checkpoint, position) < 0) all = false;
      }
      if (all) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private async run(loop: Loop): Promise<void> {
    let failures = 0;
    while (this.running) {
      const gen = loop.generation!;
      loop.state = 'catching_up';
      const subscription = this.store.subscribeToAll({ after: loop.checkpoint, maxBatch: this.batchSize });
      loop.subscription = subscription;
      try {
        for await (const batch of subscription) {
          const result = await this.db
            .transaction()
            .execute((trx) => applyBatch(trx, loop.projection, gen, batch));
          if (result === 'retired') {
            await subscription.close();
            await this.switchToLive(loop);
            break;
          }
          loop.checkpoint = result;
          failures = 0;
          loop.lastError = undefined;
          if (batch.length < this.batchSize) loop.state = 'live';
          this.notifyWaiters();
        }
      } catch (error) {
        failures++;
        loop.state = 'failed';
        loop.lastError = (error as Error).message;
        this.options.logger?.error(
          { err: error, projection: loop.projection.name },
          'projection batch failed',
        );
        await subscription.close();
        // Restart from the committed checkpoint after a back-off; a poison event keeps failing visibly.
        const committed = await readGeneration(this.db, loop.projection.name, gen.generation).catch(
          () => undefined,
        );
        if (committed) loop.checkpoint = committed.checkpoint;
        await new Promise((r) => setTimeout(r, Math.min(30_000, 100 * 2 ** failures)));
      }
    }
    loop.state = 'stopped';
  }

  /** The generation this loop folded was swapped out (a rebuild elsewhere): follow the new live one. */
  private async switchToLive(loop: Loop): Promise<void> {
    const live = await liveGeneration(this.db, loop.projection.name);
    if (!live) return;
    loop.generation = live;
    loop.checkpoint = live.checkpoint;
    this.notifyWaiters();
    this.options.logger?.info(
      { projection: loop.projection.name, generation: live.generation },
      'projection generation swapped',
    );
  }

  private rebuildInBackground(loop: Loop): void {
    loop.state = 'rebuilding';
    this.options.logger?.info(
      { projection: loop.projection.name, from: loop.generation?.version, to: loop.projection.version },
      'projection version changed: rebuilding beside the live generation',
    );
    rebuildProjection(this.store, this.db, loop.projection, { batchSize: 5_000 })
      .then(async (result) => {
        loop.generation = result.generation;
        loop.checkpoint = result.generation.checkpoint;
        // The rebuild may already have folded what a waiter waits for: no later batch would tell it.
        this.notifyWaiters();
        if (this.running) void this.run(loop);
      })
      .catch((error) => {
        loop.state = 'failed';
        loop.lastError = (error as Error).message;
        this.options.logger?.error(
          { err: error, projection: loop.projection.name },
          'projection rebuild failed',
        );
      });
  }
}
