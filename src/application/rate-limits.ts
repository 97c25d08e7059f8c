import { DomainError } from '../../domain/shared/errors';
import { ownerIdOf, type Principal } from '../auth/principal';
import type { Services } from '../services';

/**
 * Rate limits, one budget per wallet owner for every door (spec "Limits"; ARCHITECTURE §12, §14b; issues 16 and
 * 17): requests per minute by group. An authenticated caller is counted as its wallet's owner — an agent (its key,
 * or the account's JWT or key with `X-Agent-Id`) or the account — whichever credential and whichever door (REST,
 * MCP, the Binance API) it uses, so switching credentials or doors gives no fresh budget; agents keep budgets of
 * their own. Unauthenticated calls count per client IP. With a PostgreSQL server the counters are shared by every
 * process of the venue (`src/rate-limits/limiter.ts`).
 */
export const RATE_LIMIT_GROUPS = {
  general: 600,
  orders: 100,
  market: 1200,
  analytics: 120,
  auth: 60,
  management: 600,
  backtest: 6000,
} as const;

/** A rate-limit group name. */
export type RateLimitGroup = keyof typeof RATE_LIMIT_GROUPS;

/** The window every group counts over (ms). */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/** What the limiter decided for one request. */
export interface RateLimitDecision {
  group: RateLimitGroup;
  allowed: boolean;
  /** Requests allowed per window. */
  limit: number;
  /** Requests left in the current window (0 when refused). */
  remaining: number;
  /** When the current window ends (ms since epoch). */
  resetAt: number;
  /** Seconds until a refused request may be retried (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
}

/** What a key has used of a group's budget in the current window. */
export interface RateLimitUsage {
  group: RateLimitGroup;
  /** Requests counted in the current window. */
  used: number;
  /** Requests allowed per window. */
  limit: number;
}

/** Counts requests per key and group (`src/rate-limits/limiter.ts`). */
export interface RateLimiter {
  /** Counts one request of `key` in `group` and decides; never throws for a refusal (see `allowed`). */
  consume(key: string, group: RateLimitGroup): Promise<RateLimitDecision>;
  /** What `key` has used of `group` in the current window, without counting anything. */
  usage(key: string, group: RateLimitGroup): Promise<RateLimitUsage>;
  /** Which store holds the counters: this process's memory, or the shared PostgreSQL table. */
  readonly store: 'memory' | 'postgres';
}

declare module '../services' {
  interface Services {
    /** The one rate limiter every door counts its requests with. */
    rateLimits?: RateLimiter;
  }
}

/** The key a caller is counted under: `owner:<agent or account id>`, or `ip:<address>` without a caller. */
export const rateLimitKeyOf = (caller: Principal | null | undefined, ip: string): string =>
  caller ? `owner:${ownerIdOf(caller)}` : `ip:${ip}`;

/** The limiter of a venue without one: every request allowed, nothing counted. */
const UNLIMITED: Pick<RateLimiter, 'consume' | 'usage'> = {
  consume: (_key, group) =>
    Promise.resolve({
      group,
      allowed: true,
      limit: RATE_LIMIT_GROUPS[group],
      remaining: RATE_LIMIT_GROUPS[group],
      resetAt: Date.now() + RATE_LIMIT_WINDOW_MS,
      retryAfterSeconds: 0,
    }),
  usage: (_key, group) => Promise.resolve({ group, used: 0, limit: RATE_LIMIT_GROUPS[group] }),
};

/** The venue's limiter, or {@link UNLIMITED} when it has none. */
const limiterOf = (services: Pick<Services, 'rateLimits'>): Pick<RateLimiter, 'consume' | 'usage'> =>
  services.rateLimits ?? UNLIMITED;

/** Counts one request of `key` in `group` with the venue's limiter (everything is allowed without one). */
export const consumeRateLimit = (
  services: Pick<Services, 'rateLimits'>,
  key: string,
  group: RateLimitGroup,
): Promise<RateLimitDecision> => limiterOf(services).consume(key, group);

/** What `key` has used of `group` this window, without counting (nothing used without a limiter). */
export const rateLimitUsage = (
  services: Pick<Services, 'rateLimits'>,
  key: string,
  group: RateLimitGroup,
): Promise<RateLimitUsage> => limiterOf(services).usage(key, group);

/**
 * The refusal of a request over its group's limit: `RATE_LIMIT_EXCEEDED` 429 with `details.limit`,
 * `window_seconds`, `retry_after_seconds` (spec "Errors") and the group.
 */
export const rateLimitExceeded = (d: RateLimitDecision): DomainError =>
  new DomainError(
    'RATE_LIMIT_EXCEEDED',
    `rate limit of ${d.limit} requests per ${RATE_LIMIT_WINDOW_MS / 1000} s exceeded for the ${d.group} group; retry in ${d.retryAfterSeconds} s`,
    {
      limit: d.limit,
      window_seconds: RATE_LIMIT_WINDOW_MS / 1000,
      retry_after_seconds: d.retryAfterSeconds,
      group: d.group,
    },
  );
