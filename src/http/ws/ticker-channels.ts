import type { Subscription } from 'rxjs';
import type { z } from 'zod';
import { normalizeSymbol } from '../../../domain/market/pair';
import { isoMicros, isoMillis } from '../../../domain/market/time';
import { DomainError } from '../../../domain/shared/errors';
import type { tickerMessageData } from '../../contract/ws';
import { addToKeyedSet, deleteFromKeyedSet } from '../../core/keyed-sets';
import type { MarketServices } from '../../market/services';
import type { PriceTick } from '../../market/ticks';
import type { WsChannel, WsChannelFactory } from './registry';

/**
 * The public price channels of `/ws/v1` (ARCHITECTURE §13; the spec leaves the message shape open):
 * - `ticker` (per symbol; subscribe with `{action: 'subscribe', channel: 'ticker', symbol: 'BTCUSDT'}` or
 *   `channel: 'ticker:BTCUSDT'`): `{channel: 'ticker', type: 'ticker', data}` on price updates, at most one
 *   every {@link THROTTLE_MS} ms per symbol (the newest price wins).
 * - `ticker_all`: `{channel: 'ticker_all', type: 'tickers', data: [...]}` once a second with the symbols that
 *   changed.
 * `data` of a ticker: `symbol`, `price`, `timestamp` (of the price, microseconds) and the rolling 24h values
 * `open`, `high`, `low`, `close`, `volume`, `quote_volume`, `change`, `change_pct`, `trade_count`,
 * `window_timestamp` (decimal strings; 24h values omitted until a window exists). Messages are serialized once
 * and sent to every subscriber.
 */
export const THROTTLE_MS = 250;
const ALL_PERIOD_MS = 1000;

type Listener = (message: string) => void;

/** Fan-out of ticker messages for one application instance. */
export class TickerHub {
  private readonly perSymbol = new Map<string, Set<Listener>>();
  private readonly all = new Set<Listener>();
  private readonly lastSent = new Map<string, number>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly changed = new Map<string, Record<string, unknown>>();
  private readonly subscription: Subscription;
  private readonly allTimer: NodeJS.Timeout;

  constructor(private readonly market: MarketServices) {
    this.subscription = market.ticks$.subscribe((tick) => this.onTick(tick));
    this.allTimer = setInterval(() => this.flushAll(), ALL_PERIOD_MS);
    this.allTimer.unref();
  }

  /** The ticker payload of `symbol` now (also used by tests). */
  payload(symbol: string): z.output<typeof tickerMessageData> | undefined {
    const price = this.market.feed.prices.get(symbol);
    if (!price) return undefined;
    const t = this.market.feed.ticker(symbol);
    return {
      symbol,
      price: price.price,
      timestamp: isoMicros(price.time),
      ...(t
        ? {
            open: t.open,
            high: t.high,
            low: t.low,
            close: t.close,
            volume: t.volume,
            quote_volume: t.quoteVolume,
            change: t.change,
            change_pct: t.changePct,
            trade_count: t.tradeCount,
            window_timestamp: isoMillis(t.time),
          }
        : {}),
    };
  }

  listen(symbol: string, listener: Listener): () => void {
    addToKeyedSet(this.perSymbol, symbol, listener);
    return () => deleteFromKeyedSet(this.perSymbol, symbol, listener);
  }

  listenAll(listener: Listener): () => void {
    this.all.add(listener);
    return () => this.all.delete(listener);
  }

  close(): void {
    this.subscription.unsubscribe();
    clearInterval(this.allTimer);
    for (const t of this.pending.values()) clearTimeout(t);
    this.pending.clear();
  }

  private onTick(tick: PriceTick): void {
    if (this.all.size) this.changed.set(tick.symbol, {});
    if (!this.perSymbol.has(tick.symbol) || this.pending.has(tick.symbol)) return;
    const wait = (this.lastSent.get(tick.symbol) ?? 0) + THROTTLE_MS - Date.now();
    if (wait <= 0) this.publish(tick.symbol);
    else {
      const timer = setTimeout(() => {
        this.pending.delete(tick.symbol);
        this.publish(tick.symbol);
      }, wait);
      this.pending.set(tick.symbol, timer);
    }
  }

  private publish(symbol: string): void {
    const listeners = this.perSymbol.get(symbol);
    if (!listeners?.size) return;
    const data = this.payload(symbol);
    if (!data) return;
    this.lastSent.set(symbol, Date.now());
    const message = JSON.stringify({ channel: 'ticker', type: 'ticker', data });
    for (const listener of listeners) listener(message);
  }

  private flushAll(): void {
    if (this.changed.size === 0 || this.all.size === 0) {
      this.changed.clear();
      return;
    }
    const data = [...this.changed.keys()].sort().flatMap((s) => this.payload(s) ?? []);
    this.changed.clear();
    const message = JSON.stringify({ channel: 'ticker_all', type: 'tickers', data });
    for (const listener of this.all) listener(message);
  }
}

const hubs = new WeakMap<MarketServices, { hub: TickerHub; users: number }>();

const hubFor = (market: MarketServices) => {
  let entry = hubs.get(market);
  if (!entry) {
    entry = { hub: new TickerHub(market), users: 0 };
    hubs.set(market, entry);
  }
  entry.users++;
  return {
    hub: entry.hub,
    release: () => {
      const e = hubs.get(market);
      if (e && --e.users === 0) {
        e.hub.close();
        hubs.delete(market);
      }
    },
  };
};

const tickerChannel = (market: MarketServices): WsChannel => {
  const { hub, release } = hubFor(market);
  return {
    name: 'ticker',
    subscription(message, connection) {
      if (typeof message['symbol'] !== 'string' || message['symbol'].trim() === '') {
        throw new DomainError(
          'VALIDATION_ERROR',
          'the ticker channel needs a "symbol" (or channel "ticker:SYMBOL")',
          { field: 'symbol' },
        );
      }
      const symbol = normalizeSymbol(message['symbol']);
      // An inactive pair never ticks: refuse it like the REST market endpoints do.
      market.requirePair(symbol, { active: true });
      return {
        key: `ticker:${symbol}`,
        ack: { symbol },
        start: () => {
          const stop = hub.listen(symbol, (m) => connection.sendRaw(m));
          const now = hub.payload(symbol);
          if (now) connection.send('ticker', 'ticker', now);
          return stop;
        },
      };
    },
    close: release,
  };
};

const tickerAllChannel = (market: MarketServices): WsChannel => {
  const { hub, release } = hubFor(market);
  return {
    name: 'ticker_all',
    subscription(_message, connection) {
      return {
        key: 'ticker_all',
        ack: {},
        start: () => hub.listenAll((m) => connection.sendRaw(m)),
      };
    },
    close: release,
  };
};

/** Registry entries of the two public channels (added to `wsChannels` by the socket plugin module). */
export const tickerChannels: WsChannelFactory[] = [
  { name: 'ticker', create: (services) => (services.market ? tickerChannel(services.market) : undefined) },
  {
    name: 'ticker_all',
    create: (services) => (services.market ? tickerAllChannel(services.market) : undefined),
  },
];
