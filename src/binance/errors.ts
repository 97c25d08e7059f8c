import { DomainError, type ErrorCode } from '../../domain/shared/errors';
import { databaseUnavailable } from '../db/connection-errors';

/**
 * Binance's error shape (Spot API "Error codes": `{code, msg}` with a negative code) and the HTTP status it comes
 * with: 4XX for a request the client must change (400 mostly, 401 for API-key problems), 429 over a rate limit
 * (with `Retry-After`), 5XX for the server's side.
 */
export class BinanceError extends Error {
  constructor(
    readonly code: number,
    msg: string,
    readonly status = 400,
    /** Seconds for `Retry-After` (429). */
    readonly retryAfter?: number,
  ) {
    super(msg);
    this.name = 'BinanceError';
  }
}

/** The codes of Binance's Spot API this door answers with (names as in Binance's documentation). */
export const CODES = {
  UNKNOWN: -1000,
  UNAUTHORIZED: -1002,
  TIMEOUT: -1007,
  TOO_MANY_REQUESTS: -1003,
  TOO_MANY_ORDERS: -1015,
  UNSUPPORTED_OPERATION: -1020,
  INVALID_TIMESTAMP: -1021,
  INVALID_SIGNATURE: -1022,
  ILLEGAL_CHARS: -1100,
  MANDATORY_PARAM_EMPTY_OR_MALFORMED: -1102,
  PARAM_NOT_REQUIRED: -1106,
  BAD_PRECISION: -1111,
  INVALID_ORDER_TYPE: -1116,
  INVALID_SIDE: -1117,
  INVALID_INTERVAL: -1120,
  INVALID_SYMBOL: -1121,
  INVALID_PARAMETER: -1130,
  RECV_WINDOW_TOO_LARGE: -1131,
  INVALID_TIME_IN_FORCE: -1115,
  INVALID_LISTEN_KEY: -1125,
  FILTER_FAILURE: -1013,
  NEW_ORDER_REJECTED: -2010,
  CANCEL_REJECTED: -2011,
  NO_SUCH_ORDER: -2013,
  BAD_API_KEY_FMT: -2014,
  REJECTED_MBX_KEY: -2015,
} as const;

/** A mandatory parameter that was not sent (Binance -1102, the message Binance uses). */
export const missingParam = (name: string): BinanceError =>
  new BinanceError(
    CODES.MANDATORY_PARAM_EMPTY_OR_MALFORMED,
    `Mandatory parameter '${name}' was not sent, was empty/null, or malformed.`,
  );

/** A parameter whose value is not valid (Binance -1130 / -1100), naming it and why. */
export const invalidParam = (name: string, why: string): BinanceError =>
  new BinanceError(CODES.INVALID_PARAMETER, `Data sent for parameter '${name}' is not valid: ${why}`);

/** Where a domain error happened: a cancel's unknown order is -2011, a query's -2013, a new order's refusal -2010. */
export type ErrorContext = 'order' | 'cancel' | 'query' | 'read';

/** The risk rule a rejection names (`details.rule`), for the message. */
const ruleOf = (e: DomainError): string | undefined => {
  const rule = e.details?.['rule'];
  return typeof rule === 'string' ? rule : undefined;
};

/** The Binance filter a failed step of the risk chain corresponds to (docs/trading-rules.md). */
const FILTER_OF: Partial<Record<string, string>> = {
  symbol_and_quantity: 'LOT_SIZE',
  min_notional: 'NOTIONAL',
};

/**
 * The Binance error of a venue error (the spec's codes, `domain/shared/errors.ts`), so a Binance client handles it
 * as it would Binance's: an unknown or inactive pair is -1121; a quantity the pair's filters refuse -1013
 * `Filter failure: <filter>`; every other rejection of the risk chain -2010 with the rule in the message
 * (insufficient balance in Binance's exact words, which clients match); an unknown order -2011 on a cancel (also one that is no longer open,
 * as Binance) and -2013 on a query; credentials -2015 (401); a rate limit -1003 / -1015 (429 with `Retry-After`);
 * an idempotency key reused with another order or a client order id of an open order -2010 `Duplicate order sent.`; no price yet or the service away
 * 503 -1000; anything else -1000 500.
 */
