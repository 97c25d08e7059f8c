/**
 * The Binance door's cost (issue 19, "Done when"): a signed `POST /binance/api/v3/order` against
 * `POST /api/v1/trade/order` for the same market orders, in one run on one runtime (`createRuntime` + `buildApp`,
 * embedded PGlite in a temporary directory, the synthetic feed), through `app.inject` so no socket stack is measured.
 * Both doors get the same orders (0.001 BTCUSDT market, buy and sell in turn so the wallets never drain), sent one at
 * a time in alternating blocks (REST, Binance, Binance, REST, …) so drift and background work (projections, the
 * matching engine) fall on both alike. Per door: p50/p99/max latency of the request and the process's CPU time per
 * order over its blocks (user + system, `process.cpuUsage`, which includes the background work the orders cause).
 * The Binance requests are signed just before they are sent, outside the measured time (a client's work).
 * Accounts: one per 40 orders, so the venue's 100-orders-per-minute limit is never reached (the limiter runs on
 * every request of both doors).
 *
 * The verdict is paired, so that it holds on a loaded machine: each pair of adjacent blocks (one per door, sent
 * back to back) gives a ratio Binance/REST of its CPU time and of its median latency; the run reports the median of
 * those ratios with a 95 % bootstrap interval (2,000 resamples of the pairs), and `within_15_percent` is `true` when
 * the interval's upper end of both is ≤ 1.15, `false` when its lower end of either is > 1.15, else `undetermined`.
 * Load from other processes stretches both blocks of a pair alike; what it does not cancel shows as a wider interval.
 *
 *   npx tsx bench/binance.ts [--orders 600] [--block 20] [--json out.json]
 *
 * Results: docs/benchmarks.md ("Binance door").
 */
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../src/config';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createRuntime } from '../src/runtime';
import { percentile, round } from './stats';

const options = new Command()
  .option('--orders <n>', 'orders per door', (v) => Number(v), 600)
  .option('--block <n>', 'orders per block', (v) => Number(v), 20)
  .option('--json <file>', 'write the results as JSON')
  .parse()
  .opts<{ orders: number; block: number; json?: string }>();

