/**
 * Market-data benchmark (issue "Done when"; ARCHITECTURE §7, §13): the real server on the real data set
 * (`MARKET_DATA_DIR=../shared/market-data`), measured from this process:
 * - `GET /api/v1/market/price/BTCUSDT` and `GET /api/v1/market/candles/BTCUSDT?limit=1000` with autocannon
 *   (p50, p99, requests/s). The load plays `--clients` distinct clients (header `X-Bench-Client`, see
 *   `bench/market-server.ts`) so the per-client limit of 1,200 requests per minute is not what is measured;
 *   every response must be 200.
 * - WebSocket fan-out: `--subscribers` sockets subscribed to `ticker` BTCUSDT; delivery latency = arrival time
 *   − the tick's timestamp (the replay emits each tick at a whole second, so this covers the whole path:
 *   timer, price cache, ticker, serialization, 500 sends, the client's receive).
 *
 * - Baseline: a bare `node:http` server answering a fixed body, measured the same way: the ceiling of the
 *   machine and the load generator (which share the CPUs).
 *
 *   npx tsx bench/market.ts [--duration 10] [--connections 64] [--subscribers 500] [--json out.json]
 *
 * Targets: ≥ 10,000 price requests/s, candles p99 ≤ 20 ms, fan-out p99 ≤ 100 ms. Results and the machine are
 * recorded in `docs/benchmarks.md` ("Market data").
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import WebSocket from 'ws';
import { type ListeningChild, spawnListening } from './listening-child';
import { positiveInt } from './options';
import { percentileOfSorted as percentile } from './stats';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number; max: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const options = new Command()
  .option('--duration <s>', 'seconds per HTTP run', positiveInt, 10)
  .option('--connections <n>', 'autocannon connections (price)', positiveInt, 64)
  .option('--candle-connections <n>', 'autocannon connections (candles)', positiveInt, 8)
  .option('--pipelining <n>', 'HTTP/1.1 requests in flight per connection', positiveInt, 1)
  .option('--clients <n>', 'distinct simulated clients (rate-limit buckets)', positiveInt, 256)
  .option('--subscribers <n>', 'WebSocket subscribers', positiveInt, 500)
  .option('--fanout-seconds <s>', 'seconds of ticker messages to collect', positiveInt, 15)
  .option(
    '--data <dir>',
    'market data directory',
    path.resolve(import.meta.dirname, '../../shared/market-data'),
  )
  .option('--json <file>', 'also write the results as JSON')
  .parse()
  .opts<{
    duration: number;
    connections: number;
    candleConnections: number;
    pipelining: number;
    clients: number;
    subscribers: number;
    fanoutSeconds: number;
    data: string;
    json?: string;
  }>();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The operator token the bench's server is started with: `/health` shows the checks (the market feed's store writes,
 * which the bench waits for) only to the operator (docs/operations.md).
 */
const OPERATOR_TOKEN = `bench-market-${crypto.randomUUID()}`; // at least 32 characters (src/config.ts)

const startServer = (dataDir: string): Promise<ListeningChild> =>
  spawnListening(['--import', 'tsx', 'bench/market-server.ts'], {
    HOST: '127.0.0.1',
    OPERATOR_TOKEN,
    PORT: '0',
    DATA_DIR: dataDir,
    MARKET_DATA_DIR: options.data,
    MARKET_SOURCE: 'files',
    LOG_LEVEL: 'warn',
    DATABASE_URL: '',
  });

const waitForStore = async (url: string) => {
  for (let i = 0; i < 600; i++) {
    const answer = await fetch(`${url}/health`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    const health = (await answer.json()) as { checks?: Record<string, any> };
    const feed = health.checks?.['market_feed'];
    if (feed?.store_writes === 'done' || feed?.store_writes === 'none') return feed;
    await sleep(500);
  }
  throw new Error('market data was not written to the store in time');
};

/**
 * One autocannon run. Requests are prebuilt (autocannon cycles through them on every connection), each with its
 * own `X-Bench-Client` id, and `paths` gives each one its own path when set: no per-request JavaScript in the
 * load generator, which shares this machine's CPUs with the server.
 */
const cannon = async (url: string, connections: number, duration: number, paths?: () => string) =>
  autocannon({
    url,
    connections,
    pipelining: options.pipelining,
    duration,
    requests: Array.from({ length: options.clients }, (_, i) => ({
      method: 'GET',
      ...(paths ? { path: paths() } : {}),
      headers: { 'x-bench-client': `c${i}` },
    })),
  });

/** A bare `node:http` server answering a fixed price body: the ceiling of this machine and load generator. */
const startBaseline = (): Promise<ListeningChild> => {
  const code = `
    const body = JSON.stringify({ symbol: 'BTCUSDT', price: '43250.12000000', timestamp: new Date().toISOString() });
    const server = require('node:http').createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(body);
    });
    server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ listening: 'http://127.0.0.1:' + server.address().port })));`;
  return spawnListening(['-e', code]);
};

const fanOut = async (url: string) => {
  const wsUrl = `${url.replace('http', 'ws')}/ws/v1`;
  const latencies: number[] = [];
  const perMessage = new Map<string, number>();
  let collecting = false;
  const sockets = await Promise.all(
    Array.from(
      { length: options.subscribers },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(wsUrl);
          ws.on('message', (raw) => {
            const received = Date.now();
            const m = JSON.parse(String(raw));
            if (m.channel !== 'ticker' || m.type !== 'ticker' || !collecting) return;
            latencies.push(received - Date.parse(m.data.timestamp));
            perMessage.set(m.data.timestamp, (perMessage.get(m.data.timestamp) ?? 0) + 1);
          });
          ws.once('open', () => {
            ws.send(JSON.stringify({ action: 'subscribe', channel: 'ticker', symbol: 'BTCUSDT' }));
            resolve(ws);
          });
          ws.once('error', reject);
        }),
    ),
  );
  await sleep(1500);
  collecting = true;
  await sleep(options.fanoutSeconds * 1000);
  collecting = false;
  for (const ws of sockets) ws.terminate();
  const sorted = latencies.sort((a, b) => a - b);
  const counts = [...perMessage.values()];
  return {
    subscribers: options.subscribers,
    messages: counts.length,
    deliveries: sorted.length,
    complete_messages: counts.filter((c) => c === options.subscribers).length,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.at(-1) ?? Number.NaN,
  };
};

