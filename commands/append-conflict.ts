import { WrongExpectedRevisionError } from '../ports/event-store';

/**
 * What a command handler that retries a decision on a fresh load does with an `error` of its append, attempt
 * `attempt` of `maxAttempts`: anything but a `WrongExpectedRevisionError` (another process appended first) is
 * rethrown; on a conflict the stale cached stream is dropped (`evict`), then the error is rethrown when the
 * attempts are spent, and otherwise the caller loads again and retries.
 */
export const onAppendConflict = (
  error: unknown,
  attempt: number,
  maxAttempts: number,
  evict: () => void,
): void => {
  if (!(error instanceof WrongExpectedRevisionError)) throw error;
  evict();
  if (attempt >= maxAttempts) throw error;
};
