import {
  type Dec,
  dec,
  HUNDRED,
  max,
  min,
  roundDown8,
  roundHalfEven8,
  roundUp8,
  ZERO,
} from '../trading/decimal';
import { floorToStep } from '../trading/quantity';
import { participationOf, slippagePct, slippedPrice } from '../trading/slippage';
import {
  decOfProductUnits,
  decOfUnits,
  divRound,
  EXACT_DIVISOR_BOUND,
  unitsOf,
  unitsOfChecked,
} from '../trading/units';
import { type BookLevel, bookUnits, sideTakenBy } from './book';
import { walkUnits } from './walk';

/**
 * The fill model (docs/trading-rules.md, "Fill models"): how much of an order fills, at what price, and which fee
 * rate it pays. Pure and versioned; the wallet decider calls it for every fill, live, in backtests and in historical
 * battles alike, and records its name, version and inputs on the fill.
 *
 * - `realistic` (version 2; version 1 rounded each book level down on its own, so a coarse step size thinned the
 *   book): a taker (market order, triggered stop or take-profit, a limit order that takes
 *   liquidity) walks the synthetic book of `book.ts` around the reference price; a resting limit order fills at
 *   its limit, at most its participation share of the volume traded in the print (tick or candle) that reached it.
 * - `instant` (version 2, unchanged from 1): the venue before fill models, kept for comparison — every order fills whole when
 *   reached; takers at the reference price moved by the participation-based slippage table, resting limits at
 *   their limit.
 */
export type FillModelName = 'realistic' | 'instant';

/** The fill models, for validation. */
export const FILL_MODELS = ['realistic', 'instant'] as const satisfies readonly FillModelName[];

/** The version of the models' rules recorded on every fill: bump it on any change of what a fill gets. */
export const FILL_MODEL_VERSION = 2;

/** The share (%) of a print's volume a wallet's resting orders may take under `realistic` by default. */
export const DEFAULT_PARTICIPATION_PCT = 10;

/** Whether a fill added liquidity (a resting limit order) or took it (everything else). */
export type Liquidity = 'maker' | 'taker';

/** The pair's grid (decimal strings); `0.00000001` when unknown. */
export interface Grid {
  tickSize?: string | undefined;
  stepSize?: string | undefined;
}

/** A taker fill as the model prices it (before fees and the ledger). */
export interface TakerQuote {
  /** Base quantity filled: the whole order unless the book (or the part of it within the limit) ran out. */
  quantity: Dec;
  /** The average price paid or received, 8 places, rounded against the taker (buys up, sells down). */
  executedPrice: Dec;
  /** |executed − reference| / reference × 100, half-even to 8 places. */
  slippagePct: Dec;
  /** The pair's 24h quote volume and the order's notional at the reference as % of it (null when unknown). */
  quoteVolume: Dec | null;
  participationPct: Dec | null;
  /** The book levels consumed, best first (`realistic` with a known volume), else null. */
  levels: BookLevel[] | null;
  /** Depth of this side the wallet had already taken at this price (`realistic`), else null. */
  bookTaken: Dec | null;
}

/** What a taker fill is priced from. */
export interface TakerInput {
  side: 'buy' | 'sell';
  quantity: Dec;
  /** The trade price the fill is decided on (the book's mid). */
  reference: Dec;
  quoteVolume24h: Dec | undefined;
  grid: Grid;
  /** A limit order's limit: no fill beyond it. */
  limit?: Dec | undefined;
  /** Depth of the side the wallet already took at this price (`realistic`). */
  taken?: Dec | undefined;
  /**
   * Fill the whole quantity even beyond the book (a reset's closing fills): the part the book cannot hold is
   * priced at its deepest level taken.
   */
  whole?: boolean;
}

const priceAgainstTaker = (side: 'buy' | 'sell', v: Dec): Dec =>
  side === 'buy' ? roundUp8(v) : roundDown8(v);

