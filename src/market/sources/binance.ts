import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Candle } from '../../../domain/market/candle';
import { fromUnits, toUnits, toUnitsNumber } from '../../../domain/market/decimal';
import type { Database } from '../../db/schema';
import type { MarketSettings } from '../config';
import type { MarketFeed } from '../feed';
import { recordLiveCandles } from '../live-candles';
import type { MarketData } from '../market-data';
import { insertCandles, insertPairSnapshot, insertReferenceTickers } from '../repository';
import { decodeFrame } from './binance-frames';
import { type BinanceRest, binanceRest } from './binance-rest';
import type { MarketSource } from './port';
import { reconnectingSocket } from './reconnecting-socket';

/**
 * The `binance` source (ARCHITECTURE §7, issue item 3): pairs from `GET /api/v3/exchangeInfo`, reference
 * volumes from `GET /api/v3/ticker/24hr`, live prices from the combined WebSocket streams
 * (`{BINANCE_WS_URL}/stream?streams=...`): `<symbol>@trade` for each followed pair (`BINANCE_STREAM=trade`)
 * or `!miniTicker@arr` for every pair (`miniTicker`). In trade mode the last 24 h of 1-minute klines are
 * backfilled over REST (for candles and the 24h window) at start and after every reconnect, and closed minutes
 * observed live are recorded as 1m candles; both are stored (append-only, source `binance`). In miniTicker mode
 * the exchange's own rolling 24h ticker is served. The socket reconnects with exponential back-off.
 */
export interface BinanceSourceOptions {
  feed: MarketFeed;
  data: MarketData;
  db: Kysely<Database>;
  settings: MarketSettings;
  logger?: Logger | undefined;
  /** REST client (default: `binanceRest(settings.binance.restUrl)`). */
  rest?: BinanceRest;
  now?: () => number;
  /** Minutes of 1m klines to backfill (default 1,440: the 24h window). */
  backfillMinutes?: number;
  /** How long `start` waits for the first stream message (default 5,000 ms). */
  startTimeoutMs?: number;
}

const MINUTE = 60_000;

