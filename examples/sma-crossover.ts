/**
 * Example strategy client: an SMA crossover backtested end to end through the venue's REST API.
 *
 * Plain TypeScript over HTTP (Node's `fetch`), no import from the venue's code: copy it anywhere and point it at a
 * running server. For each pair, on every hourly candle close: when the fast SMA crosses above the slow SMA and
 * nothing is held, buy `ALLOCATION` of the current equity at market; when it crosses below, sell everything held.
 *
 *   MARKET_DATA_DIR=../shared/market-data npm start            # in another terminal
 *   npx tsx examples/sma-crossover.ts                          # defaults below
 *   npx tsx examples/sma-crossover.ts --symbols BTCUSDT,ETHUSDT --fast 20 --slow 50 --out docs/sma.json
 *
 * Options (or environment variables): --base-url (BASE_URL, default http://127.0.0.1:8000), --api-key and
 * --api-secret (API_KEY, API_SECRET; default: register a new account), --symbols, --interval (1h), --start and --end
 * (default: the whole range of the pairs' data, from /market/data-range), --fast, --slow, --allocation (0.2),
 * --balance (10000), --out (write the results and the trade log as JSON).
 */
import { parseArgs } from 'node:util';

interface Options {
  baseUrl: string;
  apiKey?: string;
  apiSecret?: string;
  symbols: string[];
  interval: string;
  start?: string;
  end?: string;
  fast: number;
  slow: number;
  allocation: number;
  balance: string;
  out?: string;
}

const OPTION_NAMES = [
  'base-url',
  'api-key',
  'api-secret',
  'symbols',
  'interval',
  'start',
  'end',
  'fast',
  'slow',
  'allocation',
  'balance',
  'out',
] as const;

/** Each option from `--name value` or `--name=value` (`parseArgs`: an unknown one throws), else the environment. */
const parseOptions = (): Options => {
  const { values: args } = parseArgs({
    options: Object.fromEntries(OPTION_NAMES.map((name) => [name, { type: 'string' as const }])),
    strict: true,
    allowPositionals: false,
  });
  const get = (name: (typeof OPTION_NAMES)[number], env: string, fallback?: string) =>
    (args[name] as string | undefined) ?? process.env[env] ?? fallback;
  return {
    baseUrl: get('base-url', 'BASE_URL', 'http://127.0.0.1:8000')!.replace(/\/$/, ''),
    apiKey: get('api-key', 'API_KEY'),
    apiSecret: get('api-secret', 'API_SECRET'),
    symbols: get('symbols', 'SYMBOLS', 'BTCUSDT,ETHUSDT')!
      .split(',')
      .map((s) => s.trim().toUpperCase()),
    interval: get('interval', 'INTERVAL', '1h')!,
    start: get('start', 'START'),
    end: get('end', 'END'),
    fast: Number(get('fast', 'FAST', '20')),
    slow: Number(get('slow', 'SLOW', '50')),
    allocation: Number(get('allocation', 'ALLOCATION', '0.2')),
    balance: get('balance', 'BALANCE', '10000')!,
    out: get('out', 'OUT'),
  };
};

const options = parseOptions();
const API = `${options.baseUrl}/api/v1`;
let authHeader: Record<string, string> = {};

