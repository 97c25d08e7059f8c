import { DomainError } from '../../domain/shared/errors';

/**
 * Which database errors mean "the server or the connection to it is away" (a restart, a failover, an operator's
 * `pg_terminate_backend`, a proxy's idle timeout), as opposed to a fault of the statement. Such an error is worth
 * retrying once the server answers again, and a request that meets one answers `SERVICE_UNAVAILABLE` 503 with
 * `Retry-After` instead of `INTERNAL_ERROR` 500.
 *
 * SQLSTATEs (PostgreSQL manual, Appendix A "Error Codes"): class 08 (connection exception), 57P01
 * admin_shutdown (terminated by an administrator or a fast shutdown), 57P02 crash_shutdown, 57P03
 * cannot_connect_now (starting up or shutting down), 53300 too_many_connections. Node's socket errors and the
 * `pg` driver's own messages for a dead or closed client cover the rest.
 */
const SQLSTATE = /^(08...|57P0[123]|53300)$/;
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const DRIVER_MESSAGES = [
  'Connection terminated',
  'connection error and is not queryable',
  'Client was closed and is not queryable',
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
  'the database is unavailable',
];

/** True when `error` (or an error in its `cause` chain) says the database connection or server is away. */
export const isConnectionError = (error: unknown): boolean => {
  for (let e = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof DatabaseUnavailableError) return true;
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && (SQLSTATE.test(code) || SOCKET_CODES.has(code))) return true;
    if (typeof message === 'string' && DRIVER_MESSAGES.some((m) => message.includes(m))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
};

/**
 * Thrown when work gave up waiting for the database to come back (`retryAfterSeconds`: when a client should try
 * again). `outcomeUnknown`: a write was sent and its commit could not be confirmed either way.
 */
export class DatabaseUnavailableError extends Error {
  constructor(
    message: string,
    readonly retryAfterSeconds = 1,
    readonly outcomeUnknown = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/**
 * The venue's answer to an error that says the database is unreachable ({@link isConnectionError}), for every door
 * alike (REST, MCP): `SERVICE_UNAVAILABLE` (503) with `details.retry_after_seconds` (the error's, else 1), and for a
 * write whose outcome is unknown `details.outcome_unknown` with advice to retry with the same idempotency key.
 * Undefined for any other error.
 */
export const databaseUnavailable = (error: unknown): DomainError | undefined => {
  if (!isConnectionError(error)) return undefined;
  const e = error instanceof DatabaseUnavailableError ? error : undefined;
  return new DomainError(
    'SERVICE_UNAVAILABLE',
    e?.outcomeUnknown
      ? 'the database became unavailable while recording this request; it may or may not have been recorded: ' +
          'retry with the same Idempotency-Key, or read before repeating it'
      : 'the database is unavailable; retry shortly',
    {
      retry_after_seconds: e?.retryAfterSeconds ?? 1,
      ...(e?.outcomeUnknown ? { outcome_unknown: true } : {}),
    },
  );
};
