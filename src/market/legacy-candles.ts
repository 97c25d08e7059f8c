import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import { INTERVAL_MS } from '../../domain/market/intervals';
import type { Database } from '../db/schema';
import { loadCandleSeries } from './repository';
import type { ColumnStore } from './store/column-store';
import { columnsFromCandles } from './store/convert';

/**
 * Moves candles that an earlier version imported into the `market_candles` table (source `files`) into the candle
 * store, once: each series is merged like an import (a candle already in the store is an overlap; one that
 * disagrees is left in the table and reported), then the moved rows are deleted. Live-recorded candles (source
 * `binance`) stay in the table. Resolves to the number of candles moved.
 */
export const moveLegacyCandles = async (
  db: Kysely<Database>,
  store: ColumnStore,
  logger?: Logger,
): Promise<number> => {
  const series = await loadCandleSeries(db, { only: 'files' });
  if (series.length === 0) return 0;
  const unlock = store.lock();
  let moved = 0;
  try {
    for (const s of series) {
      const prepared = store.prepare(
        s.symbol,
        s.interval,
        columnsFromCandles(s.candles, INTERVAL_MS[s.interval]),
      );
      if (prepared.conflicts.length) {
        logger?.warn(
          { symbol: s.symbol, interval: s.interval, conflicts: prepared.conflicts.length },
          'stored candles of an earlier import disagree with the candle store; left in market_candles',
        );
        continue;
      }
      store.commit(prepared);
      await store.flush();
      await sql`delete from market_candles where source = 'files' and symbol = ${s.symbol} and interval = ${s.interval}`.execute(
        db,
      );
      moved += s.candles.length;
    }
  } finally {
    unlock();
  }
  logger?.info({ candles: moved }, 'candles of an earlier import moved into the candle store');
  return moved;
};