const main = async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-bench-market-'));
  const started = Date.now();
  const { child, url } = await startServer(dataDir);
  try {
    console.log(`server ${url} (pid ${child.pid}), ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const feed = await waitForStore(url);
    console.log(`store written: ${feed.candles} candles, ${feed.prices} prices`);
    const priceUrl = `${url}/api/v1/market/price/BTCUSDT`;
    const candlesUrl = `${url}/api/v1/market/candles/BTCUSDT?limit=1000`;
    await cannon(priceUrl, options.connections, 2); // warm-up
    const price = await cannon(priceUrl, options.connections, options.duration);
    await cannon(candlesUrl, options.candleConnections, 2);
    const candles = await cannon(candlesUrl, options.candleConnections, options.duration);
    // Every request a different range (start_time at a random hour of the data): no response cache hit.
    const first = Date.UTC(2021, 3, 5);
    const hours = Math.floor((Date.UTC(2023, 10, 1) - first) / 3_600_000);
    const randomRange = () =>
      `/api/v1/market/candles/BTCUSDT?limit=1000&start_time=${new Date(first + Math.floor(Math.random() * hours) * 3_600_000).toISOString()}`;
    const candlesUncached = await cannon(
      candlesUrl,
      options.candleConnections,
      options.duration,
      randomRange,
    );
    const baselineServer = await startBaseline();
    await cannon(baselineServer.url, options.connections, 2);
    const baseline = await cannon(baselineServer.url, options.connections, options.duration);
    baselineServer.child.kill('SIGTERM');
    const fanout = await fanOut(url);
    const summary = (r: AutocannonResult) => ({
      requests_per_s: Math.round(r.requests.average),
      p50_ms: r.latency.p50,
      p99_ms: r.latency.p99,
      max_ms: r.latency.max,
      total: r.requests.total,
      non_2xx: r.non2xx,
      errors: r.errors + r.timeouts,
    });
    const results = {
      date: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        memory_gb: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        load_average: os.loadavg().map((l) => Math.round(l * 100) / 100),
      },
      options,
      price: summary(price),
      candles: summary(candles),
      candles_uncached: summary(candlesUncached),
      baseline_bare_node_http: summary(baseline),
      fanout,
    };
    console.log(JSON.stringify(results, null, 2));
    console.log(
      [
        '',
        '| measurement | requests/s | p50 | p99 | target |',
        '|---|---|---|---|---|',
        `| \`GET /market/price/BTCUSDT\` (${options.connections} connections) | ${results.price.requests_per_s} | ${price.latency.p50} ms | ${price.latency.p99} ms | ≥ 10,000 requests/s |`,
        `| \`GET /market/candles/BTCUSDT?limit=1000\` (${options.candleConnections} connections) | ${results.candles.requests_per_s} | ${candles.latency.p50} ms | ${candles.latency.p99} ms | p99 ≤ 20 ms |`,
        `| same, a different \`start_time\` per request (no response cache) | ${results.candles_uncached.requests_per_s} | ${candlesUncached.latency.p50} ms | ${candlesUncached.latency.p99} ms | |`,
        `| baseline: bare \`node:http\` server, fixed body (${options.connections} connections) | ${results.baseline_bare_node_http.requests_per_s} | ${baseline.latency.p50} ms | ${baseline.latency.p99} ms | |`,
        `| WebSocket ticker fan-out to ${fanout.subscribers} subscribers (${fanout.deliveries} deliveries) | | ${fanout.p50_ms} ms | ${fanout.p99_ms} ms | p99 ≤ 100 ms |`,
      ].join('\n'),
    );
    const non2xx = price.non2xx + candles.non2xx + candlesUncached.non2xx;
    if (non2xx) console.warn(`non-2xx responses: ${non2xx}`);
    if (options.json) fs.writeFileSync(options.json, `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(10_000)]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
};

await main();