export const fromDomainError = (e: DomainError, context: ErrorContext): BinanceError => {
  const code: ErrorCode = e.code;
  const rule = ruleOf(e);
  const why = `${e.message}${rule ? ` (rule: ${rule})` : ''}`;
  switch (code) {
    case 'INVALID_SYMBOL':
      return new BinanceError(CODES.INVALID_SYMBOL, `Invalid symbol. ${e.message}`);
    case 'INVALID_QUANTITY': {
      const filter = filterFromDetails(e) ?? (rule && FILTER_OF[rule]) ?? 'LOT_SIZE';
      return new BinanceError(CODES.FILTER_FAILURE, `Filter failure: ${filter}. ${why}`);
    }
    case 'INSUFFICIENT_BALANCE':
      // Binance's exact words: ccxt turns exactly this message into InsufficientFunds (Freqtrade relies on it).
      return new BinanceError(
        CODES.NEW_ORDER_REJECTED,
        'Account has insufficient balance for requested action.',
      );
    case 'ORDER_REJECTED':
      if (rule === 'min_notional') {
        return new BinanceError(CODES.FILTER_FAILURE, `Filter failure: NOTIONAL. ${why}`);
      }
      return new BinanceError(CODES.NEW_ORDER_REJECTED, `Order rejected: ${why}`);
    case 'POSITION_LIMIT_EXCEEDED':
    case 'DAILY_LOSS_LIMIT':
      return new BinanceError(CODES.NEW_ORDER_REJECTED, `Order rejected: ${why}`);
    case 'PRICE_NOT_AVAILABLE':
      // The service's side, on an order too: nothing is recorded (it is no rejection of the risk chain) and the same
      // order may succeed once a price arrives, as /api/v1's 503 says; -2010 would tell ccxt InvalidOrder, final.
      return new BinanceError(CODES.UNKNOWN, e.message, 503);
    case 'ORDER_NOT_FOUND':
    case 'ORDER_NOT_CANCELLABLE':
      // Binance's exact words, which ccxt turns into OrderNotFound.
      return context === 'cancel'
        ? new BinanceError(CODES.CANCEL_REJECTED, 'Unknown order sent.')
        : new BinanceError(CODES.NO_SUCH_ORDER, 'Order does not exist.');
    case 'CONFLICT':
      return new BinanceError(CODES.NEW_ORDER_REJECTED, `Duplicate order sent. ${e.message}`);
    case 'INVALID_API_KEY':
    case 'INVALID_TOKEN':
    case 'ACCOUNT_SUSPENDED':
    case 'ACCOUNT_NOT_FOUND':
      return new BinanceError(
        CODES.REJECTED_MBX_KEY,
        `Invalid API-key, IP, or permissions for action. ${e.message}`,
        401,
      );
    case 'PERMISSION_DENIED':
      return context === 'order'
        ? new BinanceError(CODES.NEW_ORDER_REJECTED, `Order rejected: ${e.message}`)
        : new BinanceError(
            CODES.REJECTED_MBX_KEY,
            `Invalid API-key, IP, or permissions for action. ${e.message}`,
            401,
          );
    case 'RATE_LIMIT_EXCEEDED': {
      const retry = Number(e.details?.['retry_after_seconds'] ?? 1);
      return e.details?.['group'] === 'orders'
        ? new BinanceError(CODES.TOO_MANY_ORDERS, `Too many new orders; ${e.message}`, 429, retry)
        : new BinanceError(CODES.TOO_MANY_REQUESTS, `Too many requests; ${e.message}`, 429, retry);
    }
    case 'VALIDATION_ERROR': {
      // A price or a quantity the ledger refuses (more than 8 places, not below 10^15, not above 0) is outside the
      // filters exchangeInfo states, which Binance answers -1013 (ccxt: InvalidOrder), not -1100 (BadRequest).
      const filter = filterOfField(e);
      if (filter) return new BinanceError(CODES.FILTER_FAILURE, `Filter failure: ${filter}. ${e.message}`);
      return new BinanceError(CODES.ILLEGAL_CHARS, `Illegal characters found in a parameter. ${e.message}`);
    }
    case 'PAYLOAD_TOO_LARGE':
      return new BinanceError(CODES.ILLEGAL_CHARS, `Illegal characters found in a parameter. ${e.message}`);
    case 'SERVICE_UNAVAILABLE':
      // A write the database may or may not have recorded: Binance's "execution status unknown". This door takes no
      // idempotency key, so the advice is to look the order up by its client order id before sending it again.
      return e.details?.['outcome_unknown'] === true
        ? new BinanceError(
            CODES.TIMEOUT,
            'Timeout waiting for response from backend server. Send status unknown; execution status unknown. ' +
              'Look the order up (GET /api/v3/order with origClientOrderId) before sending it again.',
            503,
          )
        : new BinanceError(CODES.UNKNOWN, e.message, 503);
    case 'NOT_FOUND':
      return e.details?.['listen_key'] !== undefined
        ? new BinanceError(CODES.INVALID_LISTEN_KEY, 'This listenKey does not exist.')
        : new BinanceError(CODES.UNKNOWN, e.message);
    default:
      return new BinanceError(
        CODES.UNKNOWN,
        e.status >= 500 ? 'Internal error.' : e.message,
        e.status >= 500 ? 500 : 400,
      );
  }
};

/**
 * The filter of an order's field the domain names in a `VALIDATION_ERROR`'s `details.field` (domain/wallet/decide.ts:
 * `price`, `trigger_price`, an OCO leg's `take_profit.price`, `stop_loss.trigger_price`, …; `quantity`):
 * `PRICE_FILTER` for a price or a stop price, `LOT_SIZE` for a quantity, none for any other field.
 */
const filterOfField = (e: DomainError): string | undefined => {
  const field = e.details?.['field'];
  if (typeof field !== 'string') return undefined;
  const leaf = field.slice(field.lastIndexOf('.') + 1);
  return leaf === 'price' || leaf === 'trigger_price'
    ? 'PRICE_FILTER'
    : leaf === 'quantity'
      ? 'LOT_SIZE'
      : undefined;
};

/** A quantity error's filter from its message: the notional is NOTIONAL (no rule of the domain is a price's tick). */
const filterFromDetails = (e: DomainError): string | undefined =>
  e.message.toLowerCase().includes('notional') ? 'NOTIONAL' : undefined;

/**
 * Any error thrown in the door as a Binance error: an unreachable database is -1000 503 (as REST's
 * `SERVICE_UNAVAILABLE`); any other non-domain, non-Binance error -1000 500, no internals.
 */
export const toBinanceError = (error: unknown, context: ErrorContext = 'read'): BinanceError => {
  if (error instanceof BinanceError) return error;
  if (error instanceof DomainError) return fromDomainError(error, context);
  // The database away: the venue's SERVICE_UNAVAILABLE (503, retried), as REST and MCP answer it.
  const unavailable = databaseUnavailable(error);
  if (unavailable) return fromDomainError(unavailable, context);
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new BinanceError(
      CODES.ILLEGAL_CHARS,
      `Malformed request: ${(error as Error).message}`,
      status === 413 ? 413 : 400,
    );
  }
  return new BinanceError(
    CODES.UNKNOWN,
    'Internal error; unable to process your request. Please try again.',
    500,
  );
};
