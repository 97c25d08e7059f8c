import type { Pair, PairSnapshot, ReferenceTicker } from '../../domain/market/pair';
import { MarketCandles } from './candles';
import type { ColumnStore } from './store/column-store';

/**
 * The market's reference data in memory: the current pair list (with filters), reference 24h tickers and the
 * candle index. Loaded from the database at start, extended by imports and live sources.
 */
export class MarketData {
  readonly candles: MarketCandles;
  private pairMap = new Map<string, Pair>();
  private pairList: Pair[] = [];
  private snapshotAsOf = -1;
  private readonly reference = new Map<string, ReferenceTicker>();

  /** @param store the candle store on disk (imported candles); live candles are kept in memory beside it. */
  constructor(store: ColumnStore) {
    this.candles = new MarketCandles(store);
  }

  /** Replaces the pair list when `snapshot` is at least as new as the current one. Resolves to true if used. */
  setPairs(snapshot: PairSnapshot, force = false): boolean {
    if (!force && snapshot.asOf < this.snapshotAsOf) return false;
    this.snapshotAsOf = snapshot.asOf;
    this.pairList = [...snapshot.pairs].sort((a, b) =>
      a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0,
    );
    this.pairMap = new Map(this.pairList.map((p) => [p.symbol, p]));
    return true;
  }

  /** Time (ms) of the pair snapshot in use, or -1. */
  get pairsAsOf(): number {
    return this.snapshotAsOf;
  }

  /** All pairs, sorted by symbol. */
  pairs(): readonly Pair[] {
    return this.pairList;
  }

  /** One pair by normalized symbol. */
  pair(symbol: string): Pair | undefined {
    return this.pairMap.get(symbol);
  }

  /** Sets reference tickers (newer close time wins per symbol). */
  setReferenceTickers(tickers: readonly ReferenceTicker[]): void {
    for (const t of tickers) {
      const existing = this.reference.get(t.symbol);
      if (!existing || existing.closeTime <= t.closeTime) this.reference.set(t.symbol, t);
    }
  }

  /** The reference 24h ticker of a symbol (Binance `ticker/24hr` snapshot), if any. */
  referenceTicker(symbol: string): ReferenceTicker | undefined {
    return this.reference.get(symbol);
  }
}
