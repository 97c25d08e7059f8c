import type { Subscription } from 'rxjs';
import type { z } from 'zod';
import { fromUnits } from '../../../domain/market/decimal';
import {
  INTERVAL_CHOICES,
  INTERVAL_MS,
  type Interval,
  isInterval,
  unsupportedInterval,
} from '../../../domain/market/intervals';
import { normalizeSymbol } from '../../../domain/market/pair';
import { isoMillis } from '../../../domain/market/time';
import { DomainError } from '../../../domain/shared/errors';
import { intervalText } from '../../contract/common';
import type { candleMessageData } from '../../contract/ws';
import { addToKeyedSet, deleteFromKeyedSet, deleteIfCurrent } from '../../core/keyed-sets';
import type { MarketServices } from '../../market/services';
import type { PriceTick } from '../../market/ticks';
import type { WsChannel, WsChannelFactory } from './registry';

/**
 * The public `candles` channel of `/ws/v1` (issue 17, item 9; docs/market-data.md "WebSocket"): subscribe with
 * `{action: 'subscribe', channel: 'candles', symbol: 'BTCUSDT', interval: '1m'}` (interval `1m` … `1d` or seconds;
 * default `1m`). On every tick of the symbol the forming candle is sent (`type: 'candle'`, `is_closed: false`);
 * when its interval ends the final candle is sent once (`type: 'candle_closed'`, `is_closed: true`) — at the first
 * tick of the next candle or, without one, within {@link CLOSE_CHECK_MS} of the boundary. Candles are folded from
 * the market feed's one-minute buckets (`RollingWindow`), so a subscription made mid-candle gets the whole candle
 * so far, not only the ticks since. Times are the ticks' (wall clock).
 */
const CHANNEL = 'candles';
/** How often candles whose interval has ended without a new tick are closed (ms). */
const CLOSE_CHECK_MS = 250;

type Listener = (message: string) => void;

/** Open time (ms) of the `interval` candle containing `timeMs`: UTC-aligned multiples of the interval. */
const bucketStart = (timeMs: number, interval: Interval): number => {
  const ms = INTERVAL_MS[interval];
  return Math.floor(timeMs / ms) * ms;
};
type CandleData = z.output<typeof candleMessageData>;

/** One symbol and interval followed by at least one socket. */
interface Stream {
  symbol: string;
  interval: Interval;
  listeners: Set<Listener>;
  /** Open time of the candle forming (a forming message was sent for it and its close was not). */
  forming: number | undefined;
}

