import { fromUnits } from '../market/decimal';
import { UnitsPacker } from '../metrics/equity-points';
import type { RiskProfile } from '../shared/risk-profile';
import { dec } from '../trading/decimal';
import type { WalletCommand, WalletContext } from '../wallet/commands';
import { walletDecider } from '../wallet/decide';
import type { WalletEvent } from '../wallet/events';
import { placeAndOffer } from '../wallet/place';
import { evolveWallet, type OpenOrder, type WalletState } from '../wallet/state';
import { EquityMeter } from './equity';
import { closedCount, lastClosed, positionAt, quoteVolume24h, type SessionMarket } from './market';
import { directionOf, firstCrossing, pathPoints } from './path';

const iso = (ms: number): string => new Date(ms).toISOString();

/** Price sources recorded on sandbox fills: a market order at the last close, a pending order on the path. */
export const SOURCE_CLOSE = 'candle_close';
export const SOURCE_PATH = 'candle_path';

/**
 * The fixed trading terms of a sandbox wallet: the risk profile copied from its agent and the fee rates recorded
 * when its backtest or battle was created (never today's settings: a replay of its stream decides as it was).
 */
export interface SandboxTerms {
  riskProfile: RiskProfile;
  /** Taker fee per fill as a fraction of notional, decimal string (0.001 = 0.1 %); what locks are sized with. */
  feeRate: string;
  /** Maker fee (resting limit fills), decimal string. */
  makerFeeRate: string;
}

/**
 * The live wallet decider's context on the virtual clock (ARCHITECTURE §2.2, §9): business time `at`, prices
 * the close of each pair's last candle closed by `at` (forward-filled), the session's pairs with their filters,
 * the 24h quote volume of the candles closed in the 24 hours before `at`, the risk profile copied from the agent
 * and the session's fee rate. Nothing after `at` is reachable through it. Shared by backtests and historical
 * battles (one sandbox wallet per participant).
 */
export const sandboxContext = (
  terms: SandboxTerms,
  market: SessionMarket,
  at: number,
  newId: () => string,
): WalletContext => ({
  now: new Date(at),
  newId,
  prices: (symbol) => {
    const c = lastClosed(market, symbol, at);
    if (!c) return undefined;
    const closedAt = c.openTime + market.intervalMs;
    // Stamped with its candle (the open time, as every candle is named): the close is that candle's last print, so
    // a market order at it shares the book with the candle's own fills at the same price, as a live order shares it
    // with the fills of the tick it is priced at (same tape, same fills; docs/trading-rules.md, "Taker fills").
    const quoted = { price: c.close, timestamp: iso(c.openTime), source: SOURCE_CLOSE };
    // Inside a gap of the data the last close is a forward-filled, fabricated price: the decider refuses to fill
    // a market order at it (issue 24, item 6), as it refuses a stale live price.
    return at - closedAt >= market.intervalMs
      ? {
          ...quoted,
          stale: { age_ms: at - closedAt, max_age_ms: market.intervalMs - 1, last_at: iso(closedAt) },
        }
      : quoted;
  },
  pairs: (symbol) => market.bySymbol.get(symbol)?.filters,
  quoteVolume24h: (symbol) => quoteVolume24h(market, symbol, at),
  riskProfile: terms.riskProfile,
  feeRate: dec(terms.feeRate),
  makerFeeRate: dec(terms.makerFeeRate),
});

/**
 * Places an order in a sandbox wallet at virtual time `at` (a backtest's, a historical battle participant's): the
 * live wallet decider's `PlaceOrder`, then the current price (the last close, source `candle_close`) offered to the
 * new pending order at once, as the live matching engine offers the last tick ({@link placeAndOffer}).
 */
export const placeInSandbox = (
  terms: SandboxTerms,
  market: SessionMarket,
  at: number,
  newId: () => string,
  wallet: WalletState,
  command: Extract<WalletCommand, { type: 'PlaceOrder' }>,
): WalletEvent[] => placeAndOffer(command, wallet, sandboxContext(terms, market, at, newId));

