import BigNumber from 'bignumber.js';
import { decimalText, parseDecimal } from '../trading/decimal';
import { DomainError } from './errors';

/** Default starting balance of accounts and agents, USDT (spec "Limits"). */
export const DEFAULT_STARTING_BALANCE = '10000.00000000';

/** Largest starting balance accepted, USDT (a design bound: keeps every later sum inside `numeric(38, 8)`). */
export const MAX_STARTING_BALANCE = '1000000000000';

/**
 * Normalises a starting balance to a decimal string with 8 places (STYLE: money as decimal strings).
 * Accepts a plain decimal string in the grammar of an order's quantity and prices (`parseDecimal`: up to 8
 * significant decimal places, no exponent; `.5`, `100.`, `+250` read as an order reads them — the spec has one
 * convention for money, prices and quantities) or a finite JS number (spec: floats are accepted but lose
 * precision), read as an order's JSON numbers are read ({@link decimalText}: the nearest 8-place decimal,
 * half-even). Must be > 0 and ≤ {@link MAX_STARTING_BALANCE}; a negative one is named as not positive.
 * Throws `DomainError('VALIDATION_ERROR')` otherwise.
 */
export const normalizeStartingBalance = (value: string | number | undefined): string => {
  if (value === undefined) return DEFAULT_STARTING_BALANCE;
  const parsed = parseDecimal(typeof value === 'number' ? decimalText(value) : value);
  if (parsed === undefined || parsed.isNegative()) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'starting_balance must be a positive decimal string with at most 8 decimal places, e.g. "10000.00"',
      { field: 'starting_balance' },
    );
  }
  if (parsed.lte(0) || parsed.gt(MAX_STARTING_BALANCE)) {
    throw new DomainError(
      'VALIDATION_ERROR',
      `starting_balance must be greater than 0 and at most ${MAX_STARTING_BALANCE}`,
      { field: 'starting_balance' },
    );
  }
  return parsed.toFixed(8, BigNumber.ROUND_DOWN);
};
