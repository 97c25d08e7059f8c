import { describe, expect, it } from 'vitest';
import { valueWallet } from '../../domain/analytics/equity';
import { marksDecider, marksStreamId, minuteOf } from '../../domain/analytics/marks';
import { dec, fmt } from '../../domain/trading/decimal';
import { periodWindow, returnsInterval } from '../../src/analytics/performance';

const DAY = 86_400_000;

describe('valueWallet', () => {
  it('adds cash and quantity × price per position, exactly (hand-computed)', () => {
    // 1,234.56789012 + 0.12345678 × 43,210.98765432 + 1.5 × 2,000 (cost 2,950); the product has 16 places:
    // 0.12345678 × 43,210.98765432 = 5,334.6893964221002896 (checked with Python's decimal module)
    const v = valueWallet(
      dec('1234.56789012'),
      [
        { symbol: 'BTCUSDT', quantity: dec('0.12345678'), cost: dec('5000') },
        { symbol: 'ETHUSDT', quantity: dec('1.5'), cost: dec('2950') },
      ],
      (s) => ({ BTCUSDT: dec('43210.98765432'), ETHUSDT: dec('2000') })[s],
    );
    expect(dec('0.12345678').times('43210.98765432').toFixed()).toBe('5334.6893964221002896');
    expect(v.equity.toFixed()).toBe('9569.2572865421002896');
    // unrealized: (5,334.6893964221002896 − 5,000) + (3,000 − 2,950)
    expect(v.unrealized.toFixed()).toBe('384.6893964221002896');
  });

  it('counts a position without a price at its cost basis, with no unrealized PnL', () => {
    const v = valueWallet(
      dec('100'),
      [{ symbol: 'XUSDT', quantity: dec('3'), cost: dec('30') }],
      () => undefined,
    );
    expect(fmt(v.equity)).toBe('130.00000000');
    expect(fmt(v.unrealized)).toBe('0.00000000');
  });

  it('never sums raw quantities: 1 BTC and 1 ETH are worth their prices, not 2', () => {
    const v = valueWallet(
      dec('0'),
      [
        { symbol: 'BTCUSDT', quantity: dec('1'), cost: dec('1') },
        { symbol: 'ETHUSDT', quantity: dec('1'), cost: dec('1') },
      ],
      (s) => (s === 'BTCUSDT' ? dec('40000') : dec('2000')),
    );
    expect(v.equity.toFixed()).toBe('42000');
  });
});

describe('marks decider', () => {
  const at = '2024-01-05T10:01:00.000Z';
  const record = (when: string) => ({ type: 'RecordMarks' as const, data: { at: when, marks: [] } });

  it('records a minute once: the same or an earlier minute decides nothing', () => {
    const events = marksDecider.decide(record(at), marksDecider.initialState(), undefined);
    expect(events).toEqual([{ type: 'MarksRecorded', data: { at, marks: [] } }]);
    const state = marksDecider.evolve(marksDecider.initialState(), events[0]!);
    expect(marksDecider.decide(record(at), state, undefined)).toEqual([]);
    expect(marksDecider.decide(record('2024-01-05T10:00:00.000Z'), state, undefined)).toEqual([]);
    expect(marksDecider.decide(record('2024-01-05T10:02:00.000Z'), state, undefined)).toHaveLength(1);
  });

  it('refuses a time that is not a whole minute', () => {
    expect(() =>
      marksDecider.decide(record('2024-01-05T10:01:30.000Z'), { lastAt: null }, undefined),
    ).toThrow(RangeError);
  });

  it('keeps one stream per UTC day and floors to the minute', () => {
    expect(marksStreamId(new Date(at))).toBe('marks-2024-01-05');
    expect(new Date(minuteOf(Date.parse('2024-01-05T23:59:59.999Z'))).toISOString()).toBe(
      '2024-01-05T23:59:00.000Z',
    );
  });
});

describe('period windows', () => {
  const now = Date.parse('2024-03-01T00:00:00.000Z');

  it('clips a period to the session it is measured in', () => {
    const started = now - 2 * DAY;
    expect(periodWindow('1d', started, now)).toEqual({ from: now - DAY, to: now, opensWithSession: false });
    expect(periodWindow('7d', started, now)).toEqual({ from: started, to: now, opensWithSession: true });
    expect(periodWindow('all', started, now)).toEqual({ from: started, to: now, opensWithSession: true });
  });

  it('takes returns between 1-minute snapshots for 1d and hourly ones otherwise', () => {
    expect(returnsInterval('1d')).toBe('1m');
    for (const p of ['7d', '30d', '90d', 'all'] as const) expect(returnsInterval(p)).toBe('1h');
  });
});
