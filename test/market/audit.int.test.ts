import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseIsoTime } from '../../domain/market/time';
import { parseQueryTime } from '../../src/market/query-time';
import { startApp, type TestApp } from '../accounts/support';
import { call } from '../support/api-calls';
import { linkedDataDir } from './support';

/**
 * Regressions of the interface audit of `/market/*`, on a real runtime replaying the real BTCUSDT and ETHUSDT
 * hourly files:
 * - a day that does not exist (`2022-02-30`) in `start_time`/`end_time` was rolled over into March by
 *   `Date.parse` and answered with candles of another day; it is `VALIDATION_ERROR` 422 now;
 * - a symbol longer than 32 characters was `VALIDATION_ERROR` 422, where the spec gives an unknown pair
 *   `INVALID_SYMBOL` 400.
 */
let t: TestApp;
let remove: () => void;

beforeAll(async () => {
  const data = linkedDataDir(['exchangeInfo.json', 'klines/1h/BTCUSDT-1h.csv', 'klines/1h/ETHUSDT-1h.csv']);
  remove = data.remove;
  t = await startApp({ env: { MARKET_DATA_DIR: data.dir } });
  await t.app.services.market!.persisted();
}, 90_000);

afterAll(async () => {
  await t?.close();
  remove?.();
});

const get = (url: string) => call(t.app, {}, 'GET', url);

describe('candle query times', () => {
  it('refuses a day that does not exist, in start_time and end_time', async () => {
    for (const [field, value] of [
      ['start_time', '2022-02-30T00:00:00Z'],
      ['start_time', '2021-02-29'],
      ['end_time', '2022-04-31T12:00:00Z'],
      ['end_time', '2022-00-10T00:00:00Z'],
      ['start_time', '2022-01-00T00:00:00Z'],
    ]) {
      const r = await get(`/market/candles/BTCUSDT?${field}=${value}`);
      expect([r.status, r.body.error?.code], `${field}=${value}: ${r.raw}`).toEqual([
        422,
        'VALIDATION_ERROR',
      ]);
      expect(r.body.error.details.issues).toEqual([
        expect.objectContaining({ field, location: 'querystring' }),
      ]);
    }
  });

  it('still takes real days (leap days included), zones and epoch milliseconds', async () => {
    const iso = await get('/market/candles/BTCUSDT?start_time=2022-03-01T00:00:00Z&limit=1');
    expect(iso.body.candles[0].time).toBe('2022-03-01T00:00:00.000Z');
    const leap = await get('/market/candles/BTCUSDT?start_time=2024-02-29T00:00:00Z&limit=1');
    expect([leap.status, leap.body.count]).toEqual([200, 0]);
    const zoned = await get('/market/candles/BTCUSDT?start_time=2022-03-01T02:00:00%2B02:00&limit=1');
    expect(zoned.body.candles[0].time).toBe('2022-03-01T00:00:00.000Z');
    const ms = await get(`/market/candles/BTCUSDT?start_time=${Date.parse('2022-03-01T00:00:00Z')}&limit=1`);
    expect(ms.body.candles[0].time).toBe('2022-03-01T00:00:00.000Z');
  });

  it('parses strictly (unit)', () => {
    expect(parseIsoTime('2022-02-28T23:00:00Z')).toBe(Date.UTC(2022, 1, 28, 23));
    expect(parseIsoTime('2020-02-29')).toBe(Date.UTC(2020, 1, 29));
    expect(parseIsoTime('2022-12-31 23:59:59')).toBe(Date.UTC(2022, 11, 31, 23, 59, 59));
    expect(parseIsoTime('2022-01-01T01:00:00+01:00')).toBe(Date.UTC(2022, 0, 1));
    for (const bad of [
      '2022-02-29',
      '2022-02-30T00:00:00Z',
      '2022-06-31',
      '2022-13-01',
      '2022-00-01',
      'now',
      '',
    ]) {
      expect(parseIsoTime(bad), bad).toBeUndefined();
    }
    expect(parseQueryTime('1640995200000')).toBe(Date.UTC(2022, 0, 1));
    expect(parseQueryTime('2022-02-30')).toBeUndefined();
  });
});

describe('unknown symbols of any length', () => {
  it('are INVALID_SYMBOL 400 on every one-pair endpoint', async () => {
    for (const symbol of ['X'.repeat(33), 'Y'.repeat(100)]) {
      for (const path of ['price', 'ticker', 'candles', 'trades', 'orderbook']) {
        const r = await get(`/market/${path}/${symbol}`);
        expect([r.status, r.body.error?.code], `${path}/${symbol}: ${r.raw}`).toEqual([
          400,
          'INVALID_SYMBOL',
        ]);
      }
    }
  });
});
