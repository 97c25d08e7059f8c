import { describe, expect, it } from 'vitest';
import {
  compareNormalized,
  fromUnits,
  normalizeDecimal,
  sumDecimals,
  toUnits,
} from '../../domain/market/decimal';
import { isoMicros, parseIsoTime } from '../../domain/market/time';

describe('decimal strings (ARCHITECTURE §2.3: exact, 8 places on the wire)', () => {
  it('normalizes plain decimals to 8 places', () => {
    expect(normalizeDecimal('7195.24')).toBe('7195.24000000');
    expect(normalizeDecimal('0.5')).toBe('0.50000000');
    expect(normalizeDecimal('00012')).toBe('12.00000000');
    expect(normalizeDecimal('-1.5')).toBe('-1.50000000');
    expect(normalizeDecimal('-0')).toBe('0.00000000');
    expect(normalizeDecimal('1.1234567800')).toBe('1.12345678');
    expect(normalizeDecimal('57953.86000000')).toBe('57953.86000000');
  });

  it('refuses exponents, garbage and digits that would be lost', () => {
    for (const bad of ['1e-5', 'abc', '', '.', '1.2.3', 'NaN', '1.123456789', ' ']) {
      expect(normalizeDecimal(bad), bad).toBeUndefined();
    }
  });

  it('converts to and from integer units without loss', () => {
    expect(toUnits('43250.12')).toBe(4325012000000n);
    expect(fromUnits(4325012000000n)).toBe('43250.12000000');
    expect(fromUnits(-5n)).toBe('-0.00000005');
    expect(fromUnits(toUnits('123456789012.12345678'))).toBe('123456789012.12345678');
    expect(sumDecimals(['0.1', '0.2'])).toBe('0.30000000');
  });

  it('compares normalized values without converting them', () => {
    expect(compareNormalized('9.00000000', '10.00000000')).toBe(-1);
    expect(compareNormalized('10.00000001', '10.00000000')).toBe(1);
    expect(compareNormalized('0.00000001', '0.00000001')).toBe(0);
  });
});

describe('timestamps', () => {
  it('formats microseconds', () => {
    expect(isoMicros(Date.UTC(2024, 0, 5, 12, 0, 1, 234) + 0.567)).toBe('2024-01-05T12:00:01.234567Z');
    expect(isoMicros(Date.UTC(2024, 0, 5))).toBe('2024-01-05T00:00:00.000000Z');
  });

  it('parses ISO 8601 UTC (zone optional) and rejects other text', () => {
    expect(parseIsoTime('2021-04-20T02:00:00Z')).toBe(Date.UTC(2021, 3, 20, 2));
    expect(parseIsoTime('2021-04-20T02:00:00')).toBe(Date.UTC(2021, 3, 20, 2));
    expect(parseIsoTime('2021-04-20')).toBe(Date.UTC(2021, 3, 20));
    expect(parseIsoTime('2021-04-20T04:00:00+02:00')).toBe(Date.UTC(2021, 3, 20, 2));
    expect(parseIsoTime('yesterday')).toBeUndefined();
    expect(parseIsoTime('2021-13-45T99:00:00Z')).toBeUndefined();
  });
});
