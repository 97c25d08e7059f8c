import type { Logger } from 'pino';
import { backoffDelayMs } from '../../domain/shared/backoff';
import { isConnectionError } from '../db/connection-errors';

/**
 * SQLSTATEs of a start-up step that lost a race with another process starting on the same fresh database, or met
 * a server that is still starting (PostgreSQL manual, Appendix A): unique_violation, duplicate_table,
 * duplicate_object, duplicate_schema, duplicate_function, deadlock_detected, serialization_failure; and
 * internal errors saying "tuple concurrently updated" (two DDL statements on one catalog row).
 */
const RACE_SQLSTATES = new Set(['23505', '42P07', '42710', '42P06', '42723', '40P01', '40001']);

/** True for an error worth starting over for: a lost start-up race or the database being away. */
export const isRetryableStartupError = (error: unknown): boolean => {
  if (isConnectionError(error)) return true;
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && RACE_SQLSTATES.has(code)) return true;
  return typeof message === 'string' && message.includes('tuple concurrently updated');
};

/**
 * Runs a start-up step (building the runtime: migrations, projection generations, market data) and starts it over
 * when it fails with {@link isRetryableStartupError}, up to `attempts` times with a growing, jittered pause
 * (0.2 s doubling to 5 s: about half a minute in all), so processes started together on a fresh database, or
 * before the database is up, all come up (issue 16, item 3). The step must clean up after itself when it throws
 * (`createRuntime` does). Throws the last error, or at once any other error.
 */
export const retryStartup = async <T>(
  step: () => Promise<T>,
  logger: Logger,
  options: { attempts?: number } = {},
): Promise<T> => {
  const attempts = options.attempts ?? 10;
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= attempts || !isRetryableStartupError(error)) throw error;
      const delay = backoffDelayMs(attempt - 1, { baseMs: 200, maxMs: 5_000, jitter: 0.25 });
      logger.warn(
        { err: error, attempt, retry_in_ms: Math.round(delay) },
        'start-up step failed (another process starting, or the database away): starting over',
      );
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
};
