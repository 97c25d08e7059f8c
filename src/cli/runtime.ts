import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config';
import { createRuntime, type Runtime, type RuntimeOptions } from '../runtime';

/**
 * The runtime of a one-off command that reads the venue (audit, events, projections): no market data (nothing it
 * does needs prices; loading them cost seconds and logged a feed warning), no projection loops, no matching
 * engine. Such a command never issues a token nor decrypts an agent key, so when `JWT_SECRET`/`ENCRYPTION_KEY`
 * are not configured it gets throw-away keys instead of reading (or creating) `DATA_DIR/secrets.json` and
 * warning about shared keys, which concerns servers only. Its subscriptions get whole events (`events tail
 * --follow` prints them).
 */
export const openReadingRuntime = (
  config: Config,
  logger: Logger,
  options: RuntimeOptions = {},
): Promise<Runtime> =>
  createRuntime(
    {
      ...config,
      JWT_SECRET: config.JWT_SECRET ?? randomBytes(48).toString('base64url'),
      ENCRYPTION_KEY: config.ENCRYPTION_KEY ?? randomBytes(32).toString('hex'),
    },
    logger,
    { runProjections: false, market: false, equitySnapshots: false, elideSubscriptions: false, ...options },
  );
