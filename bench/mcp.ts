/**
 * MCP overhead benchmark (issue 18, "Done when"): the latency of a tool call over Streamable HTTP (`POST /mcp`,
 * the SDK's own `Client` and `StreamableHTTPClientTransport`) against the REST call it wraps (`fetch`), on the real
 * runtime and HTTP app (`createRuntime` + `buildApp`) listening on a local port in this process, embedded PGlite in
 * a temporary data directory, the real data set replayed (`MARKET_DATA_DIR`). Three pairs, each measured in
 * alternating blocks of 50 calls after 50 warm-up calls of each, so both see the same load:
 *   - `get_price` vs `GET /market/price/BTCUSDT` (public, no database);
 *   - `get_balance` vs `GET /account/balance` (authenticated, read models);
 *   - `place_order` with `dry_run` vs `POST /trade/order/preview` (authenticated, the wallet decider);
 *   - `tools/list` (MCP only, no REST counterpart: the REST columns are empty): the whole tool list with its JSON
 *     Schemas, what a host asks for first — sent as a raw JSON-RPC POST (`fetch`), because the SDK client compiles a
 *     validator for every output schema on each list, which would measure the client rather than the server.
 * The rate limiter is off (both doors count in it alike; the benchmark makes more calls than a minute allows).
 *
 *   MARKET_DATA_DIR=../shared/market-data npx tsx bench/mcp.ts [--calls 500] [--port 18150]
 *
 * Prints p50/p99 per door and the overhead (MCP − REST). Results: docs/benchmarks.md ("MCP").
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Command } from 'commander';
import { loadConfig } from '../src/config';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createRuntime } from '../src/runtime';

const opts = new Command()
  .option('--calls <n>', 'measured calls per door and pair', '500')
  .option('--port <n>', 'listen port', '18150')
  .parse()
  .opts<{ calls: string; port: string }>();
const CALLS = Number(opts.calls);
const BLOCK = 50;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-bench-mcp-'));
const config = loadConfig({
  ...process.env,
  DATA_DIR: dataDir,
  DATABASE_URL: '',
  PORT: opts.port,
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
});
const runtime = await createRuntime(config, createLogger(config.LOG_LEVEL, { pretty: false }));
runtime.services.rateLimits = undefined;
const app = await buildApp(runtime.services);
const base = await app.listen({ host: config.HOST, port: config.PORT });

const json = async (method: string, url: string, headers: Record<string, string>, body?: unknown) => {
  const r = await fetch(`${base}/api/v1${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = (await r.json()) as any;
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(parsed)}`);
  return parsed;
};

const reg = await json('POST', '/auth/register', {}, { display_name: 'MCP bench' });
const auth = { 'x-api-key': reg.api_key as string };
// Wait for a replayed price of BTCUSDT.
for (let i = 0; i < 300; i++) {
  const r = await fetch(`${base}/api/v1/market/price/BTCUSDT`);
  if (r.ok) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const client = new Client({ name: 'ptv-bench', version: '1.0.0' });
await client.connect(
  new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth } }),
);
await client.listTools();

const order = { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' };
const pairs: { name: string; mcp: () => Promise<unknown>; rest?: () => Promise<unknown> }[] = [
  {
    name: 'get_price',
    mcp: () => client.callTool({ name: 'get_price', arguments: { symbol: 'BTCUSDT' } }),
    rest: () => json('GET', '/market/price/BTCUSDT', {}),
  },
  {
    name: 'get_balance',
    mcp: () => client.callTool({ name: 'get_balance', arguments: {} }),
    rest: () => json('GET', '/account/balance', auth),
  },
  {
    name: 'place_order dry_run',
    mcp: () => client.callTool({ name: 'place_order', arguments: { ...order, dry_run: true } }),
    rest: () => json('POST', '/trade/order/preview', auth, order),
  },
  {
    name: 'tools/list',
    mcp: async () => {
      const r = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      const body = (await r.json()) as { result?: { tools: unknown[] } };
      if (!body.result?.tools.length) throw new Error(`tools/list: ${r.status} ${JSON.stringify(body)}`);
      return body;
    },
  },
];

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const time = async (fn: () => Promise<unknown>, out: number[]) => {
  const t0 = performance.now();
  const r = (await fn()) as { isError?: boolean; content?: unknown };
  out.push(performance.now() - t0);
  if (r?.isError) throw new Error(`tool error: ${JSON.stringify(r.content)}`);
};

const rows: Record<string, unknown>[] = [];
for (const pair of pairs) {
  const warm: number[] = [];
  for (let i = 0; i < BLOCK; i++) {
    await time(pair.mcp, warm);
    if (pair.rest) await time(pair.rest, warm);
  }
  const mcp: number[] = [];
  const rest: number[] = [];
  while (mcp.length < CALLS) {
    if (pair.rest) for (let i = 0; i < BLOCK; i++) await time(pair.rest, rest);
    for (let i = 0; i < BLOCK; i++) await time(pair.mcp, mcp);
  }
  mcp.sort((a, b) => a - b);
  rest.sort((a, b) => a - b);
  const f = (v: number | undefined) => (v === undefined ? null : Number(v.toFixed(2)));
  const restAt = (p: number) => (rest.length ? pct(rest, p) : undefined);
  rows.push({
    call: pair.name,
    calls: mcp.length,
    rest_p50_ms: f(restAt(50)),
    rest_p99_ms: f(restAt(99)),
    mcp_p50_ms: f(pct(mcp, 50)),
    mcp_p99_ms: f(pct(mcp, 99)),
    overhead_p50_ms: rest.length ? f(pct(mcp, 50) - pct(rest, 50)) : null,
    overhead_p99_ms: rest.length ? f(pct(mcp, 99) - pct(rest, 99)) : null,
  });
}
console.table(rows);
console.log(JSON.stringify({ load: os.loadavg().map((l) => Number(l.toFixed(1))), rows }));

await client.close();
await app.close();
await runtime.close();
fs.rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
