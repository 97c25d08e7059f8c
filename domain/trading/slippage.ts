import { type Dec, dec, HUNDRED, ONE, roundDown8, roundHalfEven8, roundUp8 } from './decimal';
import { decOfUnits, divRound, EXACT_DIVISOR_BOUND, lastExactOf, pow10, unitsOf } from './units';

/**
 * The slippage model of market orders and triggered stops (ARCHITECTURE §8; spec "Slippage"). Participation
 * `p` is the order's notional at the reference price as a percentage of the pair's 24h quote volume:
 *
 * | participation p (% of 24h quote volume) | slippage % |
 * |---|---|
 * | p ≤ 0.01 | 0.01 |
 * | 0.01 < p ≤ 0.1 | linear from 0.05 (at 0.01) to 0.1 (at 0.1) |
 * | 0.1 < p ≤ 1 | linear from 0.1 (at 0.1) to 0.5 (at 1) |
 * | p > 1, or no 24h volume known | 0.5 (the maximum) |
 *
 * Buys fill above the reference price, sells below.
 */
export interface SlippageBand {
  /** Upper bound of p (%) of the band, inclusive; `null` for the last band. */
  upTo: Dec | null;
  /** Slippage % at the band's lower and upper bound (equal for a flat band). */
  from: Dec;
  to: Dec;
  /** Lower bound of p (%) (exclusive), for interpolation. */
  lower: Dec;
}

/** The bands of the table above, in order. */
export const SLIPPAGE_BANDS: readonly SlippageBand[] = [
  { lower: dec(0), upTo: dec('0.01'), from: dec('0.01'), to: dec('0.01') },
  { lower: dec('0.01'), upTo: dec('0.1'), from: dec('0.05'), to: dec('0.1') },
  { lower: dec('0.1'), upTo: dec('1'), from: dec('0.1'), to: dec('0.5') },
  { lower: dec('1'), upTo: null, from: dec('0.5'), to: dec('0.5') },
];

/** The largest slippage the model produces (%): used to size the lock of buy stops (ARCHITECTURE §8). */
export const MAX_SLIPPAGE_PCT: Dec = dec('0.5');

/**
 * Participation in percent: `notional / quoteVolume24h × 100`, rounded half-even to 8 decimal places (the
 * recorded input of the model). `null` when the 24h quote volume is unknown or zero.
 */
export const participationPct = (notional: Dec, quoteVolume24h: Dec | undefined): Dec | null => {
  if (quoteVolume24h === undefined || !quoteVolume24h.isFinite() || quoteVolume24h.lte(0)) return null;
  return roundHalfEven8(notional.div(quoteVolume24h).times(HUNDRED));
};

/** The last volume's integer form (a pair's 24h volume is the same decimal for every order between two ticks). */
const volumeExact = lastExactOf();

/**
 * {@link participationPct} of the notional `quantity × price` at the reference, the same figure, computed in integers
 * when both are 8-place values and the volume's integer form is small enough (src: domain/trading/units.ts), else by
 * the decimal formula: `q × p` in 1e-16 units over `V = int × 10^−scale`, as % in 1e-8 units, is
 * `q·p·10^scale / (int·10^6)`, rounded half-even once.
 */
export const participationOf = (quantity: Dec, price: Dec, quoteVolume24h: Dec | undefined): Dec | null => {
  if (quoteVolume24h === undefined || !quoteVolume24h.isFinite() || quoteVolume24h.lte(0)) return null;
  // Finite and positive (checked above): its integer form exists.
  const volume = volumeExact(quoteVolume24h)!;
  const q = unitsOf(quantity);
  const p = unitsOf(price);
  const den = volume.int * 1_000_000n;
  if (q === undefined || p === undefined || q < 0n || p < 0n || den >= EXACT_DIVISOR_BOUND) {
    return participationPct(quantity.times(price), quoteVolume24h);
  }
  return decOfUnits(divRound(q * p * pow10(volume.scale), den, 'half-even'));
};

/**
 * Slippage % for a participation (%) as recorded (8 decimal places), rounded half-even to 8 decimal places.
 * `null` participation (no volume known) gives the maximum.
 */
export const slippagePct = (participation: Dec | null): Dec => {
  if (participation === null) return MAX_SLIPPAGE_PCT;
  for (const band of SLIPPAGE_BANDS) {
    if (band.upTo === null || participation.lte(band.upTo)) {
      if (band.upTo === null || band.from.eq(band.to)) return band.from;
      const share = participation.minus(band.lower).div(band.upTo.minus(band.lower));
      return roundHalfEven8(band.from.plus(share.times(band.to.minus(band.from))));
    }
  }
  return MAX_SLIPPAGE_PCT;
};

/**
 * The execution price after slippage, 8 decimal places: a buy pays `reference × (1 + s/100)` rounded up, a
 * sell receives `reference × (1 − s/100)` rounded down (never better for the taker than the model says).
 */
export const slippedPrice = (reference: Dec, side: 'buy' | 'sell', pct: Dec): Dec => {
  const factor = pct.shiftedBy(-2); // exact: pct / 100
  return side === 'buy'
    ? roundUp8(reference.times(ONE.plus(factor)))
    : roundDown8(reference.times(ONE.minus(factor)));
};