/** One API call; waits and retries on 429 (Retry-After) and, with back-off, on 5xx. Throws on other errors. */
const call = async <T = any>(method: string, path: string, body?: unknown): Promise<T> => {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${API}${path}`, {
      method,
      headers: { ...authHeader, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).catch((error: Error) => {
      throw new Error(
        `cannot reach the venue at ${options.baseUrl} (${(error.cause as Error | undefined)?.message ?? error.message}): ` +
          'start it with `npm start`, or pass --base-url http://HOST:PORT',
      );
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    if (res.ok) return json as T;
    if (res.status === 429 || (res.status >= 500 && attempt < 4)) {
      const wait =
        res.status === 429 ? Number(res.headers.get('retry-after') ?? '1') * 1000 : 2 ** attempt * 1000;
      await new Promise((r) => setTimeout(r, wait));
      continue;
    }
    const error = new Error(
      `${method} ${path} → ${res.status} ${json?.error?.code}: ${json?.error?.message}`,
    );
    Object.assign(error, { status: res.status, body: json });
    throw error;
  }
};

/** Rounds a quantity down to a multiple of the pair's step size, as a decimal string. */
const floorToStep = (quantity: number, stepSize: string): string => {
  const decimals = stepSize.replace(/0+$/, '').split('.')[1]?.length ?? 0;
  const step = Number(stepSize);
  const units = Math.floor(quantity / step + 1e-9);
  return (units * step).toFixed(decimals);
};

/** A simple moving average over the last `n` values (undefined until there are `n`). */
const sma = (values: number[], n: number): number | undefined => {
  if (values.length < n) return undefined;
  let sum = 0;
  for (let i = values.length - n; i < values.length; i++) sum += values[i]!;
  return sum / n;
};

const main = async () => {
  // 1. Credentials: an existing account, or a new one.
  let apiKey = options.apiKey;
  let apiSecret = options.apiSecret;
  if (!apiKey || !apiSecret) {
    const reg = await call('POST', '/auth/register', { display_name: 'sma-crossover example' });
    apiKey = reg.api_key;
    apiSecret = reg.api_secret;
    console.log(`registered account ${reg.account_id}`);
  }
  const login = await call('POST', '/auth/login', { api_key: apiKey, api_secret: apiSecret });
  authHeader = { authorization: `Bearer ${login.token}` };
  const agent = await call('POST', '/agents', {
    display_name: `SMA ${options.fast}/${options.slow}`,
    strategy_tags: ['sma-crossover', 'example'],
  });

  // 2. Pairs and the range of their data.
  const { pairs } = await call('GET', '/market/pairs');
  const filters = new Map<string, { step_size: string; min_notional: string }>(
    pairs.map((p: { symbol: string; step_size: string; min_notional: string }) => [p.symbol, p]),
  );
  const range = await call('GET', '/market/data-range');
  // The period every pair has data for (its stored range: BTCUSDT also has three days of 2020 minutes).
  const mine = (range.pairs ?? []).filter((p: { symbol: string }) => options.symbols.includes(p.symbol));
  if (mine.length !== options.symbols.length)
    throw new Error(`no data for some of ${options.symbols.join(', ')}`);
  const earliest = Math.max(...mine.map((p: { earliest: string }) => Date.parse(p.earliest)));
  const latest = Math.min(...mine.map((p: { latest: string }) => Date.parse(p.latest)));
  const start = options.start ?? new Date(Math.ceil(earliest / 3_600_000) * 3_600_000).toISOString();
  const end = options.end ?? new Date(latest).toISOString();

  // 3. The session.
  const created = await call('POST', '/backtest/create', {
    start_time: start,
    end_time: end,
    starting_balance: options.balance,
    candle_interval: options.interval,
    agent_id: agent.agent_id,
    strategy_label: `sma-${options.fast}-${options.slow}`,
    pairs: options.symbols,
  });
  const id: string = created.session_id;
  console.log(`session ${id}: ${created.total_steps} steps of ${options.interval}, ${start} → ${end}`);
  await call('POST', `/backtest/${id}/start`);

  // 4. The loop: one candle per step, decide at each close.
  const closes = new Map<string, number[]>(options.symbols.map((s) => [s, []]));
  const lastCandle = new Map<string, number>();
  const held = new Map<string, string>();
  const began = Date.now();
  let orders = 0;
  let rejected = 0;
  for (;;) {
    const step = await call('POST', `/backtest/${id}/step`);
    for (const symbol of options.symbols) {
      const candle = step.prices[symbol];
      if (!candle) continue;
      const series = closes.get(symbol)!;
      const time = Date.parse(candle.time);
      if (time <= (lastCandle.get(symbol) ?? Number.NEGATIVE_INFINITY)) continue; // a gap: no new candle closed
      lastCandle.set(symbol, time);
      const prevFast = sma(series, options.fast);
      const prevSlow = sma(series, options.slow);
      series.push(Number(candle.close));
      if (series.length > options.slow + 1) series.shift();
      const fast = sma(series, options.fast);
      const slow = sma(series, options.slow);
      if (prevFast === undefined || prevSlow === undefined || fast === undefined || slow === undefined)
        continue;
      const crossedUp = prevFast <= prevSlow && fast > slow;
      const crossedDown = prevFast >= prevSlow && fast < slow;
      if (step.is_complete) continue;
      try {
        if (crossedUp && !held.has(symbol)) {
          const equity = Number(step.portfolio.total_equity);
          const quantity = floorToStep(
            (equity * options.allocation) / Number(candle.close),
            filters.get(symbol)!.step_size,
          );
          if (Number(quantity) * Number(candle.close) < Number(filters.get(symbol)!.min_notional)) continue;
          const fill = await call('POST', `/backtest/${id}/trade/order`, {
            symbol,
            side: 'buy',
            type: 'market',
            quantity,
          });
          held.set(symbol, fill.executed_quantity);
          orders++;
        } else if (crossedDown && held.has(symbol)) {
          await call('POST', `/backtest/${id}/trade/order`, {
            symbol,
            side: 'sell',
            type: 'market',
            quantity: held.get(symbol),
          });
          held.delete(symbol);
          orders++;
        }
      } catch (error) {
        rejected++;
        console.warn(`order refused at ${step.virtual_time}: ${(error as Error).message}`);
      }
    }
    if (step.step % 2000 === 0 || step.is_complete) {
      const rate = step.step / ((Date.now() - began) / 1000);
      console.log(
        `step ${step.step}/${step.total_steps} ${step.virtual_time} equity ${step.portfolio.total_equity} ` +
          `(${orders} orders, ${rate.toFixed(0)} steps/s)`,
      );
    }
    if (step.is_complete) break;
  }

  // 5. Results.
  const results = await call('GET', `/backtest/${id}/results`);
  const trades = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await call('GET', `/backtest/${id}/results/trades?limit=1000&offset=${offset}`);
    trades.push(...page.trades);
    if (trades.length >= page.total) break;
  }
  const { summary, metrics, by_pair } = results;
  console.log('\nResults');
  console.table({
    final_equity: summary.final_equity,
    total_pnl: summary.total_pnl,
    roi_pct: summary.roi_pct,
    total_trades: summary.total_trades,
    total_fees: summary.total_fees,
    sharpe_ratio: metrics.sharpe_ratio,
    sortino_ratio: metrics.sortino_ratio,
    max_drawdown_pct: metrics.max_drawdown_pct,
    max_drawdown_duration_days: metrics.max_drawdown_duration_days,
    win_rate: metrics.win_rate,
    profit_factor: metrics.profit_factor,
    avg_win: metrics.avg_win,
    avg_loss: metrics.avg_loss,
    trades_per_day: metrics.trades_per_day,
    duration_real_seconds: summary.duration_real_seconds,
  });
  console.table(by_pair);
  if (rejected) console.log(`${rejected} orders were refused by the risk chain`);
  if (options.out) {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      options.out,
      `${JSON.stringify({ options: { ...options, apiKey: undefined, apiSecret: undefined, start, end }, results, trades }, null, 2)}\n`,
    );
    console.log(`results and ${trades.length} trades written to ${options.out}`);
  }
};

main().catch((error: Error) => {
  console.error(`sma-crossover: ${error.message}`);
  process.exit(1);
});
