import { describe, expect, it } from 'vitest';
import { feeRatesOf } from '../../domain/trading/fees';
import { loadConfig } from '../../src/config';

/** The precedence of the fee settings (docs/trading-rules.md, "Fees by liquidity"; README "Settings"). */
describe('feeRatesOf', () => {
  const rates = (s: Parameters<typeof feeRatesOf>[0]) => {
    const r = feeRatesOf(s);
    return { maker: r.maker.toFixed(), taker: r.taker.toFixed() };
  };

  it('takes TAKER_FEE_RATE over FEE_RATE over the default, and MAKER_FEE_RATE over the taker rate', () => {
    expect(rates({})).toEqual({ maker: '0.001', taker: '0.001' });
    expect(rates({ FEE_RATE: '0.002' })).toEqual({ maker: '0.002', taker: '0.002' });
    expect(rates({ FEE_RATE: '0.002', TAKER_FEE_RATE: '0.0008' })).toEqual({
      maker: '0.0008',
      taker: '0.0008',
    });
    expect(rates({ FEE_RATE: '0.002', MAKER_FEE_RATE: '0' })).toEqual({ maker: '0', taker: '0.002' });
    expect(rates({ TAKER_FEE_RATE: '0.0008', MAKER_FEE_RATE: '0.0002' })).toEqual({
      maker: '0.0002',
      taker: '0.0008',
    });
  });

  it('refuses a rate outside 0 … 0.1 in the settings', () => {
    expect(() => loadConfig({ MAKER_FEE_RATE: '0.2' })).toThrow(/MAKER_FEE_RATE/);
    expect(() => loadConfig({ TAKER_FEE_RATE: 'x' })).toThrow(/TAKER_FEE_RATE/);
    expect(loadConfig({ MAKER_FEE_RATE: '' }).MAKER_FEE_RATE).toBeUndefined();
  });

  it('refuses a rate with more than 8 places at startup, naming the setting (every rate is shown with 8 places)', () => {
    for (const setting of ['FEE_RATE', 'MAKER_FEE_RATE', 'TAKER_FEE_RATE'] as const) {
      expect(() => loadConfig({ [setting]: '0.000000001' }), setting).toThrow(
        new RegExp(`${setting} .*at most 8 places`),
      );
      // A settings object that skipped loadConfig is refused as well, before any answer could show the rate.
      expect(() => feeRatesOf({ [setting]: '0.001000001' }), setting).toThrow(
        new RegExp(`^${setting} must be .* at most 8 places`),
      );
    }
    expect(rates({ MAKER_FEE_RATE: '0.00000001' })).toEqual({ maker: '0.00000001', taker: '0.001' });
  });
});
