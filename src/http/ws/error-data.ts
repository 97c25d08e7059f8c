import type { DomainError } from '../../../domain/shared/errors';

/**
 * A `DomainError` as a socket's `system` `error` message carries it: `{code, message, details?}` (the socket's own
 * answer, `failSubscription`, a channel's later push each add their `action`/`channel`/target fields).
 */
export const errorData = (e: DomainError) => ({
  code: e.code,
  message: e.message,
  ...(e.details ? { details: e.details } : {}),
});
