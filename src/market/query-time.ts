import { parseIsoTime } from '../../domain/market/time';

/**
 * A time in a query string (`/market/candles`, the sandbox candles): ISO 8601 as `parseIsoTime` reads it (UTC
 * without a zone; days that do not exist refused), or epoch milliseconds (1 to 16 digits). `undefined` when it
 * is neither.
 */
export const parseQueryTime = (raw: string): number | undefined =>
  /^\d{1,16}$/.test(raw) ? Number(raw) : parseIsoTime(raw);
