import { describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/shared/errors';
import { normalizeStartingBalance } from '../../domain/shared/starting-balance';
import { decimalText, parseDecimal } from '../../domain/trading/decimal';

const messageOf = (value: string | number): string => {
  try {
    normalizeStartingBalance(value);
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe('VALIDATION_ERROR');
    return (error as DomainError).message;
  }
  throw new Error(`${value} was accepted`);
};

describe('starting balance', () => {
  it('defaults to 10000 and normalises to 8 places', () => {
    expect(normalizeStartingBalance(undefined)).toBe('10000.00000000');
    expect(normalizeStartingBalance('250.5')).toBe('250.50000000');
    expect(normalizeStartingBalance(0.123456789)).toBe('0.12345679');
    expect(normalizeStartingBalance('1000000000000')).toBe('1000000000000.00000000');
  });

  it('names the bound that a too-large balance breaks, not the decimal places', () => {
    expect(messageOf('9'.repeat(30))).toMatch(/at most 1000000000000$/);
    expect(messageOf('1000000000000.00000001')).toMatch(/at most 1000000000000$/);
  });

  it('names the form for malformed, over-precise, zero and negative values', () => {
    expect(messageOf('1.123456789')).toMatch(/at most 8 decimal places/);
    expect(messageOf('-5')).toMatch(/positive decimal string/);
    expect(messageOf('1e5')).toMatch(/positive decimal string/);
    expect(messageOf('0')).toMatch(/greater than 0/);
  });

  it('reads a decimal string as an order quantity is read (one grammar for money and quantities, spec "Conventions")', () => {
    // Each of these is a well-formed decimal to the order decider (`parseDecimal`): a starting balance refused them.
    for (const [text, normalised] of <const>[
      ['.5', '0.50000000'],
      ['100.', '100.00000000'],
      ['+250', '250.00000000'],
      ['10000.000000000', '10000.00000000'],
    ]) {
      expect(parseDecimal(text)?.toFixed(8)).toBe(normalised);
      expect(normalizeStartingBalance(text)).toBe(normalised);
    }
    // What the order grammar refuses stays refused, with the form named.
    for (const text of ['1e5', '1_000', '0x10', '.', '+', '1.2.3', '1.123456789']) {
      expect(parseDecimal(text)).toBeUndefined();
      expect(messageOf(text)).toMatch(/positive decimal string/);
    }
  });

  it('reads a JSON number as an order reads one: the nearest 8-place decimal, half-even (docs/trading-rules.md)', () => {
    // A balance of 12.345678915 was cut to 12.34567891 where an order quantity of 12.345678915 is 12.34567892.
    for (const [value, normalised] of <const>[
      [12.345678915, '12.34567892'],
      [12.345678925, '12.34567892'],
      [0.030000000000000002, '0.03000000'],
      [250.000000005, '250.00000000'],
      [99.999999999, '100.00000000'],
    ]) {
      expect(normalizeStartingBalance(value)).toBe(normalised);
      expect(normalizeStartingBalance(value)).toBe(normalizeStartingBalance(decimalText(value)));
    }
    // A number that rounds to 0 is refused as zero, as an order quantity that rounds to 0 is.
    expect(messageOf(0.000000004)).toMatch(/greater than 0/);
  });
});
