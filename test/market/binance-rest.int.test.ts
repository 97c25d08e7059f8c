import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binanceRest } from '../../src/market/sources/binance-rest';
import { type FakeBinance, startFakeBinance } from './fake-binance';

/**
 * The REST backfill against a local Binance stand-in that answers errors first (issue 15, item 5): rate limits and
 * server errors are asked again (after the server's `Retry-After`), a client error is not.
 */
let fake: FakeBinance;
beforeAll(async () => {
  fake = await startFakeBinance();
});
afterAll(async () => {
  await fake?.close();
});

const exchangeInfoRequests = () => fake.requests.filter((r) => r === '/api/v3/exchangeInfo').length;

describe('Binance REST client', () => {
  it('waits out a 429 Retry-After, then gets the answer', async () => {
    const before = exchangeInfoRequests();
    fake.failNext({ status: 429, retryAfterSeconds: 1 });
    const started = performance.now();
    const snapshot = await binanceRest(fake.restUrl).exchangeInfo();
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(snapshot.pairs.length).toBeGreaterThan(400);
    expect(exchangeInfoRequests() - before).toBe(2);
  });

  it('asks again after server errors and a 418 ban', async () => {
    const before = exchangeInfoRequests();
    fake.failNext({ status: 503 }, { status: 500 }, { status: 418, retryAfterSeconds: 0 });
    const snapshot = await binanceRest(fake.restUrl).exchangeInfo();
    expect(snapshot.pairs.length).toBeGreaterThan(400);
    expect(exchangeInfoRequests() - before).toBe(4);
  });

  it('fails at once on a client error, naming the URL and status', async () => {
    const before = exchangeInfoRequests();
    fake.failNext({ status: 400 });
    await expect(binanceRest(fake.restUrl).exchangeInfo()).rejects.toThrow(
      /GET http:\/\/127\.0\.0\.1:\d+\/api\/v3\/exchangeInfo: HTTP 400/,
    );
    expect(exchangeInfoRequests() - before).toBe(1);
  });

  it('gives up after its retries when the server keeps failing', async () => {
    const before = exchangeInfoRequests();
    fake.failNext(...Array.from({ length: 5 }, () => ({ status: 502 })));
    await expect(binanceRest(fake.restUrl).exchangeInfo()).rejects.toThrow(/HTTP 502/);
    expect(exchangeInfoRequests() - before).toBe(5);
  }, 30_000);
});
