import { describe, expect, it } from 'vitest';
import { isMakerFill } from '../../src/binance/present';

/** Binance's `isMaker` / `m` of a fill (docs/binance-compatibility.md): the fill's liquidity flag. */
describe('isMakerFill', () => {
  it('follows the recorded liquidity flag: a marketable limit order is a taker, a resting one a maker', () => {
    expect(isMakerFill({ liquidity: 'taker', trigger: 'limit', slippagePct: '0.00100000' })).toBe(false);
    expect(isMakerFill({ liquidity: 'taker', trigger: 'limit', slippagePct: '0.00000000' })).toBe(false);
    expect(isMakerFill({ liquidity: 'maker', trigger: 'limit', slippagePct: '0.00000000' })).toBe(true);
    expect(isMakerFill({ liquidity: 'taker', trigger: 'market', slippagePct: '0.01000000' })).toBe(false);
  });

  it('for a fill recorded before the flag: a limit fill at its limit (no slippage) is a maker', () => {
    expect(isMakerFill({ liquidity: null, trigger: 'limit', slippagePct: '0.00000000' })).toBe(true);
    expect(isMakerFill({ liquidity: undefined, trigger: 'limit', slippagePct: '0.02500000' })).toBe(false);
    expect(isMakerFill({ liquidity: null, trigger: 'stop_loss', slippagePct: '0.00000000' })).toBe(false);
  });
});
