import type { VenueResponse } from './venue-client';

/** What a {@link startProber} run measured: latencies (ms, from when each request was due) and statuses. */
export interface ProberRecord {
  price: number[];
  order: number[];
  /** Count per `"<kind> <status>"` (status 0: the request failed). */
  statuses: Record<string, number>;
}

/**
 * How many answers of each kind a prober had recorded when asked (the index where a phase starts), and a copy of its
 * status counts then (a phase's statuses are the difference of two).
 */
export interface ProberCounts {
  price: number;
  order: number;
  statuses: Record<string, number>;
}

/** A record with nothing in it yet. */
export const emptyRecord = (): ProberRecord => ({ price: [], order: [], statuses: {} });

/** The {@link ProberCounts} of `record` now. */
export const countsOf = (record: ProberRecord): ProberCounts => ({
  price: record.price.length,
  order: record.order.length,
  statuses: { ...record.statuses },
});

/** The statuses answered between two {@link ProberCounts}' copies (`to` minus `from`, kinds that moved only). */
export const statusesBetween = (
  from: Record<string, number>,
  to: Record<string, number>,
): Record<string, number> =>
  Object.fromEntries(
    Object.entries(to)
      .map(([kind, n]) => [kind, n - (from[kind] ?? 0)] as const)
      .filter(([, n]) => n > 0),
  );

/**
 * The live path's prober of the backtest benches (bench/backtest-prober.ts, bench/market-scale.ts `--concurrent`):
 * open loop, one request every `every` ms — `GET /market/price/BTCUSDT` and a 0.001 BTC market order
 * (`POST /trade/order`, buys and sells in turn) alternately — rotating over `keys` (agents' API keys: the rate limits
 * are per caller), each timed from when it was due (no coordinated omission). `stop()` waits for the requests in
 * flight. `record` fills as answers arrive (read it to split phases).
 */
export const startProber = (
  call: (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<VenueResponse>,
  keys: readonly string[],
  every: number,
) => {
  const record = emptyRecord();
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  let probing = true;
  const inflight: Promise<void>[] = [];
  const t0 = performance.now();
  const loop = (async () => {
    for (let tick = 0; probing; ) {
      const due = t0 + tick * every;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const key = keys[tick % keys.length]!;
      const side = Math.floor(tick / keys.length) % 2 === 0 ? 'buy' : 'sell';
      tick++;
      const timed = async (into: number[], label: string, f: () => Promise<{ status: number }>) => {
        const r = await f().catch(() => ({ status: 0 }));
        into.push(performance.now() - due);
        record.statuses[`${label} ${r.status}`] = (record.statuses[`${label} ${r.status}`] ?? 0) + 1;
      };
      inflight.push(
        tick % 2 === 1
          ? timed(record.price, 'price', () =>
              call('GET', '/market/price/BTCUSDT', undefined, { 'x-api-key': key }),
            )
          : timed(record.order, 'order', () =>
              call(
                'POST',
                '/trade/order',
                { symbol: 'BTCUSDT', side, type: 'market', quantity: '0.001' },
                { 'x-api-key': key },
              ),
            ),
      );
    }
  })();
  return {
    record,
    startedAt: t0,
    async stop(): Promise<ProberRecord> {
      probing = false;
      await loop;
      await Promise.all(inflight);
      return record;
    },
  };
};