/** Creates the `binance` source. */
export const createBinanceSource = (
  options: BinanceSourceOptions,
): MarketSource & {
  /** Resolves when the running backfill (if any) is done (tests). */
  backfilled(): Promise<void>;
} => {
  const { feed, data, db, settings, logger } = options;
  const now = options.now ?? Date.now;
  const rest = options.rest ?? binanceRest(settings.binance.restUrl);
  const backfillMinutes = options.backfillMinutes ?? 1440;
  let followed: string[] = [];
  let backfilling: Promise<void> = Promise.resolve();
  let recorder: ReturnType<typeof recordLiveCandles> | undefined;
  let flushTimer: NodeJS.Timeout | undefined;
  let lastError: string | undefined;
  let pending: { symbol: string; candles: Candle[] }[] = [];
  let messages = 0;
  let firstMessage: () => void = () => {};
  const firstMessageSeen = new Promise<void>((resolve) => {
    firstMessage = resolve;
  });

  const persist = async (symbol: string, candles: Candle[]) => {
    if (candles.length) await insertCandles(db, symbol, '1m', candles, 'binance');
  };

  const backfillSymbol = async (symbol: string) => {
    const at = now();
    const last = data.candles.last(symbol, '1m');
    const windowStart = Math.floor(at / MINUTE) * MINUTE - backfillMinutes * MINUTE;
    const from = last ? Math.max(windowStart, last.openTime + MINUTE) : windowStart;
    const candles = await rest.klines(symbol, '1m', from, at);
    const added = data.candles.merge(symbol, '1m', candles);
    for (const c of candles) {
      feed.backfillMinute(symbol, c.openTime, {
        open: toUnitsNumber(c.open),
        high: toUnitsNumber(c.high),
        low: toUnitsNumber(c.low),
        close: toUnitsNumber(c.close),
        volume: toUnits(c.volume),
        quoteVolume: c.quoteVolume ? toUnits(c.quoteVolume) : 0n,
        count: c.tradeCount ?? 0,
      });
    }
    const newest = candles.at(-1);
    if (newest && !feed.prices.get(symbol)) {
      feed.backfill({
        symbol,
        price: newest.close,
        priceUnits: toUnitsNumber(newest.close),
        quantity: fromUnits(0n),
        quantityUnits: 0n,
        time: newest.openTime + MINUTE - 1,
        tradeId: 0,
        isBuyerMaker: false,
        trade: false,
        source: 'binance',
      });
    }
    await persist(symbol, added);
  };

  const backfill = () => {
    if (settings.binance.stream !== 'trade') return;
    const queue = [...followed];
    const worker = async () => {
      for (let symbol = queue.shift(); symbol; symbol = queue.shift()) {
        try {
          await backfillSymbol(symbol);
        } catch (error) {
          lastError = `backfill ${symbol}: ${(error as Error).message}`;
          logger?.warn({ symbol, err: (error as Error).message }, 'binance kline backfill failed');
        }
      }
    };
    backfilling = backfilling.then(() => Promise.all([1, 2, 3, 4].map(worker)).then(() => {}));
  };

  const streams = () =>
    settings.binance.stream === 'miniTicker'
      ? ['!miniTicker@arr']
      : followed.map((s) => `${s.toLowerCase()}@trade`);

  const socket = reconnectingSocket({
    url: () => `${settings.binance.wsUrl}/stream?streams=${streams().join('/')}`,
    minDelayMs: settings.binance.reconnectMinMs,
    maxDelayMs: settings.binance.reconnectMaxMs,
    onMessage(text) {
      messages++;
      firstMessage();
      const decoded = decodeFrame(text);
      for (const ticker of decoded.tickers) if (data.pair(ticker.symbol)) feed.setExchangeTicker(ticker);
      for (const tick of decoded.ticks) if (data.pair(tick.symbol)) feed.ingest(tick);
    },
    onOpen(reconnect) {
      logger?.info({ reconnect, streams: streams().length }, 'binance stream connected');
      if (reconnect) {
        recorder?.restart(now());
        backfill();
      }
    },
    onClose(reason, retryInMs) {
      lastError = `stream ${reason}`;
      logger?.warn({ reason, retry_in_ms: retryInMs }, 'binance stream disconnected; reconnecting');
    },
  });

  return {
    name: 'binance',
    async start() {
      try {
        const snapshot = await rest.exchangeInfo();
        data.setPairs(snapshot, true);
        await insertPairSnapshot(db, 'binance', snapshot);
      } catch (error) {
        lastError = `exchangeInfo: ${(error as Error).message}`;
        if (data.pairs().length === 0) throw new Error(`binance source: cannot load pairs: ${lastError}`);
        logger?.warn({ err: lastError }, 'binance exchangeInfo failed; using the stored pair list');
      }
      try {
        const tickers = await rest.tickers24hr();
        data.setReferenceTickers(tickers);
        await insertReferenceTickers(db, tickers);
      } catch (error) {
        logger?.warn({ err: (error as Error).message }, 'binance ticker/24hr failed; no reference volumes');
      }
      const active = data
        .pairs()
        .filter((p) => p.status === 'active')
        .map((p) => p.symbol);
      followed = settings.symbols ? settings.symbols.filter((s) => data.pair(s)) : active;
      if (settings.binance.stream === 'trade') {
        recorder = recordLiveCandles(feed, data, (symbol, candles) => pending.push({ symbol, candles }));
        flushTimer = setInterval(() => {
          recorder?.flush(now());
          const batch = pending;
          pending = [];
          for (const { symbol, candles } of batch) {
            persist(symbol, candles).catch((e) =>
              logger?.warn({ err: (e as Error).message }, 'storing candles failed'),
            );
          }
        }, 5_000);
        flushTimer.unref();
      }
      socket.start();
      backfill();
      // Serve with prices when the exchange answers quickly; never block start-up for long.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        firstMessageSeen,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, options.startTimeoutMs ?? 5_000);
        }),
      ]);
      clearTimeout(timer);
    },
    async stop() {
      if (flushTimer) clearInterval(flushTimer);
      recorder?.stop();
      await socket.stop();
      await backfilling.catch(() => {});
    },
    status() {
      const age = socket.lastMessageAt ? now() - socket.lastMessageAt : null;
      return {
        ok: socket.connected && age !== null && age < 60_000,
        connected: socket.connected,
        connections: socket.connections,
        stream: settings.binance.stream,
        symbols: followed.length,
        messages,
        last_message_age_ms: age,
        ...(lastError ? { last_error: lastError } : {}),
      };
    },
    backfilled: () => backfilling,
  };
};
