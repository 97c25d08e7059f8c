import { backoffDelayMs } from '../../domain/shared/backoff';
/** The retry schedule's settings (`WEBHOOKS_RETRY_BASE_MS`, `WEBHOOKS_RETRY_MAX_MS`, `WEBHOOKS_MAX_ATTEMPTS`). */
export interface RetrySchedule {
  baseMs: number;
  maxMs: number;
  maxAttempts: number;
}

/**
 * When to try a delivery again after its `attempts`-th failed attempt (1-based), or undefined when it is out of
 * attempts: `baseMs × 2^(attempts − 1)` after the failure, at most `maxMs` (docs/webhooks.md, "Retries"). No jitter:
 * deliveries to one receiver are already spread by their events, and a fixed schedule is what receivers and tests
 * can predict. The time is stored with the delivery, so the schedule survives restarts.
 */
export const nextAttemptAt = (
  schedule: RetrySchedule,
  attempts: number,
  failedAt: number,
): Date | undefined => {
  if (attempts >= schedule.maxAttempts) return undefined;
  return new Date(failedAt + backoffDelayMs(attempts - 1, schedule));
};
