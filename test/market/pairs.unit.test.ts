import { describe, expect, it } from 'vitest';
import { parseExchangeInfo, parseTicker24hr } from '../../domain/market/pair';
import { readData } from './support';

describe('exchangeInfo loader (issue item 1)', () => {
  const doc = JSON.parse(readData('exchangeInfo.json'));

  it('keeps the 456 USDT pairs of the real snapshot, 359 of them active', () => {
    const snapshot = parseExchangeInfo(doc);
    expect(snapshot.pairs).toHaveLength(456);
    expect(snapshot.pairs.filter((p) => p.status === 'active')).toHaveLength(359);
    expect(snapshot.skipped).toEqual([]);
    expect(snapshot.asOf).toBe(doc.serverTime);
    expect(new Date(snapshot.asOf).toISOString()).toMatch(/^2023-09-08T15:06/);
    expect(snapshot.pairs.every((p) => p.quoteAsset === 'USDT' && p.symbol.endsWith('USDT'))).toBe(true);
  });

  it('maps TRADING to active and everything else to inactive, filters from LOT_SIZE, NOTIONAL, PRICE_FILTER', () => {
    const pairs = new Map(parseExchangeInfo(doc).pairs.map((p) => [p.symbol, p]));
    expect(pairs.get('BTCUSDT')).toEqual({
      symbol: 'BTCUSDT',
      baseAsset: 'BTC',
      quoteAsset: 'USDT',
      status: 'active',
      minQty: '0.00001000',
      stepSize: '0.00001000',
      minNotional: '5.00000000',
      tickSize: '0.01000000',
    });
    const inBreak = doc.symbols.find(
      (s: { quoteAsset: string; status: string }) => s.quoteAsset === 'USDT' && s.status === 'BREAK',
    );
    expect(pairs.get(inBreak.symbol)?.status).toBe('inactive');
  });

  it('falls back to the older MIN_NOTIONAL filter and reports symbols without LOT_SIZE', () => {
    const older = structuredClone(doc);
    const btc = older.symbols.find((s: { symbol: string }) => s.symbol === 'BTCUSDT');
    btc.filters = btc.filters.map((f: Record<string, unknown>) =>
      f['filterType'] === 'NOTIONAL' ? { filterType: 'MIN_NOTIONAL', minNotional: '10.00000000' } : f,
    );
    const eth = older.symbols.find((s: { symbol: string }) => s.symbol === 'ETHUSDT');
    eth.filters = eth.filters.filter((f: Record<string, unknown>) => f['filterType'] !== 'LOT_SIZE');
    const snapshot = parseExchangeInfo(older);
    expect(snapshot.pairs.find((p) => p.symbol === 'BTCUSDT')?.minNotional).toBe('10.00000000');
    expect(snapshot.pairs.find((p) => p.symbol === 'ETHUSDT')).toBeUndefined();
    expect(snapshot.skipped).toEqual([{ symbol: 'ETHUSDT', reason: 'no LOT_SIZE filter' }]);
    expect(() => parseExchangeInfo({ hello: 1 })).toThrow(/symbols/);
  });
});

describe('ticker/24hr loader', () => {
  it('reads the real snapshot: USDT symbols with exact strings, delisted ones with their zeros', () => {
    const { tickers, skipped } = parseTicker24hr(JSON.parse(readData('ticker_24hr.json')));
    expect(skipped).toEqual([]);
    expect(tickers).toHaveLength(
      JSON.parse(readData('ticker_24hr.json')).filter((t: { symbol: string }) => t.symbol.endsWith('USDT'))
        .length,
    );
    expect(tickers.find((t) => t.symbol === 'BTCUSDT')).toEqual({
      symbol: 'BTCUSDT',
      open: '44243.93000000',
      high: '44729.58000000',
      low: '42450.00000000',
      last: '43714.03000000',
      volume: '49543.47584000',
      quoteVolume: '2167538240.48367050',
      tradeCount: 2091582,
      openTime: 1704402729548,
      closeTime: 1704489129548,
    });
    expect(tickers.some((t) => t.tradeCount === 0 && t.last === '0.00000000')).toBe(true);
  });
});
