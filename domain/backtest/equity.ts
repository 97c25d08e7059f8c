import { fromUnits } from '../market/decimal';
import type { Dec } from '../trading/decimal';
import type { Holding, WalletState } from '../wallet/state';
import type { SessionMarket } from './market';

const UNIT = 100_000_000n;
const HALF = 50_000_000n;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Integer 1e-8 units of a value with at most 8 decimal places. */
const units = (v: Dec): bigint => BigInt(v.times(100_000_000).toFixed(0));

/** Units of each holding, computed once per holding object (holdings are immutable values). */
const holdingUnits = new WeakMap<Holding, { quantity: bigint; cost: bigint }>();

/**
 * ⌊x / 10⁸⌋ of a non-negative safe integer `x`, exactly (the division's rounding corrected): the whole units of a
 * price or sum in 1e-8 units; `x − wholeUnits(x) × 10⁸` is then its exact remainder in [0, 10⁸).
 */
const wholeUnits = (x: number): number => {
  const w = Math.floor(x / 1e8);
  const rest = x - w * 1e8;
  return rest < 0 ? w - 1 : rest >= 1e8 ? w + 1 : w;
};

/**
 * Values a wallet at the closes of a session's candles, fast enough to run at every step (ARCHITECTURE §9:
 * equity snapshots at the session's interval): cash + locked cash + Σ quantity × the close of the pair's last
 * closed candle, exact in integer units and rounded half to even to 8 places once — the same figure as
 * `roundHalfEven8(walletEquity(...))` of the wallet domain. A holding without a visible price counts at its cost
 * basis, as there.
 */
export class EquityMeter {
  private cash = 0n;
  /** `cash × 10⁸`: the sum's start, made once per `load`, not per step. */
  private cashScaled = 0n;
  private holdings: { series: number; quantity: bigint; cost: bigint }[] = [];
  /**
   * The same as numbers, for {@link atUnits}'s exact number path: set when the cash and every holding's quantity and
   * cost are non-negative safe integers of units, else undefined (the `bigint` path only).
   */
  private small: { cash: number; holdings: { series: number; quantity: number; cost: number }[] } | undefined;
  private constant: string | undefined;

  constructor(private readonly market: SessionMarket) {}

  /** Takes the wallet's cash and holdings (call after every change of the wallet). */
  load(wallet: WalletState): void {
    this.cash = units(wallet.cash.plus(wallet.lockedCash));
    this.cashScaled = this.cash * UNIT;
    this.holdings = Object.values(wallet.holdings).map((h) => {
      let u = holdingUnits.get(h);
      if (!u) {
        u = { quantity: units(h.quantity), cost: units(h.cost) };
        holdingUnits.set(h, u);
      }
      return { series: this.market.series.findIndex((s) => s.symbol === h.symbol), ...u };
    });
    this.constant = this.holdings.length === 0 ? fromUnits(this.cash) : undefined;
    const safe = (u: bigint) => u >= 0n && u <= MAX_SAFE;
    this.small =
      safe(this.cash) && this.holdings.every((h) => safe(h.quantity) && safe(h.cost))
        ? {
            cash: Number(this.cash),
            holdings: this.holdings.map((h) => ({
              series: h.series,
              quantity: Number(h.quantity),
              cost: Number(h.cost),
            })),
          }
        : undefined;
  }

  /**
   * Equity (8-decimal string) given, for every series of the market, how many of its candles are closed
   * (`closed[i]`; the last closed candle is `closed[i] − 1`).
   */
  at(closed: Int32Array): string {
    if (this.constant !== undefined) return this.constant;
    return fromUnits(this.atUnits(closed));
  }

  /**
   * The equity of {@link at} as integer 1e-8 units (what `fromUnits` writes as its string): no string is made, so a
   * stepping loop that packs its points (`UnitsPacker`) allocates only the arithmetic's `bigint`s per step.
   */
  atUnits(closed: Int32Array): bigint | number {
    if (this.holdings.length === 0) return this.cash;
    const exact = this.small ? this.atSmall(this.small, closed) : -1;
    return exact >= 0 ? exact : this.atBig(closed);
  }

  /**
   * {@link atUnits} in `number`s, exact, or −1 when a figure would leave the safe integers (the caller then takes
   * the `bigint` way). Σ quantity × close is split at the close's whole units (close = whole × 10⁸ + part): the sum
   * in units is cash + Σ quantity × whole (+ cost of a holding without a price) plus (Σ quantity × part) / 10⁸,
   * whose remainder is rounded half to even as {@link atBig} rounds the whole sum — every figure non-negative, so
   * truncation is the floor there too. No `bigint` per step: the stepping loop's allocations were mostly these
   * (docs/benchmarks.md, "The stepping isolate's garbage", 2026-11-30).
   */
  private atSmall(
    small: { cash: number; holdings: { series: number; quantity: number; cost: number }[] },
    closed: Int32Array,
  ): number {
    let whole = small.cash;
    let parts = 0;
    for (let k = 0; k < small.holdings.length; k++) {
      const h = small.holdings[k]!;
      const s = h.series >= 0 ? this.market.series[h.series] : undefined;
      const i = s ? closed[h.series]! - 1 : -1;
      if (i < 0) {
        whole += h.cost;
        continue;
      }
      const close = s!.close[i]!;
      if (!(close >= 0 && close <= Number.MAX_SAFE_INTEGER)) return -1;
      const w = wholeUnits(close);
      const a = h.quantity * w;
      const b = h.quantity * (close - w * 1e8);
      // Exact while every product and sum stays a safe integer (non-negative: a rounded result beyond 2⁵³ − 1 is
      // at least 2⁵³, so the checks catch any inexact figure).
      if (a > Number.MAX_SAFE_INTEGER || b > Number.MAX_SAFE_INTEGER) return -1;
      whole += a;
      parts += b;
    }
    if (whole > Number.MAX_SAFE_INTEGER || parts > Number.MAX_SAFE_INTEGER) return -1;
    const carry = wholeUnits(parts);
    const r = parts - carry * 1e8;
    let q = whole + carry;
    if (r > 5e7 || (r === 5e7 && q % 2 !== 0)) q += 1;
    return q <= Number.MAX_SAFE_INTEGER ? q : -1;
  }

  /** {@link atUnits} in `bigint`s: exact for any figures. */
  private atBig(closed: Int32Array): bigint {
    let total = this.cashScaled;
    // Indexed, not `for…of`: an array iterator's result objects are per step garbage where it is not inlined.
    for (let k = 0; k < this.holdings.length; k++) {
      const h = this.holdings[k]!;
      const s = h.series >= 0 ? this.market.series[h.series] : undefined;
      const i = s ? closed[h.series]! - 1 : -1;
      total += i >= 0 ? h.quantity * BigInt(s!.close[i]!) : h.cost * UNIT;
    }
    let q = total / UNIT;
    const r = total % UNIT;
    if (r > HALF || (r === HALF && q % 2n !== 0n)) q += 1n;
    else if (r < -HALF || (r === -HALF && q % 2n !== 0n)) q -= 1n;
    return q;
  }
}
