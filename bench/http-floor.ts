/**
 * The HTTP floor of an order (issue 23): the CPU per request of a Node server that only answers
 * `POST /api/v1/trade/order` (bench/http-floor-server.ts: `node:http` alone, and fastify 5 with zod's compilers),
 * under the trading bench's closed loop (autocannon, `--connections` keep-alive connections, one request in flight
 * each, the same order body). What it says: how much of the venue's CPU per order (bench/trading.ts) is HTTP that
 * any Node server pays, before auth, rate limits, the decision, the durable append and the folds.
 *
 * Each round runs every kind in turn (`--rounds`, alternating, so a busy moment of a shared machine falls on both);
 * per run: requests per second, latency, and the server process's CPU per request from /proc (user + system).
 *
 *   npx tsx bench/http-floor.ts [--seconds 10] [--warmup 2] [--connections 64] [--rounds 2] [--json out.json]
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { Command } from 'commander';
import { spawnListening } from './listening-child';
import { jsonOption, nonNegativeInt, positiveInt, writeJsonResults } from './options';
import { processCpuSeconds, round } from './stats';

const program = new Command()
  .description('CPU per request of a bare Node / fastify server answering the order route (closed loop)')
  .option('--seconds <n>', 'measured seconds per run', positiveInt, 10)
  .option('--warmup <n>', 'warm-up seconds per run', nonNegativeInt, 2)
  .option('--connections <n>', 'keep-alive connections, one request in flight each', positiveInt, 64)
  .option('--rounds <n>', 'rounds of every kind, alternating', positiveInt, 2)
  .addOption(jsonOption())
  .parse();
const options = program.opts<{
  seconds: number;
  warmup: number;
  connections: number;
  rounds: number;
  json?: string;
}>();

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
) => Promise<AutocannonResult>;

const KINDS = ['node', 'fastify'] as const;
const body = JSON.stringify({ symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.0002' });

const run = async (kind: (typeof KINDS)[number]) => {
  const { child, url } = await spawnListening(['--import', 'tsx', 'bench/http-floor-server.ts'], {
    HTTP_FLOOR_KIND: kind,
  });
  const load = (seconds: number) =>
    autocannon({
      url: `${url}/api/v1/trade/order`,
      connections: options.connections,
      duration: seconds,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'ak_live_floor' },
      body,
    });
  try {
    if (options.warmup) await load(options.warmup);
    const cpuBefore = processCpuSeconds(child.pid!) ?? 0;
    const client = process.cpuUsage();
    const result = await load(options.seconds);
    const serverS = (processCpuSeconds(child.pid!) ?? 0) - cpuBefore;
    const generator = process.cpuUsage(client);
    const requests = result.requests.average * options.seconds;
    return {
      kind,
      requests_per_second: round(result.requests.average, 1),
      latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
      errors: result.errors + result.non2xx,
      cpu_ms_per_request: {
        server: round((serverS * 1000) / requests, 3),
        load_generator: round((generator.user + generator.system) / 1000 / requests, 3),
      },
      load_average_1m: round(os.loadavg()[0]!, 2),
    };
  } finally {
    child.kill('SIGTERM');
  }
};

const runs = [];
for (let r = 1; r <= options.rounds; r++) {
  for (const kind of KINDS) {
    const result = { round: r, ...(await run(kind)) };
    runs.push(result);
    console.log(JSON.stringify(result));
  }
}
writeJsonResults(options.json, {
  date: new Date().toISOString(),
  node: process.version,
  cpus: os.cpus().length,
  options,
  runs,
});
process.exit(0);