/** 10^10: |executed − reference| / reference × 100, in 1e-8 units of a percent, is |Δ| × 10^10 / reference (units). */
const PCT_UNITS = 10_000_000_000n;

/**
 * The slippage a fill recorded: |executed − reference| / reference × 100 (%), half-even to 8 places; in integers when
 * both prices have 8 places (domain/trading/units.ts), else by that formula in decimals.
 */
const slippageOf = (executed: Dec, reference: Dec): Dec => {
  const e = unitsOf(executed);
  const r = unitsOf(reference);
  if (e === undefined || r === undefined || r <= 0n || r >= EXACT_DIVISOR_BOUND) {
    return roundHalfEven8(executed.minus(reference).abs().div(reference).times(HUNDRED));
  }
  return decOfUnits(divRound((e > r ? e - r : r - e) * PCT_UNITS, r, 'half-even'));
};

/**
 * The `instant` taker (the venue's rule before fill models; docs/trading-rules.md, "Slippage"): the whole quantity
 * at the reference moved by the participation-based slippage, a limit order never beyond its limit (a capped fill
 * records the slippage it paid).
 */
const instantTaker = (input: TakerInput): TakerQuote => {
  const quoteVolume = input.quoteVolume24h ?? null;
  const participation = participationOf(input.quantity, input.reference, quoteVolume ?? undefined);
  let slippage = slippagePct(participation);
  let executed = slippedPrice(input.reference, input.side, slippage);
  const { limit } = input;
  if (limit && (input.side === 'buy' ? executed.gt(limit) : executed.lt(limit))) {
    executed = limit;
    slippage = slippageOf(limit, input.reference);
  }
  return {
    quantity: input.quantity,
    executedPrice: executed,
    slippagePct: slippage,
    quoteVolume,
    participationPct: participation,
    levels: null,
    bookTaken: null,
  };
};

/**
 * The `realistic` taker: walks the book's side (asks for a buy, bids for a sell) around the reference, within the
 * limit, past what the wallet already took at this price. Without a known 24h volume there is no book to walk:
 * the order is priced like `instant` (at the table's largest slippage, 0.5 %) and records no levels.
 */
const realisticTaker = (input: TakerInput): TakerQuote => {
  const volume = input.quoteVolume24h;
  if (volume === undefined || !volume.isFinite() || volume.lte(0)) {
    return { ...instantTaker({ ...input, quoteVolume24h: undefined }), bookTaken: null };
  }
  // The walk and its average in integers (1e-8 units; the notional in 1e-16): the same figures as the decimal
  // formulation, exactly (domain/trading/units.ts), without a decimal per level.
  const book = bookUnits(
    { mid: input.reference.toFixed(8), ...input.grid, quoteVolume24h: volume },
    sideTakenBy(input.side),
  );
  const { levels } = book;
  const taken = input.taken ?? ZERO;
  const ordered = unitsOfChecked(input.quantity, 'the quantity');
  const limit = input.limit && unitsOfChecked(input.limit, 'the limit');
  const walk = walkUnits(book.prices, book.quantities, ordered, {
    side: input.side,
    limit,
    taken: unitsOfChecked(taken, 'the depth taken'),
  });
  let filled = walk.quantity;
  let { notional } = walk;
  // A level's quantity is most often the whole level or the whole order: those decimals exist already.
  const consumed: BookLevel[] = walk.taken.map(({ index, quantity }) => ({
    price: levels[index]!.price,
    quantity:
      quantity === book.quantities[index]
        ? levels[index]!.quantity
        : quantity === ordered
          ? input.quantity
          : decOfUnits(quantity),
  }));
  if (input.whole && filled < ordered) {
    const rest = ordered - filled;
    const last = walk.taken[walk.taken.length - 1]?.index ?? levels.length - 1;
    const deepest = levels[last]?.price ?? input.reference;
    consumed.push({ price: deepest, quantity: decOfUnits(rest) });
    notional += rest * (book.prices[last] ?? unitsOfChecked(input.reference, 'the reference'));
    filled = ordered;
  }
  const participation = participationOf(input.quantity, input.reference, volume);
  if (filled === 0n) {
    return {
      quantity: ZERO,
      executedPrice: input.reference,
      slippagePct: ZERO,
      quoteVolume: volume,
      participationPct: participation,
      levels: [],
      bookTaken: taken,
    };
  }
  const quantity = filled === ordered ? input.quantity : decOfUnits(filled);
  let executed: Dec;
  if (filled < EXACT_DIVISOR_BOUND) {
    // The average rounded against the taker; every level taken is within the limit, so the average is too, and the
    // rounding cannot pass a limit of 8 places.
    let units = divRound(notional, filled, input.side === 'buy' ? 'up' : 'down');
    if (limit !== undefined && (input.side === 'buy' ? units > limit : units < limit)) units = limit;
    executed = limit === units ? input.limit! : decOfUnits(units);
  } else {
    executed = priceAgainstTaker(input.side, decOfProductUnits(notional).div(quantity));
    if (input.limit)
      executed = input.side === 'buy' ? min(executed, input.limit) : max(executed, input.limit);
  }
  return {
    quantity,
    executedPrice: executed,
    slippagePct: slippageOf(executed, input.reference),
    quoteVolume: volume,
    participationPct: participation,
    levels: consumed,
    bookTaken: taken,
  };
};

