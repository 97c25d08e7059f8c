import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../accounts/support';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import {
  dataDirectory,
  normalizeSessionText,
  ok,
  runSessionCommands,
  type SessionCommand,
  sessionOrder,
  startBacktestApp,
  type Trader,
  trader,
} from './http-support';

/**
 * A session survives a server restart mid-run (its state is its stream), and the same commands give
 * byte-identical results: one session is driven half-way, the runtime is stopped and a new one started on the same
 * database, the session is finished there; a second session runs the same commands without interruption.
 */
let database: TestDatabase;
let remove: () => void;
let marketDir: string;
let serverDir: string | undefined;
let first: TestApp | undefined;
let second: TestApp | undefined;

const START = '2022-03-01T00:00:00Z';
const END = '2022-03-15T00:00:00Z'; // 336 hourly steps

/** The strategy: some market and pending orders of both sides, single steps and batches. */
const PART_ONE: SessionCommand[] = [
  ['POST', '/start'],
  ['POST', '/step/batch', { steps: 24 }],
  sessionOrder('BTCUSDT', 'buy', 'market', '0.03'),
  sessionOrder('ETHUSDT', 'buy', 'limit', '0.5', { price: '2800' }),
  ['POST', '/step/batch', { steps: 50 }],
  sessionOrder('BTCUSDT', 'sell', 'take_profit', '0.03', { trigger_price: '42000' }),
  ['POST', '/step'],
  ['POST', '/step'],
  ['POST', '/step'],
];
const PART_TWO: SessionCommand[] = [
  ['POST', '/step/batch', { steps: 100 }],
  sessionOrder('ETHUSDT', 'buy', 'stop_loss', '0.2', { trigger_price: '2700' }),
  ['POST', '/step/batch', { steps: 150 }],
  sessionOrder('BTCUSDT', 'buy', 'market', '0.01'),
  ['POST', '/step/batch', { steps: 1000 }],
];

const outcome = async (t: TestApp, who: Trader, id: string) => {
  const get = (url: string) => ok(t.app, who.headers, 'GET', `/backtest/${id}${url}`);
  return normalizeSessionText(
    JSON.stringify({
      results: await get('/results'),
      curve: await get('/results/equity-curve?limit=10000'),
      trades: await get('/results/trades?limit=1000'),
      orders: await get('/trade/orders?limit=500'),
      portfolio: await get('/account/portfolio'),
    }),
    id,
  );
};

beforeAll(async () => {
  const data = dataDirectory();
  remove = data.remove;
  marketDir = data.dir;
  database = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await first?.stop();
  await second?.stop();
  await database?.close();
  remove?.();
  if (serverDir) fs.rmSync(serverDir, { recursive: true, force: true });
});

describe('restart and determinism', () => {
  it('continues a running session after a restart, with the same results as an uninterrupted run', async () => {
    first = await startBacktestApp(marketDir, { database });
    serverDir = first.dataDir;
    const alice = await trader(first.app, { max_position_size_pct: 100 });
    const body = {
      start_time: START,
      end_time: END,
      starting_balance: '10000',
      candle_interval: '1h',
      agent_id: alice.agentId,
      strategy_label: 'restart',
      pairs: ['BTCUSDT', 'ETHUSDT'],
    };
    const interrupted = (await ok(first.app, alice.headers, 'POST', '/backtest/create', body))
      .session_id as string;
    const partOne = await runSessionCommands(first.app, alice, interrupted, PART_ONE);
    await first.stop();
    first = undefined;

    second = await startBacktestApp(marketDir, { database, dataDir: serverDir });
    const status = await ok(second.app, alice.headers, 'GET', `/backtest/${interrupted}/status`);
    expect(status).toMatchObject({ status: 'running', step: 77, virtual_time: '2022-03-04T05:00:00.000Z' });
    const open = await ok(second.app, alice.headers, 'GET', `/backtest/${interrupted}/trade/orders/open`);
    const partTwo = await runSessionCommands(second.app, alice, interrupted, PART_TWO);
    expect(JSON.parse(partTwo.at(-1)!)).toMatchObject({ is_complete: true, step: 336 });

    const straight = (await ok(second.app, alice.headers, 'POST', '/backtest/create', body))
      .session_id as string;
    const again = await runSessionCommands(second.app, alice, straight, [...PART_ONE, ...PART_TWO]);

    // Every step and order response, then results, equity curve, trade log, orders: byte-identical.
    expect(again.map((r) => normalizeSessionText(r, straight))).toEqual(
      [...partOne, ...partTwo].map((r) => normalizeSessionText(r, interrupted)),
    );
    const a = await outcome(second, alice, interrupted);
    const b = await outcome(second, alice, straight);
    expect(b).toBe(a);
    expect(open.total).toBeGreaterThan(0);
    const results = JSON.parse(a).results;
    expect(results.summary.total_trades).toBeGreaterThanOrEqual(2);
    // Two venues and two sessions of 336 steps: 17 s alone, 34 s at load 15, and the step workers run at nice 19
    // (they yield to everything else on the machine), so the default 60 s is too close on a shared machine.
  }, 180_000);
});
