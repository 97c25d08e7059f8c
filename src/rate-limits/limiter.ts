import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import {
  RATE_LIMIT_GROUPS,
  RATE_LIMIT_WINDOW_MS,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimitGroup,
} from '../application/rate-limits';
import { type CountedRequest, PgRequestCounters } from './pg-counters';

/**
 * The venue's rate limiter, one fixed 60 s window per key and group (a window starts at the key's first request):
 * - `memory`: counters in this process (`rate-limiter-flexible`'s memory store; embedded PGlite: one process per
 *   database);
 * - `postgres`: counters in the `rate_limits` table of the venue's PostgreSQL server, shared by every process, so N
 *   API processes allow each caller its limit once, not N times (issue 16, item 4). The requests that arrive
 *   together are counted by one statement (`PgRequestCounters`; issue 23). While the database is away the counting
 *   falls back to this process's memory instead of refusing or failing requests.
 *
 * Throws nothing itself; `consume` never rejects for a refusal (see `allowed`).
 */
export const createRateLimiter = (options: {
  store: 'memory' | 'postgres';
  db?: Kysely<any>;
  logger?: Logger;
}): RateLimiter => {
  const seconds = RATE_LIMIT_WINDOW_MS / 1000;
  const memory = new Map<RateLimitGroup, RateLimiterMemory>();
  for (const group of Object.keys(RATE_LIMIT_GROUPS) as RateLimitGroup[]) {
    memory.set(
      group,
      new RateLimiterMemory({ points: RATE_LIMIT_GROUPS[group], duration: seconds, keyPrefix: group }),
    );
  }
  const shared =
    options.store === 'postgres' && options.db
      ? new PgRequestCounters(options.db, RATE_LIMIT_WINDOW_MS)
      : undefined;
  /** The decision for a request that made `used` requests of `group` in a window ending in `msLeft` ms. */
  const decide = (group: RateLimitGroup, used: number, msLeft: number): RateLimitDecision => {
    const limit = RATE_LIMIT_GROUPS[group];
    const wait = Math.max(0, msLeft);
    const allowed = used <= limit;
    return {
      group,
      allowed,
      limit,
      remaining: allowed ? limit - used : 0,
      resetAt: Date.now() + wait,
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil(wait / 1000)),
    };
  };
  const fromMemory = async (key: string, group: RateLimitGroup): Promise<RateLimitDecision> => {
    let res: RateLimiterRes;
    try {
      res = await memory.get(group)!.consume(key, 1);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      res = error;
    }
    return decide(group, res.consumedPoints, res.msBeforeNext);
  };
  let lastWarning = 0;
  return {
    store: shared ? 'postgres' : 'memory',
    async consume(key, group) {
      if (!shared) return fromMemory(key, group);
      let counted: CountedRequest;
      try {
        counted = await shared.count(`${group}:${key}`);
      } catch (error) {
        // Once a minute at most: during an outage every request lands here.
        if (Date.now() - lastWarning > 60_000) {
          lastWarning = Date.now();
          options.logger?.warn({ err: error }, 'rate limits counted in memory: the shared counters failed');
        }
        return fromMemory(key, group);
      }
      return decide(group, counted.points, counted.expire - Date.now());
    },
    async usage(key, group) {
      const limit = RATE_LIMIT_GROUPS[group];
      if (shared) {
        const row = await shared.used(`${group}:${key}`);
        return { group, used: Math.min(row?.points ?? 0, limit), limit };
      }
      const res = await memory.get(group)!.get(key);
      // A window that has ended counts nothing (the store may still hold its row until it is purged).
      const used = res && res.msBeforeNext > 0 ? Math.min(res.consumedPoints, limit) : 0;
      return { group, used, limit };
    },
  };
};
