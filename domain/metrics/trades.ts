import { M_HUNDRED, M_ZERO, type MDec, MINUTE_MS, m } from './decimal';

/** A fill as the metrics read it (a row of a trade log, in execution order). Values are decimal strings. */
export interface MetricsFill {
  symbol: string;
  side: 'buy' | 'sell';
  quantity: string;
  /** Execution price. */
  price: string;
  /** quantity × price as the ledger recorded it; computed from them when absent. */
  notional?: string;
  fee: string;
  /** Realized PnL as the ledger recorded it: (exit − average entry) × quantity for a sell, 0 for a buy. */
  realizedPnl: string;
  /** Execution time (ms since the epoch). */
  time: number;
}

/**
 * A closed trade: a fill that reduces a position (ARCHITECTURE §11). The venue is spot only, without shorting,
 * so every sell reduces a long position and every buy opens or adds to one.
 */
export interface ClosedTrade {
  symbol: string;
  time: number;
  realizedPnl: MDec;
  /** Time the position it reduces was opened (its first buy after being flat); null before the first fill seen. */
  openedAt: number | null;
}

/** Closed trades of a trade log, with the opening time of the position each one reduces. */
export const closedTrades = (fills: readonly MetricsFill[]): ClosedTrade[] => {
  const positions = new Map<string, { quantity: MDec; openedAt: number | null }>();
  const out: ClosedTrade[] = [];
  for (const f of fills) {
    const position = positions.get(f.symbol) ?? { quantity: M_ZERO, openedAt: null };
    const quantity = m(f.quantity);
    if (f.side === 'buy') {
      positions.set(f.symbol, {
        quantity: position.quantity.plus(quantity),
        openedAt: position.quantity.lte(0) ? f.time : position.openedAt,
      });
      continue;
    }
    out.push({ symbol: f.symbol, time: f.time, realizedPnl: m(f.realizedPnl), openedAt: position.openedAt });
    const left = position.quantity.minus(quantity);
    positions.set(
      f.symbol,
      left.lte(0) ? { quantity: M_ZERO, openedAt: null } : { ...position, quantity: left },
    );
  }
  return out;
};

/** Statistics of closed trades (ARCHITECTURE §11). */
export interface TradeStats {
  closedTrades: number;
  /** Realized PnL > 0. */
  wins: number;
  /** Realized PnL < 0 (a trade at exactly 0 is neither). */
  losses: number;
  /** wins / closed trades × 100; null without closed trades. */
  winRate: MDec | null;
  /** Σ realized PnL of wins. */
  grossProfit: MDec;
  /** Σ realized PnL of losses (≤ 0). */
  grossLoss: MDec;
  /** gross profit / |gross loss|; null without losses. */
  profitFactor: MDec | null;
  /** gross profit / wins; null without wins. */
  avgWin: MDec | null;
  /** gross loss / losses (negative); null without losses. */
  avgLoss: MDec | null;
  /** Largest and smallest realized PnL of one closed trade; null without closed trades. */
  bestTrade: MDec | null;
  worstTrade: MDec | null;
  /** Signed length of the last run: +k after k wins in a row, −k after k losses; 0 after a flat trade or none. */
  currentStreak: number;
  longestWinStreak: number;
  longestLossStreak: number;
  /** Mean of (close time − opening time of the position) in minutes over trades with a known opening; null if none. */
  avgDurationMinutes: MDec | null;
}

/** {@link TradeStats} of closed trades in order. */
export const tradeStats = (trades: readonly ClosedTrade[]): TradeStats => {
  let wins = 0;
  let losses = 0;
  let grossProfit = M_ZERO;
  let grossLoss = M_ZERO;
  let best: MDec | null = null;
  let worst: MDec | null = null;
  let streak = 0;
  let longestWin = 0;
  let longestLoss = 0;
  let durationTotal = 0;
  let durationCount = 0;
  for (const t of trades) {
    const pnl = t.realizedPnl;
    if (pnl.gt(0)) {
      wins++;
      grossProfit = grossProfit.plus(pnl);
      streak = streak > 0 ? streak + 1 : 1;
      longestWin = Math.max(longestWin, streak);
    } else if (pnl.lt(0)) {
      losses++;
      grossLoss = grossLoss.plus(pnl);
      streak = streak < 0 ? streak - 1 : -1;
      longestLoss = Math.max(longestLoss, -streak);
    } else {
      streak = 0;
    }
    if (best === null || pnl.gt(best)) best = pnl;
    if (worst === null || pnl.lt(worst)) worst = pnl;
    if (t.openedAt !== null) {
      durationTotal += t.time - t.openedAt;
      durationCount++;
    }
  }
  const n = trades.length;
  return {
    closedTrades: n,
    wins,
    losses,
    winRate: n === 0 ? null : m(wins).div(n).times(M_HUNDRED),
    grossProfit,
    grossLoss,
    profitFactor: losses === 0 ? null : grossProfit.div(grossLoss.abs()),
    avgWin: wins === 0 ? null : grossProfit.div(wins),
    avgLoss: losses === 0 ? null : grossLoss.div(losses),
    bestTrade: best,
    worstTrade: worst,
    currentStreak: streak,
    longestWinStreak: longestWin,
    longestLossStreak: longestLoss,
    avgDurationMinutes: durationCount === 0 ? null : m(durationTotal).div(durationCount).div(MINUTE_MS),
  };
};

/** Per-pair figures of a trade log. */
export interface PairStats {
  symbol: string;
  /** Fills of the pair. */
  trades: number;
  closedTrades: number;
  wins: number;
  /** wins / closed trades × 100; null without closed trades. */
  winRate: MDec | null;
  realizedPnl: MDec;
  fees: MDec;
  /** Quantity still held after the last fill. */
  openQuantity: MDec;
  /**
   * Σ sell notional − Σ buy notional + open quantity × mark − fees, i.e. realized + unrealized PnL − fees. The
   * mark is `marks[symbol]`, else the last fill's price.
   */
  netPnl: MDec;
}

/** {@link PairStats} of every symbol with a fill, sorted by symbol. */
export const pairStats = (
  fills: readonly MetricsFill[],
  marks: Readonly<Record<string, string>> = {},
): PairStats[] => {
  const bySymbol = new Map<string, MetricsFill[]>();
  for (const f of fills) {
    const list = bySymbol.get(f.symbol);
    if (list) list.push(f);
    else bySymbol.set(f.symbol, [f]);
  }
  const symbols = [...bySymbol.keys()].sort();
  return symbols.map((symbol) => {
    const list = bySymbol.get(symbol)!;
    let cashflow = M_ZERO;
    let fees = M_ZERO;
    let realized = M_ZERO;
    let held = M_ZERO;
    for (const f of list) {
      const quantity = m(f.quantity);
      const notional = f.notional !== undefined ? m(f.notional) : quantity.times(f.price);
      fees = fees.plus(f.fee);
      realized = realized.plus(f.realizedPnl);
      if (f.side === 'buy') {
        cashflow = cashflow.minus(notional);
        held = held.plus(quantity);
      } else {
        cashflow = cashflow.plus(notional);
        held = held.minus(quantity);
      }
    }
    const stats = tradeStats(closedTrades(list));
    const mark = marks[symbol] ?? list[list.length - 1]!.price;
    return {
      symbol,
      trades: list.length,
      closedTrades: stats.closedTrades,
      wins: stats.wins,
      winRate: stats.winRate,
      realizedPnl: realized,
      fees,
      openQuantity: held,
      netPnl: cashflow.plus(held.times(mark)).minus(fees),
    };
  });
};
