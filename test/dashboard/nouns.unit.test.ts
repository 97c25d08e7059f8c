import { describe, expect, it } from 'vitest';
import { AGENTS, DAYS, FILLS, nounOf, TRADES } from '../../dashboard/src/ui/nouns';

/**
 * The dashboard says a counted unit in the singular for exactly 1 ("1 day", "1 trade") and in the plural for every
 * other figure ("0 days", "2.5 days"), whether the venue sent a number or a decimal string (16e968b: the backtest
 * page's "Max drawdown duration" and "Simulated" read "1 days").
 */
describe('nounOf', () => {
  it('is the singular for exactly 1, as a number or a venue decimal', () => {
    for (const n of [1, '1', '1.00000000']) expect(nounOf(DAYS, n)).toBe('day');
    expect(nounOf(TRADES, 1)).toBe('trade');
    expect(nounOf(FILLS, '1')).toBe('fill');
    expect(nounOf(AGENTS, 1)).toBe('agent');
  });

  it('is the plural for every other figure, and for none', () => {
    for (const n of [0, '0', 2, '2.5', '0.5', '-1', '1.00000001', null, undefined]) {
      expect(nounOf(DAYS, n)).toBe('days');
    }
    expect(nounOf(TRADES, 12)).toBe('trades');
  });
});
