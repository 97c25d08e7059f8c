import type { FastifyInstance } from 'fastify';
import { createBody as createBacktestBody } from '../contract/backtest';
import { createBattleBody, updateBattleBody } from '../contract/battle';

/**
 * Request bodies larger than `BODY_LIMIT_BYTES` (default 16 KiB: every other body of the API is a few hundred
 * bytes) that are real: a backtest's or a historical battle's configuration naming up to 1,000 pairs (about
 * 35 KB). Keyed by the route's body schema, so a door reusing the schema gets the same limit.
 */
const LARGE_BODIES = new Map<unknown, number>([
  [createBacktestBody, 64 * 1024],
  [createBattleBody, 64 * 1024],
  [updateBattleBody, 64 * 1024],
]);

/**
 * Gives each route registered after it on `app` its body limit (issue 16, item 5): the larger one of
 * {@link LARGE_BODIES} for the routes whose body schema is listed there (never below `BODY_LIMIT_BYTES`), the
 * server's default otherwise. A route that sets `bodyLimit` itself keeps it.
 */
export const registerBodyLimits = (app: FastifyInstance, defaultLimit: number): void => {
  app.addHook('onRoute', (route) => {
    const large = LARGE_BODIES.get(route.schema?.body);
    if (route.bodyLimit === undefined && large !== undefined) route.bodyLimit = Math.max(large, defaultLimit);
  });
};
