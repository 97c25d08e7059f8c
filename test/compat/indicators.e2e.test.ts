import { describe, expect, it } from 'vitest';
import { rawCandles } from '../backtest/http-support';
import { client, useCompatTrader } from './support';

/**
 * Indicators (issue 17, item 10; docs/market-data.md "Indicators") on the real server process: the original SDK's
 * `GET /market/indicators/{symbol}` and `/market/indicators/available`, and the backtest sandbox's, whose values
 * come from the candles closed by the virtual clock only. Values are checked against arithmetic done here on the
 * candles the venue serves (live) or on the data set's CSV (sandbox), not against the library.
 */
const compat = useCompatTrader(1);

const HOUR = 3_600_000;
const ALL = 'rsi,macd,sma_20,ema_50,bbands,atr,vwap';

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sma = (closes: number[], n: number) => mean(closes.slice(-n));
/** Wilder's RSI over all closes (first average: the plain mean of the first `n` changes). */
const wilderRsi = (closes: number[], n: number) => {
  let gain = 0;
  let loss = 0;
  for (let i = 1; i <= n; i++) {
    const d = closes[i]! - closes[i - 1]!;
    gain += Math.max(d, 0) / n;
    loss += Math.max(-d, 0) / n;
  }
  for (let i = n + 1; i < closes.length; i++) {
    const d = closes[i]! - closes[i - 1]!;
    gain = (gain * (n - 1) + Math.max(d, 0)) / n;
    loss = (loss * (n - 1) + Math.max(-d, 0)) / n;
  }
  return loss === 0 ? 100 : 100 - 100 / (1 + gain / loss);
};
const close = (a: string | number, b: number, tolerance = 1e-6) =>
  expect(Math.abs(Number(a) - b)).toBeLessThanOrEqual(Math.abs(b) * tolerance + 1e-8);

describe('GET /market/indicators/{symbol}', () => {
  it('computes the original set over the newest closed candles, as the candles endpoint serves them', async () => {
    const anonymous = client(compat.base);
    let answer: any;
    let candles: any[] = [];
    // The replayed hour may turn between the two reads: read again until both name the same last candle.
    for (let attempt = 0; attempt < 3; attempt++) {
      answer = await anonymous('GET', `/market/indicators/BTCUSDT?indicators=${ALL}&interval=1h&limit=100`);
      candles = (await anonymous('GET', '/market/candles/BTCUSDT?interval=1h&limit=100')).body.candles;
      if (answer.body.last_candle_time === candles[candles.length - 1].time) break;
    }
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ symbol: 'BTCUSDT', interval: '1h', candles_used: 100 });
    expect(answer.body.last_candle_time).toBe(candles[candles.length - 1].time);
    const v = answer.body.indicators;
    expect(Object.keys(v)).toEqual(['rsi', 'macd', 'sma_20', 'ema_50', 'bbands', 'atr', 'vwap']);
    for (const value of Object.values(v)) expect(value).not.toBeNull();

    const closes = candles.map((c) => Number(c.close));
    close(v.sma_20, sma(closes, 20));
    close(v.bbands.middle, sma(closes, 20));
    const last20 = closes.slice(-20);
    const sd = Math.sqrt(mean(last20.map((x) => (x - sma(closes, 20)) ** 2)));
    close(Number(v.bbands.upper) - Number(v.bbands.lower), 4 * sd);
    close(v.rsi, wilderRsi(closes, 14));
    const typical = candles.map((c) => (Number(c.high) + Number(c.low) + Number(c.close)) / 3);
    const volume = candles.map((c) => Number(c.volume));
    close(v.vwap, typical.reduce((a, t, i) => a + t * volume[i]!, 0) / volume.reduce((a, b) => a + b, 0));
    close(Number(v.macd.macd) - Number(v.macd.signal), Number(v.macd.histogram));
    expect(v.sma_20).toMatch(/^\d+\.\d{8}$/);

    // The interval in seconds is the same request.
    const bySeconds = await anonymous(
      'GET',
      `/market/indicators/btcusdt?indicators=sma_20&interval=3600&limit=100`,
    );
    expect(bySeconds.body.interval).toBe('1h');
  });

  it('answers null for an indicator the candles are too few for, and refuses what it does not know', async () => {
    const anonymous = client(compat.base);
    const few = await anonymous(
      'GET',
      '/market/indicators/ETHUSDT?indicators=rsi,sma_20,vwap,sma_5&limit=10',
    );
    expect(few.status).toBe(200);
    expect(few.body.candles_used).toBe(10);
    expect(few.body.indicators).toMatchObject({ rsi: null, sma_20: null });
    expect(few.body.indicators.vwap).not.toBeNull();
    expect(few.body.indicators.sma_5).not.toBeNull();

    // Without `indicators`: the original set.
    const defaults = await anonymous('GET', '/market/indicators/ETHUSDT');
    expect(Object.keys(defaults.body.indicators)).toEqual(ALL.split(','));

    for (const [query, status, code] of [
      ['indicators=foo', 422, 'VALIDATION_ERROR'],
      ['indicators=sma_0', 422, 'VALIDATION_ERROR'],
      ['indicators=macd_5', 422, 'VALIDATION_ERROR'],
      ['interval=2h', 422, 'VALIDATION_ERROR'],
      ['limit=0', 422, 'VALIDATION_ERROR'],
    ] as const) {
      const r = await anonymous('GET', `/market/indicators/BTCUSDT?${query}`);
      expect(r.status, query).toBe(status);
      expect(r.body.error.code).toBe(code);
    }
    const unknown = await anonymous('GET', '/market/indicators/NOPEUSDT');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('INVALID_SYMBOL');
  });

  it('lists the available indicators', async () => {
    const r = await client(compat.base)('GET', '/market/indicators/available');
    expect(r.status).toBe(200);
    expect(r.body.indicators.map((i: any) => i.name)).toEqual([
      'rsi',
      'macd',
      'sma',
      'ema',
      'bbands',
      'atr',
      'vwap',
    ]);
    expect(r.body.default).toEqual(ALL.split(','));
    expect(r.body.indicators.find((i: any) => i.name === 'sma')).toMatchObject({
      default_period: 20,
      takes_period: true,
      required_candles: 20,
    });
  });
});