interface Pending {
  orderId: string;
  /** Placement order: orders reached at the same point fill in the order they were placed. */
  seq: number;
  direction: 1 | -1;
  /** Limit or trigger price in units. */
  level: number;
}

/** Direction and level (units) of each open order, computed once per order object (orders are immutable). */
const orderTerms = new WeakMap<OpenOrder, { direction: 1 | -1; level: number } | null>();

const termsOf = (o: OpenOrder) => {
  let terms = orderTerms.get(o);
  if (terms === undefined) {
    const level = o.type === 'limit' ? o.price : o.triggerPrice;
    terms = level
      ? { direction: directionOf(o.side, o.type), level: Number(level.times(100_000_000).toFixed(0)) }
      : null;
    orderTerms.set(o, terms);
  }
  return terms;
};

const pendingBySeries = (
  wallet: WalletState,
  market: SessionMarket,
  indexOf: ReadonlyMap<string, number>,
): Pending[][] => {
  const out: Pending[][] = market.series.map(() => []);
  let seq = 0;
  for (const o of Object.values(wallet.openOrders)) {
    const index = indexOf.get(o.symbol) ?? -1;
    const terms = termsOf(o);
    if (index < 0 || !terms) continue;
    out[index]!.push({ orderId: o.orderId, seq: seq++, direction: terms.direction, level: terms.level });
  }
  return out;
};

/** For every series of the market, how many of its candles are closed by `at` (ms). */
export const closedAt = (market: SessionMarket, at: number): Int32Array => {
  positionAt(market, at);
  const closed = new Int32Array(market.series.length);
  market.series.forEach((s, i) => {
    closed[i] = closedCount(s, market.intervalMs, at);
  });
  return closed;
};

/** What {@link advanceSandboxSliced} needs: one sandbox wallet, its terms, and where its virtual clock stands. */
export interface AdvanceInput {
  terms: SandboxTerms;
  market: SessionMarket;
  /** Virtual time of step 0 (ms). */
  startTime: number;
  /** Steps taken so far (virtual time = startTime + fromStep × interval). */
  fromStep: number;
  /** Steps to take now (≥ 1, already clamped to the session's end). */
  steps: number;
  wallet: WalletState;
  newId: () => string;
  /**
   * True: the equity points are packed as they are computed (`AdvanceResult.equityUnits`, a `UnitsPacker`), and
   * `equity` is left empty — no string per step is kept to the batch's end (a backtest's `BacktestStepped`).
   */
  packEquity?: boolean;
}

/** What {@link advanceSandboxSliced} produced. */
export interface AdvanceResult {
  /** The wallet decider's fills and gap cancels, in the order they happened. */
  events: WalletEvent[];
  wallet: WalletState;
  /** `equity[i]`: USDT, 8 places, at step `fromStep + 1 + i` (empty with `packEquity`). */
  equity: string[];
  /** With `packEquity`: the same points as `packUnits(equity)` would pack them. */
  equityUnits?: string;
  /** The equity at the last step (USDT, 8 places): `equity[steps − 1]`. */
  lastEquity: string;
  fills: number;
  /** The final virtual time (ms). */
  at: number;
}

/**
 * Runs a sliced computation to its end without pausing: the synchronous form of a `…Sliced` generator, which is
 * how every in-process caller (the deciders) runs it.
 */
export const runToEnd = <T>(work: Generator<void, T, void>): T => {
  for (;;) {
    const r = work.next();
    if (r.done) return r.value;
  }
};

