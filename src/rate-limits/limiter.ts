import { CompiledQuery, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import {
  type IRateLimiterStoreOptions,
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import {
  RATE_LIMIT_GROUPS,
  RATE_LIMIT_WINDOW_MS,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitGroup,
} from '../application/rate-limits';

/** The table of the shared counters (migration 0007): one row per key and group, expiring with its window. */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * The venue's rate limiter on `rate-limiter-flexible`, one fixed 60 s window per key and group:
 * - `memory`: counters in this process (embedded PGlite: one process per database);
 * - `postgres`: counters in the `rate_limits` table of the venue's PostgreSQL server, shared by every process, so N
 *   API processes allow each caller its limit once, not N times (issue 16, item 4). Each request costs one upsert
 *   (`RateLimiterPostgres`). While the database is away the counting falls back to this process's memory
 *   (`insuranceLimiter`) instead of refusing or failing requests.
 */
export const createRateLimiter = (options: {
  store: 'memory' | 'postgres';
  db?: Kysely<any>;
  logger?: Logger;
}): RateLimiter => {
  const seconds = RATE_LIMIT_WINDOW_MS / 1000;
  const limiters = new Map<RateLimitGroup, RateLimiterAbstract>();
  for (const group of Object.keys(RATE_LIMIT_GROUPS) as RateLimitGroup[]) {
    const base = { points: RATE_LIMIT_GROUPS[group], duration: seconds, keyPrefix: group };
    const memory = new RateLimiterMemory(base);
    if (options.store === 'memory' || !options.db) {
      limiters.set(group, memory);
      continue;
    }
    const db = options.db;
    // `RateLimiterPostgres` speaks to a `pg` client (`query({ text, values })`); this one runs its statements
    // through the venue's kysely instance, so they share its pool and its waiting through a short outage.
    const client = {
      query: (q: { text: string; values?: unknown[] }) =>
        db.executeQuery(CompiledQuery.raw(q.text, q.values ?? [])),
    };
    const store: IRateLimiterStoreOptions = {
      ...base,
      storeClient: client,
      storeType: 'client',
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      insuranceLimiter: memory,
    };
    limiters.set(group, new RateLimiterPostgres(store));
  }
  const decide = (group: RateLimitGroup, res: RateLimiterRes, allowed: boolean): RateLimitDecision => {
    const wait = Math.max(0, res.msBeforeNext);
    return {
      group,
      allowed,
      limit: RATE_LIMIT_GROUPS[group],
      remaining: allowed ? res.remainingPoints : 0,
      resetAt: Date.now() + wait,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(wait / 1000)),
    };
  };
  return {
    store: options.store === 'postgres' && options.db ? 'postgres' : 'memory',
    async consume(key, group) {
      const limiter = limiters.get(group)!;
      try {
        return decide(group, await limiter.consume(key, 1), true);
      } catch (error) {
        if (error instanceof RateLimiterRes) return decide(group, error, false);
        throw error;
      }
    },
    async usage(key, group) {
      const res = await limiters.get(group)!.get(key);
      // A window that has ended counts nothing (the store may still hold its row until it is purged).
      const used = res && res.msBeforeNext > 0 ? Math.min(res.consumedPoints, RATE_LIMIT_GROUPS[group]) : 0;
      return { group, used, limit: RATE_LIMIT_GROUPS[group] };
    },
  };
};