describe('GET /backtest/{id}/market/indicators/{symbol}', () => {
  it('uses only the candles closed by the virtual clock (no look-ahead)', async () => {
    const agent = client(compat.base, { apiKey: compat.trader.agents[0]!.apiKey });
    const created = await agent('POST', '/backtest/create', {
      start_time: '2023-01-01T00:00:00Z',
      end_time: '2023-01-10T00:00:00Z',
      starting_balance: '10000',
      candle_interval: 3600,
      pairs: ['BTCUSDT'],
    });
    const id = created.body.session_id as string;
    await agent('POST', `/backtest/${id}/start`);
    await agent('POST', `/backtest/${id}/step/batch`, { steps: 30 });

    const raw = rawCandles('BTCUSDT');
    const closesBefore = (at: number, n: number) => {
      const out: number[] = [];
      for (let open = at - HOUR; out.length < n; open -= HOUR) {
        const c = raw.get(open);
        if (c) out.unshift(c.close);
      }
      return out;
    };

    const first = await agent(
      'GET',
      `/backtest/${id}/market/indicators/BTCUSDT?indicators=sma_20,rsi&limit=50`,
    );
    expect(first.status).toBe(200);
    const at = Date.parse(first.body.virtual_time);
    expect(at).toBe(Date.parse('2023-01-01T00:00:00Z') + 30 * HOUR);
    // The newest candle used is the one that closed at the virtual time; candles before the start count.
    expect(Date.parse(first.body.last_candle_time)).toBe(at - HOUR);
    expect(first.body.candles_used).toBe(50);
    close(first.body.indicators.sma_20, sma(closesBefore(at, 20), 20));
    close(first.body.indicators.rsi, wilderRsi(closesBefore(at, 50), 14));
    // The candle forming at the virtual time (closing an hour later) would give another value.
    const withNext = sma(closesBefore(at + HOUR, 20), 20);
    expect(Math.abs(Number(first.body.indicators.sma_20) - withNext)).toBeGreaterThan(1e-6);

    // One step on, that candle has closed and is used.
    await agent('POST', `/backtest/${id}/step`);
    const next = await agent(
      'GET',
      `/backtest/${id}/market/indicators/BTCUSDT?indicators=sma_20&interval=3600`,
    );
    expect(Date.parse(next.body.last_candle_time)).toBe(at);
    close(next.body.indicators.sma_20, withNext);

    // A coarser interval: only 4h candles closed by the virtual time.
    const coarse = await agent(
      'GET',
      `/backtest/${id}/market/indicators/BTCUSDT?indicators=vwap&interval=4h`,
    );
    expect(coarse.status).toBe(200);
    expect(Date.parse(coarse.body.last_candle_time) + 4 * HOUR).toBeLessThanOrEqual(at + HOUR);

    const outside = await agent('GET', `/backtest/${id}/market/indicators/ETHUSDT`);
    expect(outside.status).toBe(400);
    expect(outside.body.error.code).toBe('INVALID_SYMBOL');
  });
});
