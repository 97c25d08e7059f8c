/**
 * The one error type of the domain. It carries the spec's error `code`, the HTTP status the spec gives that
 * code, and optional `details`. Deciders throw it; the HTTP layer turns it into the error envelope
 * (`{ error: { code, message, details } }`, spec "Errors") and never invents codes of its own. A
 * `VALIDATION_ERROR` names its field as `details.field`; the HTTP layer turns that into the wire's one shape,
 * `details.issues[]` of `{field, location, message}` (`src/http/errors.ts`, `withIssues`).
 */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>, status?: number) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.status = status ?? ERROR_STATUS[code];
    this.details = details;
  }
}

/** Every error code of the spec's Errors table plus the design's additions (ARCHITECTURE §14b). */
export const ERROR_STATUS = {
  INVALID_API_KEY: 401,
  INVALID_TOKEN: 401,
  ACCOUNT_SUSPENDED: 403,
  PERMISSION_DENIED: 403,
  ACCOUNT_NOT_FOUND: 404,
  INSUFFICIENT_BALANCE: 400,
  INVALID_SYMBOL: 400,
  INVALID_QUANTITY: 400,
  POSITION_LIMIT_EXCEEDED: 400,
  ORDER_REJECTED: 400,
  DAILY_LOSS_LIMIT: 403,
  ORDER_NOT_FOUND: 404,
  ORDER_NOT_CANCELLABLE: 409,
  PRICE_NOT_AVAILABLE: 503,
  VALIDATION_ERROR: 422,
  DUPLICATE_ACCOUNT: 409,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  NOT_FOUND: 404,
  PAYLOAD_TOO_LARGE: 413,
  CONFLICT: 409,
  BACKTEST_NOT_FOUND: 404,
  BACKTEST_INVALID_STATE: 409,
  BACKTEST_NO_DATA: 400,
  BATTLE_NOT_FOUND: 404,
  BATTLE_INVALID_STATE: 409,
  SERVICE_UNAVAILABLE: 503,
} as const;

/** A code the API may answer with. */
export type ErrorCode = keyof typeof ERROR_STATUS;

/** True when `value` is a {@link DomainError}. */
export const isDomainError = (value: unknown): value is DomainError => value instanceof DomainError;

/**
 * Runs `fn` for a part of a request sent nested under `prefix` (a dotted path such as `override_config`): a
 * `VALIDATION_ERROR` it throws naming `details.field` comes out naming `prefix.field`, and a message that starts
 * with the field's name starts with the prefixed name (`starting_balance must be …` → `override_config.starting_balance
 * must be …`), as the schema's own issues of that part are named. Other errors (and a validation error without a
 * field) pass unchanged. Synchronous or async `fn`; returns what it returns.
 */
export const nestedUnder = <T>(prefix: string, fn: () => T): T => {
  const rename = (error: unknown): never => {
    const field = isDomainError(error) ? error.details?.['field'] : undefined;
    if (!isDomainError(error) || error.code !== 'VALIDATION_ERROR' || typeof field !== 'string' || !field) {
      throw error;
    }
    const named = `${prefix}.${field}`;
    const message = error.message.startsWith(`${field} `)
      ? `${named}${error.message.slice(field.length)}`
      : error.message;
    throw new DomainError(error.code, message, { ...error.details, field: named }, error.status);
  };
  let result: T;
  try {
    result = fn();
  } catch (error) {
    return rename(error);
  }
  return (result instanceof Promise ? result.catch(rename) : result) as T;
};