/** Prices a taker fill under `model` (docs/trading-rules.md, "Taker fills"). */
export const quoteTaker = (model: FillModelName, input: TakerInput): TakerQuote =>
  model === 'realistic' ? realisticTaker(input) : instantTaker(input);

/** A resting limit fill as the model sizes it (it fills at its limit price, as a maker). */
export interface MakerQuote {
  /** Base quantity filled now (0: nothing this print). */
  quantity: Dec;
  /** The volume traded in the print (base asset), the participation share and what the wallet's earlier resting fills of the same print took (`realistic`), else null. */
  volumeAvailable: Dec | null;
  participationCapPct: number | null;
  volumeTaken: Dec | null;
}

/** What a resting limit fill is sized from. */
export interface MakerInput {
  /** The order's remaining quantity. */
  remaining: Dec;
  /** Base volume traded in the print that reached the order (a tick's quantity, a candle's volume). */
  printVolume: Dec;
  /** The share of that volume the wallet's resting orders may take (%). */
  participationPct: number;
  /** What the wallet's resting orders already took from this print. */
  taken: Dec;
  grid: Grid;
}

/**
 * Sizes a resting limit fill under `model` (docs/trading-rules.md, "Maker fills"): `instant` fills the whole
 * remainder; `realistic` at most `participation % × print volume` for all the wallet's resting orders of the print
 * together, rounded down to the step size (a print without volume fills nothing).
 */
export const quoteMaker = (model: FillModelName, input: MakerInput): MakerQuote => {
  if (model === 'instant') {
    return { quantity: input.remaining, volumeAvailable: null, participationCapPct: null, volumeTaken: null };
  }
  const budget = input.printVolume.times(input.participationPct).shiftedBy(-2).minus(input.taken);
  const step = dec(input.grid.stepSize ?? '0.00000001');
  const quantity = budget.gt(0) ? min(input.remaining, floorToStep(roundDown8(budget), step)) : ZERO;
  return {
    quantity,
    volumeAvailable: input.printVolume,
    participationCapPct: input.participationPct,
    volumeTaken: input.taken,
  };
};

/** The fee schedule: rate per fill as a fraction of notional, by liquidity flag. */
export interface FeeSchedule {
  maker: Dec;
  taker: Dec;
}

/** The rate a fill pays: maker for a resting limit fill, taker for anything that takes liquidity. */
export const feeRateOf = (liquidity: Liquidity, fees: FeeSchedule): Dec =>
  liquidity === 'maker' ? fees.maker : fees.taker;
