import { type Kysely, sql } from 'kysely';
import { PREPARED } from '../db/prepared';
import { AppendBatcher } from '../eventstore/append-batcher';

/** The table of the shared counters (migration 0005): one row per key and group, expiring with its window. */
export const RATE_LIMIT_TABLE = 'rate_limits';

/** A counter after one request was counted: its points in the current window and when the window ends. */
export interface CountedRequest {
  /** Requests counted in the window, this one included (1 for the first). */
  points: number;
  /** When the window ends (ms since epoch). */
  expire: number;
}

/** How often rows of windows that ended over an hour ago are deleted (ms). */
const PURGE_EVERY_MS = 5 * 60_000;
const PURGE_AFTER_MS = 60 * 60_000;

/**
 * Fixed-window request counters in the shared `rate_limits` table (migration 0005, unlogged since 0011; the layout of
 * `rate-limiter-flexible`'s PostgreSQL store: `key` = `<group>:<caller key>`, `points`, `expire` in ms since epoch),
 * counted in batches: the requests of every caller that arrive while a statement is in flight are counted by the
 * next one, one upsert over all their keys (`AppendBatcher`: no timer, a request alone goes out at once). The
 * per-request upsert it replaces cost ~0.75 ms of CPU per order between the server and PostgreSQL, more than the
 * order itself (docs/benchmarks.md, "Trading", issue 23).
 *
 * The counting is the library's: a window starts at a key's first request and lasts `windowMs`; each request
 * adds 1, refused ones too; a request is allowed while its count is within the limit. Requests of one key in one
 * batch get consecutive counts in submission order, so the outcome is the one the requests would have had one
 * statement each. The statement commits without waiting for the WAL flush (`synchronous_commit = off` for its
 * transaction only): a crash of the database can forget the last fraction of a second of counts, which can only
 * allow a caller a few more requests in that window, never refuse one.
 */
export class PgRequestCounters {
  private readonly batcher: AppendBatcher<string, CountedRequest>;
  private lastPurge = 0;

  constructor(
    private readonly db: Kysely<any>,
    private readonly windowMs: number,
  ) {
    this.batcher = new AppendBatcher<string, CountedRequest>(
      {
        send: (keys) => this.send(keys),
        weight: () => 1,
        // A key is never in two batches in flight: its counts come back in submission order, and two statements of
        // this process never wait on each other's row locks.
        key: (k) => k,
        isolatable: () => false,
      },
      { maxInFlight: 2, maxItems: 1024 },
    );
  }

  /**
   * Counts one request of `key` (already prefixed with its group). Rejects with the database's error when the
   * statement fails (the caller decides on a fallback).
   */
  count(key: string): Promise<CountedRequest> {
    return this.batcher.submit(key);
  }

  /** Requests counted for `key` in its current window (0 when no window is open). */
  async used(key: string): Promise<{ points: number; expire: number } | undefined> {
    const { rows } = await sql<{ points: number; expire: string }>`
      select points, expire::text as expire from ${sql.table(RATE_LIMIT_TABLE)}
      where key = ${key} and expire > ${Date.now()}`.execute(this.db);
    const row = rows[0];
    return row ? { points: row.points, expire: Number(row.expire) } : undefined;
  }

  private async send(keys: string[]): Promise<CountedRequest[]> {
    const counts = new Map<string, number>();
    // Sorted, so statements of several processes lock the rows they share in the same order (no deadlock).
    for (const k of [...keys].sort()) counts.set(k, (counts.get(k) ?? 0) + 1);
    const now = Date.now();
    const { rows } = await sql<{ key: string; points: number; expire: string }>`${sql.raw(PREPARED)}
      insert into ${sql.table(RATE_LIMIT_TABLE)} as r (key, points, expire)
      select t.key, t.n, ${now + this.windowMs}::bigint
      from unnest(${[...counts.keys()]}::text[], ${[...counts.values()]}::int[]) as t(key, n),
        (select set_config('synchronous_commit', 'off', true)) as async_commit
      on conflict (key) do update set
        points = case when r.expire <= ${now} then excluded.points else r.points + excluded.points end,
        expire = case when r.expire <= ${now} then excluded.expire else r.expire end
      returning r.key, r.points, r.expire::text as expire`.execute(this.db);
    this.purgeNowAndThen(now);
    // The count after the batch, handed back one by one: the first request of a key in the batch gets the count
    // before the batch plus one.
    const next = new Map<string, { points: number; expire: number }>();
    for (const row of rows) {
      next.set(row.key, { points: row.points - counts.get(row.key)! + 1, expire: Number(row.expire) });
    }
    return keys.map((k) => {
      const at = next.get(k)!;
      const counted = { points: at.points, expire: at.expire };
      at.points++;
      return counted;
    });
  }

  /** Deletes rows of windows that ended over an hour ago, at most every five minutes; failures are ignored. */
  private purgeNowAndThen(now: number): void {
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    void sql`delete from ${sql.table(RATE_LIMIT_TABLE)} where expire < ${now - PURGE_AFTER_MS}`
      .execute(this.db)
      .catch(() => {});
  }
}
