/**
 * Dashboard load benchmark (issue 22 "Done when": the first page interactive within 1.5 s on a cold load from
 * localhost, the bundle under 400 KB gzipped; results in docs/benchmarks.md, "Dashboard").
 *
 * - Bundle: the size of every file of `dashboard/dist` the first page loads (raw, gzip level 9, brotli 11), and of
 *   the chart library's chunk, fetched beside the first requests.
 * - Cold loads: the real venue (`src/main.ts serve` on the real data set in a temporary data directory, as the
 *   browser test starts it; or `--base-url` of one already running), an account that has traded (a market buy, a
 *   pending limit order), then `--runs` loads of each page, each in a fresh Chromium with a fresh profile
 *   (`--user-data-dir`: nothing cached): the login page (no session) and the overview of a logged-in viewer (the
 *   session in sessionStorage). First-interactive = navigation start → the page's `ptv:ready:<page>` mark: the
 *   login form rendered with its handlers; the overview's figures painted (its portfolio read answered).
 *   Also DOMContentLoaded, the bytes transferred, and the renderer's CPU time for the load (Chrome's
 *   `Performance.getMetrics`: `TaskDuration`, `ScriptDuration`), which does not count the time spent waiting
 *   for a core on a busy machine. Loads run one at a time.
 *
 *   npx tsx bench/dashboard.ts [--runs 10] [--base-url http://127.0.0.1:8000] [--json out.json]   (CHROMIUM_PATH)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { DASHBOARD_DIST, ensureDashboardBuilt } from '../dashboard/build';
import { chromiumMissing, launchFreshChromium } from '../test/support/chromium';
import { type LoadTimings, loadTimings, presetSession } from '../test/support/dashboard-page';
import { startRealDataServer } from '../test/support/real-data-server';
import { percentileOfSorted as percentile } from './stats';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    'base-url': { type: 'string' },
    json: { type: 'string' },
  },
});
const RUNS = Number(args.runs);
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p90: percentile(s, 90), max: s.at(-1)!, min: s[0]!, runs: s.length };
};

const bundleSizes = () => {
  const html = fs.readFileSync(path.join(DASHBOARD_DIST, 'index.html'), 'utf8');
  const initial = new Set([
    'index.html',
    ...[...html.matchAll(/(?:src|href)="\/(assets\/[^"]+)"/g)].map((m) => m[1]!),
  ]);
  const files = [
    'index.html',
    ...fs.readdirSync(path.join(DASHBOARD_DIST, 'assets')).map((f) => `assets/${f}`),
  ].filter((f) => /\.(html|js|css)$/.test(f));
  return files.map((file) => {
    const body = fs.readFileSync(path.join(DASHBOARD_DIST, file));
    return {
      file,
      initial: initial.has(file),
      bytes: body.length,
      gzip: zlib.gzipSync(body, { level: 9 }).length,
      brotli: zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
    };
  });
};

const main = async () => {
  const missing = chromiumMissing();
  if (missing) throw new Error(missing);
  await ensureDashboardBuilt();
  const bundle = bundleSizes();
  const server = args['base-url'] ? undefined : await startRealDataServer('ptv-bench-dashboard-');
  const base = args['base-url'] ?? server!.url;
  try {
    const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${base}/api/v1${url}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
      return (await r.json()) as any;
    };
    const reg = await post('/auth/register', { display_name: 'bench viewer' });
    const key = { 'x-api-key': reg.api_key };
    await post('/trade/order', { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' }, key);
    await post(
      '/trade/order',
      { symbol: 'ETHUSDT', side: 'buy', type: 'limit', quantity: '0.1', price: '100' },
      key,
    );

    const load = async (page: 'login' | 'overview') => {
      const browser = await launchFreshChromium();
      try {
        if (page === 'overview') {
          await presetSession(
            browser.context,
            await post('/auth/login', { api_key: reg.api_key, api_secret: reg.api_secret }),
          );
        }
        const tab = browser.context.pages()[0] ?? (await browser.context.newPage());
        // The renderer's own CPU time for the load (Chrome's Performance domain): what the page costs, whatever
        // else the machine is doing, where the wall times above also measure the wait for a core.
        const cdp = await browser.context.newCDPSession(tab);
        await cdp.send('Performance.enable');
        await tab.goto(`${base}/`);
        await tab.waitForSelector(`html[data-ready~="${page}"]`, { timeout: 30_000 });
        const timings = await loadTimings(tab, page);
        const { metrics } = await cdp.send('Performance.getMetrics');
        const metric = (name: string) => (metrics.find((m) => m.name === name)?.value ?? 0) * 1000;
        return { ...timings, taskMs: metric('TaskDuration'), scriptMs: metric('ScriptDuration') };
      } finally {
        await browser.close();
      }
    };

    const runs: Record<string, (LoadTimings & { taskMs: number; scriptMs: number })[]> = {
      login: [],
      overview: [],
    };
    await load('login'); // warm-up: the server's first requests (not the browser's cache: each run is fresh)
    for (let i = 0; i < RUNS; i++) {
      runs.login!.push(await load('login'));
      runs.overview!.push(await load('overview'));
    }
    const result = {
      date: new Date().toISOString(),
      machine: { cpus: os.cpus().length, loadavg: os.loadavg(), node: process.version },
      bundle,
      bundle_initial_gzip: bundle.filter((b) => b.initial).reduce((n, b) => n + b.gzip, 0),
      bundle_total_gzip: bundle.reduce((n, b) => n + b.gzip, 0),
      login_interactive_ms: summary(runs.login!.map((r) => Math.round(r.ready))),
      login_dcl_ms: summary(runs.login!.map((r) => Math.round(r.domContentLoaded))),
      overview_interactive_ms: summary(runs.overview!.map((r) => Math.round(r.ready))),
      overview_dcl_ms: summary(runs.overview!.map((r) => Math.round(r.domContentLoaded))),
      login_renderer_cpu_ms: summary(runs.login!.map((r) => Math.round(r.taskMs))),
      login_script_ms: summary(runs.login!.map((r) => Math.round(r.scriptMs))),
      overview_renderer_cpu_ms: summary(runs.overview!.map((r) => Math.round(r.taskMs))),
      overview_script_ms: summary(runs.overview!.map((r) => Math.round(r.scriptMs))),
      transferred_bytes: summary(runs.overview!.map((r) => r.transferredBytes)),
    };
    console.log(JSON.stringify(result, null, 2));
    if (args.json) fs.writeFileSync(args.json, `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await server?.close();
  }
};

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
