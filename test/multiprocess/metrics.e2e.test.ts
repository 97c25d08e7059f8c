import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { postgresPassOnlyReason } from '../support/databases';
import { createAgents, quantityWorth, runOrderLoad } from './load';
import { type Cluster, startCluster, type VenueProcess } from './support';

/**
 * Issue 16, item 6: `/metrics` of two API processes and a worker scraped under a burst of orders. The order,
 * fill, request and append-batch counters move by what the burst did; the projection lag rises while the worker
 * is held (SIGSTOP) and falls back to 0 once it folds again; each process says its role and which singleton roles
 * it holds; the endpoint is for the operator only.
 */
const reason = await postgresPassOnlyReason();
if (reason) console.warn(`multi-process metrics test skipped: ${reason}`);

type Sample = { name: string; labels: Record<string, string>; value: number };

/** Parses Prometheus' text exposition format (enough of it: no escaped quotes in our label values). */
const parse = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
      if (!m) throw new Error(`unparsable metrics line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[k!] = v!;
      return { name: m[1]!, labels, value: Number(m[3]) };
    });

/** Sum of the samples named `name` whose labels include `where`. */
const sum = (samples: Sample[], name: string, where: Record<string, string> = {}) =>
  samples
    .filter((s) => s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);

describe.skipIf(reason !== null)('/metrics of several processes', () => {
  let cluster: Cluster;
  const scrape = async (p: VenueProcess): Promise<Sample[]> => {
    const res = await fetch(`${p.url}/metrics`, { headers: cluster.operator });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    return parse(await res.text());
  };
  const scrapeAll = () => Promise.all(cluster.all.map(scrape));

  beforeAll(async () => {
    cluster = await startCluster({ api: 2, workers: 1 });
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
  });

  it('is for the operator only', async () => {
    for (const p of cluster.all) {
      const res = await fetch(`${p.url}/metrics`);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_TOKEN');
    }
  });

  it('moves the counters and the projection lag as a burst of orders goes through', async () => {
    const [a, b] = cluster.api as [VenueProcess, VenueProcess];
    const worker = cluster.workers[0]!;
    const agents = await createAgents(a.url, 2, 8);
    const quantity = await quantityWorth(a.url, 'BTCUSDT', 12);
    const socket = new WebSocket(`${b.url.replace('http', 'ws')}/ws/v1?api_key=${agents[0]!.apiKey}`);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const before = await scrapeAll();

    // Each process says its role; the worker alone runs the matching engine, and holds its leadership.
    expect(
      before.map((s) => s.find((x) => x.name === 'ptv_leader' || x.name === 'ptv_database_up')?.labels.role),
    ).toEqual(['api', 'api', 'worker']);
    expect(before.map((s) => sum(s, 'ptv_leader', { leadership: 'matching_engine' }))).toEqual([0, 0, 1]);
    expect(before.map((s) => sum(s, 'ptv_database_up'))).toEqual([1, 1, 1]);
    for (const s of before)
      expect(s.some((x) => x.name === 'ptv_nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(sum(before[1]!, 'ptv_websocket_connections')).toBe(1);
    expect(sum(before[0]!, 'ptv_market_feed_lag_seconds')).toBeLessThan(30);

    // The burst: 16 agents at 120 orders/s for 6 s over both API processes; the worker is held for 2 s of it.
    const bases = [a.url, b.url];
    const loading = runOrderLoad({
      bases,
      agents,
      symbol: 'BTCUSDT',
      quantity,
      ratePerSecond: 120,
      durationMs: 6_000,
    });
    await new Promise((r) => setTimeout(r, 2_000));
    worker.process.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 2_000));
    const held = await scrape(a);
    worker.process.kill('SIGCONT');
    const load = await loading;
    expect(load.refused).toEqual([]);
    const lagged = held.filter((s) => s.name === 'ptv_projection_lag_events' && s.value > 0);
    expect(lagged.length).toBeGreaterThan(0);
    expect(
      Math.max(...held.filter((s) => s.name === 'ptv_projection_lag_seconds').map((s) => s.value)),
    ).toBeGreaterThan(0.5);

    // Caught up again: every read model's lag back to 0.
    let after: Sample[][] = [];
    for (let i = 0; i < 100; i++) {
      after = await scrapeAll();
      if (after.every((s) => sum(s, 'ptv_projection_lag_events') === 0)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const s of after) expect(sum(s, 'ptv_projection_lag_events')).toBe(0);

    const delta = (name: string, where: Record<string, string> = {}) =>
      after.map((s, i) => sum(s, name, where) - sum(before[i]!, name, where));
    const placed = delta('ptv_wallet_events_total', { type: 'OrderPlaced' });
    const filled = delta('ptv_wallet_events_total', { type: 'OrderFilled' });
    const requests = delta('ptv_http_requests_total', { method: 'POST', route: '/api/v1/trade/order' });
    const batches = delta('ptv_eventstore_append_batch_size_count');
    console.log(
      `[metrics] ${load.acked.length} orders acknowledged; per process (api, api, worker): placed ${placed}, ` +
        `filled ${filled}, order requests ${requests}, append batches ${batches}; lag while held: ` +
        lagged.map((s) => `${s.labels.projection}=${s.value}`).join(' '),
    );
    expect(placed[0]! + placed[1]!).toBe(load.acked.length);
    expect(placed[0]).toBeGreaterThan(0);
    expect(placed[1]).toBeGreaterThan(0);
    expect(filled[0]! + filled[1]! + filled[2]!).toBeGreaterThanOrEqual(load.acked.length);
    expect(requests[0]! + requests[1]!).toBe(load.sent);
    expect(batches[0]).toBeGreaterThan(0);
    expect(batches[1]).toBeGreaterThan(0);
    socket.close();
  }, 120_000);
});