/**
 * Advances one sandbox wallet along the virtual clock (ARCHITECTURE §9). At each step k the virtual time becomes
 * start + k × interval and every candle that closes in (previous time, new time] is passed, pair by pair in
 * symbol order: the pending orders of its pair are walked along the candle's documented path (O→L→H→C when
 * close ≥ open, else O→H→L→C) and each order reached is offered to the live wallet decider as a `FillOrder` at the
 * price it was reached at — in the order they are reached along the path; orders reached at the same point (a gap
 * at the open) in the order the live matching engine takes them from a tick (falling before rising, the best level
 * first, then placement), so that the same prints fill the same orders in the same order. Then the
 * equity is valued at the closes. Pure: a backtest runs it for its one wallet, a historical battle once per
 * participant with the same clock.
 *
 * A generator that pauses (yields) after every `sliceSteps` steps and returns the same result (`runToEnd` runs it
 * without pausing): a worker thread interleaves several sessions' batches by resuming each in turn (issue 24 item 4). The
 * pauses change nothing computed — the loop resumes where it stopped, with the same state — so the result is the
 * one of an uninterrupted run whatever the slicing.
 */
export function* advanceSandboxSliced(
  input: AdvanceInput,
  sliceSteps = Number.POSITIVE_INFINITY,
): Generator<void, AdvanceResult, void> {
  const { market, terms, startTime, fromStep, steps: n } = input;
  const interval = market.intervalMs;
  const series = market.series;
  const fromTime = startTime + fromStep * interval;
  const indexOf = new Map(series.map((s, i) => [s.symbol, i]));
  const events: WalletEvent[] = [];
  let wallet = input.wallet;
  const meter = new EquityMeter(market);
  meter.load(wallet);
  let pending = pendingBySeries(wallet, market, indexOf);
  const packer = input.packEquity ? new UnitsPacker() : undefined;
  const equity: string[] = packer ? [] : new Array(n);
  let fills = 0;

  // The pairs a step walks (issue 24: a step costs what the wallet holds, not the number of pairs): those with a
  // pending order (their candles are passed) or a holding (the equity reads their closes). A candle of any other
  // pair changes nothing the step decides, so it is not read. A pair that gains an order or a holding during the
  // batch joins and is walked to the batch's end. `walked`: their indices, ascending (symbol order).
  const walked: number[] = [];
  const isWalked = new Uint8Array(series.length);
  /** Candles closed per walked pair at the time its walk reached (an index into its resident arrays). */
  const closed = new Int32Array(series.length);
  /** The window generation `closed[p]` belongs to (a chunked market's pair moves on its own). */
  const generations = new Float64Array(series.length);
  const joining: number[] = [];
  const join = () => {
    const want = (p: number | undefined) => {
      if (p === undefined || isWalked[p]) return;
      isWalked[p] = 1;
      joining.push(p);
    };
    pending.forEach((orders, p) => {
      if (orders.length > 0) want(p);
    });
    for (const h of Object.values(wallet.holdings)) want(indexOf.get(h.symbol));
  };
  /** Makes pair `p` resident over [from, to] (pausing while a worker thread fetches it) and counts its candles closed by `count`. */
  function* track(p: number, from: number, to: number, count: number): Generator<void, void, void> {
    const s = series[p]!;
    const w = s.window;
    while (w && !w.covers(from, to) && !w.moveTo(from)) yield;
    closed[p] = closedCount(s, interval, count);
    generations[p] = w ? w.generation : 0;
  }
  /** Adds the joining pairs to `walked`, each counted at `at` if it sorts before `cursor` (passed this step) else at `before`. */
  function* admit(before: number, at: number, cursor: number): Generator<void, number, void> {
    while (joining.length > 0) {
      const p = joining.pop()!;
      let k = walked.length;
      while (k > 0 && walked[k - 1]! > p) k--;
      walked.splice(k, 0, p);
      if (k < cursor) {
        cursor++;
        yield* track(p, before, at, at);
      } else yield* track(p, before, at, before);
    }
    return cursor;
  }
  join();
  yield* admit(fromTime, fromTime, 0);

  const passCandle = (p: number, i: number, at: number) => {
    const s = series[p]!;
    const points = pathPoints(s.open[i]!, s.high[i]!, s.low[i]!, s.close[i]!);
    const hits: { order: Pending; position: number; price: number }[] = [];
    for (const order of pending[p]!) {
      const c = firstCrossing(points, order.direction, order.level);
      if (c) hits.push({ order, position: c.position, price: c.price });
    }
    if (hits.length === 0) return;
    // Along the path; orders reached at the same point (a gap at the open) in the live engine's order of a tick:
    // those reached falling first, then those reached rising, each the best level first, then placement.
    hits.sort(
      (a, b) =>
        a.position - b.position ||
        a.order.direction - b.order.direction ||
        (a.order.level - b.order.level) * a.order.direction ||
        a.order.seq - b.order.seq,
    );
    const walletCtx = sandboxContext(terms, market, at, input.newId);
    const offer = (orderId: string, price: number) => {
      const out: WalletEvent[] = walletDecider.decide(
        {
          type: 'FillOrder',
          data: {
            orderId,
            price: fromUnits(price),
            time: iso(s.openTime[i]!),
            source: SOURCE_PATH,
            // The candle is the print: its volume is what resting orders take their participation share of.
            volume: s.volumeAt(i),
          },
        },
        wallet,
        walletCtx,
      );
      for (const e of out) {
        events.push(e);
        wallet = evolveWallet(wallet, e);
        if (e.type === 'OrderFilled') fills++;
      }
      return out;
    };
    // Orders a fill placed (a bracket's exits) are offered the price that filled their entry once the candle's other
    // hits are decided, as the live matching engine offers a new order the last tick after the fills it had already
    // taken from it; they wait for the next candles after that.
    const placed: { orderId: string; price: number }[] = [];
    for (const hit of hits) {
      for (const e of offer(hit.order.orderId, hit.price)) {
        if (e.type === 'OrderPlaced' && e.data.type !== 'market')
          placed.push({ orderId: e.data.order_id, price: hit.price });
      }
    }
    for (const p of placed) offer(p.orderId, p.price);
    pending = pendingBySeries(wallet, market, indexOf);
    meter.load(wallet);
    join();
  };

  let at = fromTime;
  for (let k = 1; k <= n; k++) {
    const before = at;
    at = startTime + (fromStep + k) * interval;
    for (let cursor = 0; cursor < walked.length; ) {
      const p = walked[cursor++]!;
      const s = series[p]!;
      const w = s.window;
      if (w && (w.generation !== generations[p] || !w.covers(before, at))) {
        // The chunk serving this step (from `before` to `at`); a worker thread pauses here while it is fetched.
        yield* track(p, before, at, before);
      }
      const times = s.openTime;
      let i = closed[p]!;
      while (i < times.length && times[i]! + interval <= at) {
        if (pending[p]!.length > 0) passCandle(p, i, at);
        i++;
      }
      closed[p] = i;
      if (joining.length > 0) cursor = yield* admit(before, at, cursor);
    }
    // The equity reads every walked pair's close at `at`: a pair moved during the step (by a pause for a chunk, by
    // another session on the same market) is counted again.
    for (let moved = true; moved; ) {
      moved = false;
      // Indexed, not `for…of`: in this generator the array iterator's result objects were ~110 bytes of garbage per
      // step (a sampling heap profile of the stepping thread: docs/benchmarks.md, "The stepping isolate's garbage").
      for (let j = 0; j < walked.length; j++) {
        const p = walked[j]!;
        const w = series[p]!.window;
        if (w && w.generation !== generations[p]) {
          moved = true;
          yield* track(p, before, at, at);
        }
      }
    }
    if (packer) packer.push(meter.atUnits(closed));
    else equity[k - 1] = meter.at(closed);
    if (k % sliceSteps === 0 && k < n) yield;
  }
  if (packer) {
    return {
      events,
      wallet,
      equity,
      equityUnits: packer.text(),
      lastEquity: fromUnits(packer.last!),
      fills,
      at,
    };
  }
  return { events, wallet, equity, lastEquity: equity[n - 1]!, fills, at };
}
