import { fromUnits } from '../market/decimal';
import type { Dec } from '../trading/decimal';
import type { Holding, WalletState } from '../wallet/state';
import type { SessionMarket } from './market';

const UNIT = 100_000_000n;
const HALF = 50_000_000n;

/** Integer 1e-8 units of a value with at most 8 decimal places. */
const units = (v: Dec): bigint => BigInt(v.times(100_000_000).toFixed(0));

/** Units of each holding, computed once per holding object (holdings are immutable values). */
const holdingUnits = new WeakMap<Holding, { quantity: bigint; cost: bigint }>();

/**
 * Values a wallet at the closes of a session's candles, fast enough to run at every step (ARCHITECTURE §9:
 * equity snapshots at the session's interval): cash + locked cash + Σ quantity × the close of the pair's last
 * closed candle, exact in integer units and rounded half to even to 8 places once — the same figure as
 * `roundHalfEven8(walletEquity(...))` of the wallet domain. A holding without a visible price counts at its cost
 * basis, as there.
 */
export class EquityMeter {
  private cash = 0n;
  private holdings: { series: number; quantity: bigint; cost: bigint }[] = [];
  private constant: string | undefined;

  constructor(private readonly market: SessionMarket) {}

  /** Takes the wallet's cash and holdings (call after every change of the wallet). */
  load(wallet: WalletState): void {
    this.cash = units(wallet.cash.plus(wallet.lockedCash));
    this.holdings = Object.values(wallet.holdings).map((h) => {
      let u = holdingUnits.get(h);
      if (!u) {
        u = { quantity: units(h.quantity), cost: units(h.cost) };
        holdingUnits.set(h, u);
      }
      return { series: this.market.series.findIndex((s) => s.symbol === h.symbol), ...u };
    });
    this.constant = this.holdings.length === 0 ? fromUnits(this.cash) : undefined;
  }

  /**
   * Equity (8-decimal string) given, for every series of the market, how many of its candles are closed
   * (`closed[i]`; the last closed candle is `closed[i] − 1`).
   */
  at(closed: Int32Array): string {
    if (this.constant !== undefined) return this.constant;
    let total = this.cash * UNIT;
    for (const h of this.holdings) {
      const s = h.series >= 0 ? this.market.series[h.series] : undefined;
      const i = s ? closed[h.series]! - 1 : -1;
      total += i >= 0 ? h.quantity * BigInt(s!.close[i]!) : h.cost * UNIT;
    }
    let q = total / UNIT;
    const r = total % UNIT;
    if (r > HALF || (r === HALF && q % 2n !== 0n)) q += 1n;
    else if (r < -HALF || (r === -HALF && q % 2n !== 0n)) q -= 1n;
    return fromUnits(q);
  }
}
