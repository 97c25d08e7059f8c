import { BinanceError, CODES, invalidParam, missingParam } from './errors';

/**
 * The parameters of a Binance request: its query string and its `application/x-www-form-urlencoded` body, as
 * Binance reads them (Spot API "General API Information": parameters may be sent in either, or both). The raw texts
 * are kept for the signature (HMAC of the query string followed by the body).
 */
export interface BinanceParams {
  /** Every parameter by name (a name sent twice keeps its last value). */
  readonly values: ReadonlyMap<string, string>;
  /** The query string as sent (without `?`). */
  readonly rawQuery: string;
  /** The form body as sent ('' without one). */
  readonly rawBody: string;
}

/** Reads the parameters of a request from its raw URL and raw form body. */
export const readParams = (url: string, rawBody: string): BinanceParams => {
  const q = url.indexOf('?');
  const rawQuery = q < 0 ? '' : url.slice(q + 1);
  const values = new Map<string, string>();
  for (const text of [rawQuery, rawBody]) {
    for (const [name, value] of new URLSearchParams(text)) values.set(name, value);
  }
  return { values, rawQuery, rawBody };
};

/** A parameter's value, undefined when absent or empty. */
export const optional = (p: BinanceParams, name: string): string | undefined => {
  const v = p.values.get(name);
  return v === undefined || v === '' ? undefined : v;
};

/** A mandatory parameter (-1102 when absent or empty). */
export const required = (p: BinanceParams, name: string): string => {
  const v = optional(p, name);
  if (v === undefined) throw missingParam(name);
  return v;
};

const DECIMAL = /^([0-9]{1,20})(\.[0-9]{1,20})?$/;

/**
 * A decimal parameter (`quantity`, `price`, `stopPrice`) as Binance accepts it: digits with an optional fraction,
 * else -1100 with Binance's message naming the legal pattern. Undefined when absent.
 */
export const decimalParam = (p: BinanceParams, name: string): string | undefined => {
  const v = optional(p, name);
  if (v === undefined) return undefined;
  if (!DECIMAL.test(v)) {
    throw new BinanceError(
      CODES.ILLEGAL_CHARS,
      `Illegal characters found in parameter '${name}'; legal range is '^([0-9]{1,20})(\\.[0-9]{1,20})?$'.`,
    );
  }
  return v;
};

/** An integer parameter within bounds (-1100 when not an integer, -1130 outside them); `fallback` when absent. */
export const intParam = <F extends number | undefined>(
  p: BinanceParams,
  name: string,
  bounds: { min: number; max: number },
  fallback: F,
): number | F => {
  const v = optional(p, name);
  if (v === undefined) return fallback;
  if (!/^-?\d{1,19}$/.test(v)) {
    throw new BinanceError(
      CODES.ILLEGAL_CHARS,
      `Illegal characters found in parameter '${name}'; legal range is '^-?[0-9]{1,19}$'.`,
    );
  }
  const n = Number(v);
  if (n < bounds.min || n > bounds.max) {
    throw invalidParam(name, `must be from ${bounds.min} to ${bounds.max}`);
  }
  return n;
};

/**
 * Binance's optional `startTime`/`endTime` (epoch ms, each 0 to `Number.MAX_SAFE_INTEGER`, -1100/-1130 as
 * {@link intParam}), read in that order; undefined where absent. Whether start may follow end is the endpoint's.
 */
export const timeWindowParams = (p: BinanceParams): { start?: number; end?: number } => ({
  start: intParam(p, 'startTime', { min: 0, max: Number.MAX_SAFE_INTEGER }, undefined),
  end: intParam(p, 'endTime', { min: 0, max: Number.MAX_SAFE_INTEGER }, undefined),
});

/**
 * The `symbols` parameter: a JSON array of symbols (`["BTCUSDT","ETHUSDT"]`, as Binance takes it), upper-cased;
 * undefined when absent; -1100 when it is not such an array.
 */
export const symbolsParam = (p: BinanceParams): string[] | undefined => {
  const v = optional(p, 'symbols');
  if (v === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length === 0 ||
    !parsed.every((s) => typeof s === 'string' && s !== '')
  ) {
    throw new BinanceError(
      CODES.ILLEGAL_CHARS,
      `Illegal characters found in parameter 'symbols'; legal range is '^\\[("[A-Z0-9-_.]{1,20}"(,"[A-Z0-9-_.]{1,20}"){0,}){0,1}\\]$'.`,
    );
  }
  return (parsed as string[]).map((s) => s.trim().toUpperCase());
};
