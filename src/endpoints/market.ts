import type { Pair } from '../../domain/market/pair';
import { isoMillis } from '../../domain/market/time';
import type { PublicCall } from '../application/call';
import { currentPrices, dataRange, listPairs, orderBook, recentTrades, ticker } from '../application/market';
import { dataRangeOut, orderBookOut, pairOut, recentTradeOut, tickerOut } from '../market/present';

/**
 * The public market-data answers (spec "Market data endpoints") as every door gives them: each calls its use case
 * of `src/application/market.ts` and presents with `src/market/present.ts`. `/market/*` and the market MCP
 * toolset both answer with these; what differs stays in the door (the REST door's pre-serialized price and
 * candle bodies, the tools' argument names in errors). Symbols are case-insensitive; an unknown pair is
 * `INVALID_SYMBOL`.
 */
export const marketAnswers = {
  /** The pairs (of one status, or all) with their order filters, and their count. */
  pairs: (call: PublicCall, status?: Pair['status']) => {
    const pairs = listPairs(call, status).map(pairOut);
    return { pairs, total: pairs.length };
  },
  /** Current prices (USDT) keyed by symbol (every pair with a price when `symbols` is undefined), now, and count. */
  prices: (call: PublicCall, symbols?: readonly string[]) => {
    const prices = currentPrices(call, symbols);
    return { prices, timestamp: isoMillis(Date.now()), count: Object.keys(prices).length };
  },
  /** Rolling 24-hour statistics of one active pair. */
  ticker: (call: PublicCall, symbol: string) => tickerOut(ticker(call, symbol)),
  /** The newest `limit` public trades of one active pair, newest first. */
  trades: (call: PublicCall, symbol: string, limit: number) => {
    const r = recentTrades(call, symbol, limit);
    return { symbol: r.symbol, trades: r.trades.map(recentTradeOut) };
  },
  /** The synthetic order book of one active pair, `depth` levels a side (5, 10 or 20; default 10). */
  orderBook: (call: PublicCall, symbol: string, depth?: string | number) =>
    orderBookOut(orderBook(call, symbol, depth)),
  /** The range of the stored candle data, its intervals and gaps. */
  dataRange: (call: PublicCall) => dataRangeOut(dataRange(call)),
};
