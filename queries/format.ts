import BigNumber from 'bignumber.js';

/** A numeric column as a decimal string with 8 places (STYLE: money on the wire). */
export const decimal8 = (value: string | number): string =>
  new BigNumber(value).toFixed(8, BigNumber.ROUND_DOWN);

/** A timestamp column as ISO 8601 UTC. */
export const iso = (value: Date | string): string =>
  value instanceof Date ? value.toISOString() : new Date(value).toISOString();
