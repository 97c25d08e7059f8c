import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError } from '../../domain/shared/errors';

/**
 * Rate-limit groups (spec "Limits", ARCHITECTURE §14b): requests per minute, counted per credential and group
 * (per client IP for unauthenticated calls). A route names its group in `config.rateLimitGroup`; the default
 * is `general`.
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

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The rate-limit group of the route (default `general`). */
    rateLimitGroup?: RateLimitGroup;
  }
}

const WINDOW_MS = 60_000;

const groupOf = (request: FastifyRequest): RateLimitGroup =>
  request.routeOptions.config?.rateLimitGroup ?? 'general';

/**
 * Fingerprint of the credential the request carries, or undefined (then the client IP counts). Used unless
 * the runtime provides `services.rateLimitIdentity` (the auth capability maps a JWT to its account).
 */
export const credentialFingerprint = (request: FastifyRequest): string | undefined => {
  const key = request.headers['x-api-key'];
  const auth = request.headers.authorization;
  const raw =
    typeof key === 'string' && key ? `k:${key}` : typeof auth === 'string' && auth ? `t:${auth}` : undefined;
  return raw ? createHash('sha256').update(raw).digest('base64url').slice(0, 22) : undefined;
};

/**
 * Registers `@fastify/rate-limit` for every request of `app` (call inside the `/api/v1` scope, before any other
 * hook): the spec's headers on every response, `X-RateLimit-Reset` as a Unix timestamp (seconds), and 429
 * `RATE_LIMIT_EXCEEDED` with `details.limit`, `window_seconds`, `retry_after_seconds` plus `Retry-After`.
 * Auth routes always count per client IP.
 *
 * The limiter runs as the scope's first `onRequest` hook, not as a per-route hook (the plugin's `global`
 * mode appends its hook to each route, after the scope's hooks): so it runs before authentication, a request
 * refused with 401 still carries the headers and counts (per client IP, which bounds credential guessing),
 * and so does an unknown route once the scope's not-found handler is set (see `buildApp`).
 */
export const registerRateLimit = async (app: FastifyInstance): Promise<void> => {
  await app.register(rateLimit, {
    global: false,
    hook: 'onRequest',
    timeWindow: WINDOW_MS,
    max: (request) => RATE_LIMIT_GROUPS[groupOf(request)],
    keyGenerator: async (request) => {
      const group = groupOf(request);
      const identify = app.services.rateLimitIdentity ?? credentialFingerprint;
      const identity = group === 'auth' ? undefined : await identify(request);
      return `${group}:${identity ?? `ip:${request.ip}`}`;
    },
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (request, context) => {
      const retryAfter = Math.max(1, Math.ceil(context.ttl / 1000));
      return new DomainError(
        'RATE_LIMIT_EXCEEDED',
        `rate limit of ${context.max} requests per ${WINDOW_MS / 1000} s exceeded for the ${groupOf(request)} group; retry in ${retryAfter} s`,
        {
          limit: context.max,
          window_seconds: WINDOW_MS / 1000,
          retry_after_seconds: retryAfter,
          group: groupOf(request),
        },
      );
    },
  });
  app.addHook('onRequest', app.rateLimit());
  // The plugin sends seconds-until-reset; the spec wants the Unix time of the reset.
  app.addHook('onSend', async (_request, reply, payload) => {
    const ttl = reply.getHeader('x-ratelimit-reset');
    if (ttl !== undefined && Number(ttl) < 1e9) {
      reply.header('x-ratelimit-reset', Math.floor(Date.now() / 1000) + Number(ttl));
    }
    return payload;
  });
};