type Door = 'rest' | 'binance';
interface Account {
  apiKey: string;
  secret: string;
  /** Orders sent with it (buy, sell, buy, …). */
  sent: number;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-bench-binance-'));
const config = loadConfig({
  DATA_DIR: dataDir,
  MARKET_SOURCE: 'synthetic',
  MARKET_DATA_DIR: '',
  LOG_LEVEL: 'silent',
});
const runtime = await createRuntime(config, createLogger('silent', { pretty: false }));
const app: FastifyInstance = await buildApp(runtime.services);

const waitForPrice = async () => {
  for (let i = 0; i < 600; i++) {
    try {
      runtime.services.market?.getPrice('BTCUSDT');
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error('no BTCUSDT price');
};

const register = async (): Promise<Account> => {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    payload: { display_name: 'bench' },
    remoteAddress: `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
  });
  const body = res.json() as { api_key: string; api_secret: string };
  return { apiKey: body.api_key, secret: body.api_secret, sent: 0 };
};

/** Sends one order through `door` and returns its latency (ms); throws on anything but success. */
const send = async (door: Door, account: Account): Promise<number> => {
  const side = account.sent++ % 2 === 0 ? 'buy' : 'sell';
  if (door === 'rest') {
    const started = performance.now();
    const res = await app.inject({
      method: 'POST',
      url: '/api/v1/trade/order',
      headers: { 'x-api-key': account.apiKey },
      payload: { symbol: 'BTCUSDT', side, type: 'market', quantity: '0.001' },
    });
    const ms = performance.now() - started;
    if (res.statusCode !== 201) throw new Error(`REST order: ${res.statusCode} ${res.body}`);
    return ms;
  }
  const query = new URLSearchParams({
    symbol: 'BTCUSDT',
    side: side.toUpperCase(),
    type: 'MARKET',
    quantity: '0.001',
    timestamp: String(Date.now()),
  }).toString();
  const body = `${query}&signature=${createHmac('sha256', account.secret).update(query).digest('hex')}`;
  const started = performance.now();
  const res = await app.inject({
    method: 'POST',
    url: '/binance/api/v3/order',
    headers: { 'x-mbx-apikey': account.apiKey, 'content-type': 'application/x-www-form-urlencoded' },
    payload: body,
  });
  const ms = performance.now() - started;
  if (res.statusCode !== 200) throw new Error(`Binance order: ${res.statusCode} ${res.body}`);
  return ms;
};

/** The median of `values` and its 95 % bootstrap interval (2,000 resamples, a fixed seed: runs are comparable). */
const medianWithInterval = (values: readonly number[]) => {
  let seed = 0x9e3779b9;
  const random = () => {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const medians: number[] = [];
  for (let r = 0; r < 2000; r++) {
    const sample = values.map(() => values[Math.floor(random() * values.length)]!);
    medians.push(percentile(sample, 50));
  }
  return {
    median: round(percentile(values, 50)),
    low: round(percentile(medians, 2.5)),
    high: round(percentile(medians, 97.5)),
  };
};

await waitForPrice();
const accounts: Account[] = [];
for (let i = 0; i < Math.ceil((2 * options.orders) / 40); i++) accounts.push(await register());
// Warm-up: both doors' code paths and caches (credentials, signing secrets, wallets).
for (const a of accounts) {
  await send('rest', a);
  await send('binance', a);
}

const latencies: Record<Door, number[]> = { rest: [], binance: [] };
const cpuMicros: Record<Door, number> = { rest: 0, binance: 0 };
/** Per pair of adjacent blocks: Binance/REST of the CPU time and of the median latency. */
const pairCpu: number[] = [];
const pairP50: number[] = [];
const loadStart = os.loadavg()[0];
let next = 0;
const account = () => accounts[next++ % accounts.length]!;
const blocks = Math.ceil(options.orders / options.block);
for (let b = 0; b < blocks; b++) {
  const order: Door[] = b % 2 === 0 ? ['rest', 'binance'] : ['binance', 'rest'];
  const block: Record<Door, { cpu: number; p50: number }> = {
    rest: { cpu: 0, p50: 0 },
    binance: { cpu: 0, p50: 0 },
  };
  for (const door of order) {
    const cpu = process.cpuUsage();
    const times: number[] = [];
    for (let i = 0; i < options.block; i++) times.push(await send(door, account()));
    const used = process.cpuUsage(cpu);
    cpuMicros[door] += used.user + used.system;
    latencies[door].push(...times);
    block[door] = { cpu: used.user + used.system, p50: percentile(times, 50) };
  }
  pairCpu.push(block.binance.cpu / block.rest.cpu);
  pairP50.push(block.binance.p50 / block.rest.p50);
}

const summary = (door: Door) => {
  const sorted = [...latencies[door]].sort((a, b) => a - b);
  return {
    orders: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.at(-1) ?? 0),
    cpu_ms_per_order: round(cpuMicros[door] / 1000 / sorted.length),
  };
};
const rest = summary('rest');
const binance = summary('binance');
const result = {
  measured_at: new Date().toISOString(),
  load_average_at_start: round(loadStart ?? 0, 2),
  cpus: os.cpus().length,
  rest,
  binance,
  binance_over_rest: {
    p50: round(binance.p50_ms / rest.p50_ms - 1, 3),
    p99: round(binance.p99_ms / rest.p99_ms - 1, 3),
    cpu_per_order: round(binance.cpu_ms_per_order / rest.cpu_ms_per_order - 1, 3),
  },
  paired: {
    pairs: pairCpu.length,
    cpu_ratio: medianWithInterval(pairCpu),
    p50_ratio: medianWithInterval(pairP50),
  },
  within_15_percent: 'undetermined' as boolean | 'undetermined',
};
{
  const { cpu_ratio: cpu, p50_ratio: p50 } = result.paired;
  if (cpu.high <= 1.15 && p50.high <= 1.15) result.within_15_percent = true;
  else if (cpu.low > 1.15 || p50.low > 1.15) result.within_15_percent = false;
}
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(result, null, 2)}\n`);
await app.close();
await runtime.close();
fs.rmSync(dataDir, { recursive: true, force: true });