/** Fan-out of candle messages for one application instance: each message is serialized once for all sockets. */
class CandleHub {
  private readonly streams = new Map<string, Stream>();
  private readonly bySymbol = new Map<string, Set<Stream>>();
  private readonly subscription: Subscription;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly market: MarketServices) {
    this.subscription = market.ticks$.subscribe((tick) => this.onTick(tick));
    this.timer = setInterval(() => this.closeDue(Date.now()), CLOSE_CHECK_MS);
    this.timer.unref();
  }

  /** The candle of `symbol` and `interval` opened at `openTime`, from the feed at `now`; undefined without ticks. */
  private candle(
    symbol: string,
    interval: Interval,
    openTime: number,
    now: number,
    closed: boolean,
  ): CandleData | undefined {
    const ms = INTERVAL_MS[interval];
    const s = this.market.feed.candle(symbol, openTime, ms, now);
    if (!s) return undefined;
    return {
      symbol,
      interval,
      time: isoMillis(openTime),
      close_time: isoMillis(openTime + ms - 1),
      open: fromUnits(s.open),
      high: fromUnits(s.high),
      low: fromUnits(s.low),
      close: fromUnits(s.close),
      volume: fromUnits(s.volume),
      quote_volume: fromUnits(s.quoteVolume),
      trade_count: s.tradeCount,
      is_closed: closed,
    };
  }

  /**
   * Adds a listener of `symbol` at `interval` and returns `{ stop, first }`: `stop` removes it (and drops the stream
   * with its last listener; calling it again, even once a new stream of the same candles has been made for other
   * listeners, changes nothing); `first` is the candle so far to send the new listener at once, or undefined
   * without ticks. That candle is the stream's forming one while it has not been closed, though its interval may
   * have ended by `now` (its close follows, so the listener never sees a minute begin before the last one closed);
   * else the candle containing `now`, which becomes the stream's forming one so that its close is sent too.
   */
  listen(
    symbol: string,
    interval: Interval,
    listener: Listener,
    now: number,
  ): { stop: () => void; first: CandleData | undefined } {
    const key = `${symbol}|${interval}`;
    let stream = this.streams.get(key);
    if (!stream) {
      stream = { symbol, interval, listeners: new Set(), forming: undefined };
      this.streams.set(key, stream);
      addToKeyedSet(this.bySymbol, symbol, stream);
    }
    const s = stream;
    s.listeners.add(listener);
    const openTime = s.forming ?? bucketStart(now, interval);
    const first = this.candle(symbol, interval, openTime, now, false);
    if (first) s.forming = openTime;
    const stop = () => {
      s.listeners.delete(listener);
      if (s.listeners.size > 0 || !deleteIfCurrent(this.streams, key, s)) return;
      deleteFromKeyedSet(this.bySymbol, symbol, s);
    };
    return { stop, first };
  }

  close(): void {
    this.subscription.unsubscribe();
    clearInterval(this.timer);
  }

  private onTick(tick: PriceTick): void {
    const streams = this.bySymbol.get(tick.symbol);
    if (!streams) return;
    for (const s of streams) {
      const openTime = bucketStart(tick.time, s.interval);
      if (s.forming !== undefined && openTime < s.forming) continue; // a late tick of a closed candle
      if (s.forming !== undefined && openTime > s.forming) this.closeCandle(s, tick.time);
      s.forming = openTime;
      this.publish(s, 'candle', this.candle(s.symbol, s.interval, openTime, tick.time, false));
    }
  }

  /** Closes the candles whose interval has ended by `now` though no tick of the next one came. */
  private closeDue(now: number): void {
    for (const s of this.streams.values()) {
      if (s.forming !== undefined && s.forming + INTERVAL_MS[s.interval] <= now) this.closeCandle(s, now);
    }
  }

  private closeCandle(s: Stream, now: number): void {
    const openTime = s.forming!;
    s.forming = undefined;
    this.publish(s, 'candle_closed', this.candle(s.symbol, s.interval, openTime, now, true));
  }

  private publish(s: Stream, type: 'candle' | 'candle_closed', data: CandleData | undefined): void {
    if (!data) return;
    const message = JSON.stringify({ channel: CHANNEL, type, data });
    for (const listener of s.listeners) listener(message);
  }
}

const candlesChannel = (market: MarketServices): WsChannel => {
  const hub = new CandleHub(market);
  return {
    name: CHANNEL,
    subscription(message, connection) {
      if (typeof message['symbol'] !== 'string' || message['symbol'].trim() === '') {
        throw new DomainError('VALIDATION_ERROR', 'the candles channel needs a "symbol"', {
          field: 'symbol',
        });
      }
      const symbol = normalizeSymbol(message['symbol']);
      market.requirePair(symbol, { active: true });
      const given = message['interval'] ?? '1m';
      const interval = typeof given === 'string' || typeof given === 'number' ? intervalText(given) : '';
      if (!isInterval(interval)) {
        // An unknown interval name (a string, as REST's query always is) is the REST candles' refusal (spec
        // "Errors": an unsupported candle interval is INVALID_SYMBOL); a value of another type — an object, a
        // boolean, a number of seconds the venue does not serve — is a malformed message.
        if (typeof given === 'string') throw unsupportedInterval(interval);
        throw new DomainError('VALIDATION_ERROR', `"interval" must be one of ${INTERVAL_CHOICES}`, {
          field: 'interval',
        });
      }
      return {
        key: `${CHANNEL}:${symbol}:${interval}`,
        ack: { symbol, interval },
        start: () => {
          const { stop, first } = hub.listen(symbol, interval, (m) => connection.sendRaw(m), Date.now());
          // The candle so far, at once (like the ticker channel's first message).
          if (first) connection.send(CHANNEL, 'candle', first);
          return stop;
        },
      };
    },
    close: () => hub.close(),
  };
};

/** Registry entry of the `candles` channel (added to `wsChannels` by the socket plugin module). */
export const candlesChannels: WsChannelFactory[] = [
  { name: CHANNEL, create: (services) => (services.market ? candlesChannel(services.market) : undefined) },
];
