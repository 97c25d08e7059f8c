/**
 * The server `bench/trading.ts` measures: the real runtime and HTTP app (`createRuntime` + `buildApp`, the same
 * as `src/main.ts serve`: event store, projections, matching engine, market feed), configured from the
 * environment. One difference: requests carrying `X-Bench-Client: <id>` count against that id's rate-limit bucket
 * (through the documented `services.rateLimitIdentity` hook); the load generator gives every request its own id,
 * because the spec's 100 orders per minute per credential would otherwise cap 64 agents at ~107 orders/s. The
 * limiter itself still runs on every request. Prints `{"listening": "<url>"}` on stdout when ready.
 */
import pg from 'pg';
import { loadConfig } from '../src/config';
import { buildApp } from '../src/http/app';
import { createLogger } from '../src/logger';
import { createRuntime } from '../src/runtime';

// Diagnostics: BENCH_COUNT_QUERIES=1 counts the SQL statements sent, by text, and prints them at exit. SIGUSR2
// prints the counts since the last SIGUSR2 on stdout as `{"statements": [[text, n], …]}` and starts over: the load
// generator sends it around a measured window, so the counts are the window's alone (no set-up, no warm-up).
const queryCounts = new Map<string, number>();
if (process.env.BENCH_COUNT_QUERIES) {
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string };
    const text = (typeof first === 'string' ? first : (first?.text ?? '?'))
      .replace(/\s+/g, ' ')
      .slice(0, 140);
    queryCounts.set(text, (queryCounts.get(text) ?? 0) + 1);
    return original.apply(this, args);
  } as typeof pg.Client.prototype.query;
}

if (process.env.BENCH_COUNT_QUERIES) {
  process.on('SIGUSR2', () => {
    const all = [...queryCounts].sort((a, b) => b[1] - a[1]);
    queryCounts.clear();
    process.stdout.write(`${JSON.stringify({ statements: all })}\n`);
  });
}

const config = loadConfig(process.env);
const logger = createLogger(config.LOG_LEVEL, { pretty: false });
const runtime = await createRuntime(config, logger);
const identity = runtime.services.rateLimitIdentity;
runtime.services.rateLimitIdentity = (request) => {
  const client = request.headers['x-bench-client'];
  return typeof client === 'string' && client ? `bench:${client}` : identity?.(request);
};
const app = await buildApp(runtime.services);
const address = await app.listen({ host: config.HOST, port: config.PORT });
process.stdout.write(`${JSON.stringify({ listening: address })}\n`);
const stop = async () => {
  if (queryCounts.size) {
    const top = [...queryCounts].sort((a, b) => b[1] - a[1]).slice(0, 40);
    process.stderr.write(`${JSON.stringify(top, null, 1)}\n`);
  }
  await app.close().catch(() => {});
  await runtime.close().catch(() => {});
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
