import { fork, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { decisionIds } from '../../commands/backtest';
import type { BacktestCommand } from '../../domain/backtest/commands';
import { backtestDecider } from '../../domain/backtest/decide';
import type { BacktestState } from '../../domain/backtest/state';
import type { Candle } from '../../domain/market/candle';
import { DomainError } from '../../domain/shared/errors';
import { encodeState } from '../../domain/shared/state-codec';
import type { StepTask } from '../../src/backtest/step-worker';
import { createPooledStepper } from '../../src/backtest/stepper';
import { withTsxLoader } from '../../src/workers/pool';
import { childExecArgv, type ProcessMessage } from '../../src/workers/process-pool';
import { processAlive } from '../support/process-alive';
import { until } from '../support/until';
import { createBacktestCommand, H, series, stored, T0, testCatalog, testMarket } from './support';
import { chunkedTransfer, unsendableChunksMarket, unsendableMarket } from './unsendable-chunks';

/**
 * Issue 24 item 4, `BACKTEST_STEPPING=process`: batches decided in a child process of the venue, every thread of
 * it at nice 19 (its own V8 helper threads too), give the decider's events byte for byte; a stepping process that
 * dies fails its batches with a clear error and the next batch gets a fresh one; and the process never outlives
 * the venue, even one killed with SIGKILL.
 */

const SESSION = `bt_${'3'.repeat(32)}`;
const HOURS = 2000;
const NOW = new Date('2030-01-01T00:00:00Z');

const walk = (seed: number): Candle[] => {
  let x = seed;
  let price = 100;
  const ohlc: [number, number, number, number][] = [];
  for (let i = 0; i < HOURS; i++) {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    const open = price;
    const close = Math.max(1, Math.round(open * (1 + (x / 2_147_483_648 - 0.5) * 0.04) * 100) / 100);
    ohlc.push([
      open,
      Math.round(Math.max(open, close) * 101) / 100,
      Math.round(Math.min(open, close) * 99) / 100,
      close,
    ]);
    price = close;
  }
  return series(T0 - 10 * H, ohlc);
};

const CANDLES = { BTCUSDT: walk(3), ETHUSDT: walk(5) };
const market = testMarket(CANDLES);

const startedSession = (): { state: BacktestState; revision: number } => {
  let state = backtestDecider.initialState();
  let revision = -1;
  const apply = (command: BacktestCommand) => {
    const events = backtestDecider.decide(command, state, {
      now: NOW,
      newId: decisionIds(SESSION, revision + 1),
      market,
      catalog: testCatalog(CANDLES),
    });
    for (const e of events) state = backtestDecider.evolve(state, e);
    revision += events.length;
  };
  apply(
    createBacktestCommand(SESSION, {
      startTime: T0,
      endTime: T0 + (HOURS - 20) * H,
      candleInterval: '1h',
      startingBalance: '100000',
      strategyLabel: null,
      pairs: null,
    }),
  );
  apply({ type: 'StartBacktest', data: { fingerprint: 'f' } });
  apply({
    type: 'PlaceSandboxOrder',
    data: { order: { symbol: 'ETHUSDT', side: 'buy', type: 'limit', quantity: '10', price: '90' } },
  });
  return { state, revision };
};

const { state, revision } = startedSession();
const request = (steps: number) => ({
  sessionId: SESSION,
  revision: revision + 1,
  state,
  steps,
  now: NOW,
  market,
});
const inline = (steps: number) =>
  stored(
    backtestDecider.decide({ type: 'StepBacktest', data: { steps } }, state, {
      now: NOW,
      newId: decisionIds(SESSION, revision + 1),
      market,
    }),
  );

/** Nice values of every thread of process `pid` (field 19 of `/proc/<pid>/task/<tid>/stat`). */
const niceOf = (pid: number): number[] =>
  readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });

// A secret of the venue's environment a stepping process must not be given (only what it needs: `childEnv`).
process.env.PTV_TEST_SECRET = 'not for children';
// What the stepper logs (a batch answered 503: why, which the client is not told).
const logged: { fields: Record<string, unknown>; message: string }[] = [];
const log = {
  warn: (fields: Record<string, unknown>, message: string) => logged.push({ fields, message }),
  error: (fields: Record<string, unknown>, message: string) => logged.push({ fields, message }),
};
const stepper = createPooledStepper({ threads: 1, inlineUpTo: 0, sliceMs: 1, stepping: 'process', log });
afterAll(() => stepper.close());

/** Why this file cannot run here (it reads threads' nice values from Linux's /proc), or null. */
const reason =
  process.platform !== 'linux'
    ? `needs Linux (per-thread nice values), this is ${process.platform}`
    : !existsSync(`/proc/${process.pid}/task`)
      ? 'needs /proc (not mounted)'
      : null;
if (reason) console.warn(`stepping-process tests skipped: ${reason}`);

describe.skipIf(reason !== null)('backtest stepping in a child process', () => {
  it("decides the decider's events byte for byte, in a process whose every thread is at nice 19", async () => {
    const want = inline(1500);
    expect(want).toContain('"OrderFilled"');
    const got = await Promise.all([stepper.step(request(1500)), stepper.step(request(700))]);
    expect(stored(got[0])).toBe(want);
    expect(stored(got[1])).toBe(inline(700));
    const [pid] = stepper.processIds();
    expect(pid).toBeDefined();
    expect(pid).not.toBe(process.pid);
    const nices = niceOf(pid!);
    expect(nices.length).toBeGreaterThan(3);
    expect(new Set(nices)).toEqual(new Set([19]));
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ.some((v) => v.startsWith('PTV_TEST_SECRET='))).toBe(false);
    expect(environ).toContain('PTV_CHILD_NICE=19');
  }, 120_000);

  it('a stepping process that dies under a batch: the batch is run again on a fresh one and answers as the decider', async () => {
    stepper.warm();
    await until(() => stepper.processIds().length === 1, { what: 'a stepping process' });
    const [first] = stepper.processIds();
    const batch = stepper.step(request(HOURS - 20));
    process.kill(first!, 'SIGKILL');
    expect(stored(await batch)).toBe(inline(HOURS - 20));
    const [second] = stepper.processIds();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(stored(await stepper.step(request(300)))).toBe(inline(300));
  }, 120_000);

  it('a batch whose stepping process dies twice fails with SERVICE_UNAVAILABLE (503), not an internal error', async () => {
    // Every stepping process is killed as soon as it is seen, until the batch settles.
    const killed = new Set<number>();
    const killAll = () => {
      for (const pid of stepper.processIds()) {
        if (killed.has(pid)) continue;
        killed.add(pid);
        process.kill(pid, 'SIGKILL');
      }
    };
    const killer = setInterval(killAll, 5);
    try {
      const batch = stepper.step(request(HOURS - 20));
      killAll();
      const error = await batch.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('SERVICE_UNAVAILABLE');
      // The client is told to retry, not how the process ended: that is logged.
      expect((error as DomainError).message).toBe('backtest stepping is unavailable; retry shortly');
      expect(JSON.stringify(logged.at(-1)?.fields)).toMatch(
        /the backtest stepping process exited \(signal SIGKILL\)/,
      );
      expect(killed.size).toBeGreaterThanOrEqual(2);
    } finally {
      clearInterval(killer);
    }
    // The next batch gets a fresh process.
    expect(stored(await stepper.step(request(300)))).toBe(inline(300));
  }, 120_000);

  it('a task that throws (not a refusal) fails its batch once with its message, as on a thread: its process stays', async () => {
    stepper.warm();
    await until(() => stepper.processIds().length === 1, { what: 'a stepping process' });
    const [pid] = stepper.processIds();
    // The process has the market: the failing batch below is one task unless it is run again.
    await stepper.step(request(50));
    const before = stepper.tasksRun();
    // A bad input the decider does not refuse but trips over (as a bug would): a running session with no wallet.
    const broken = { ...state, wallet: null } as unknown as BacktestState;
    const error = await stepper.step({ ...request(1000), state: broken }).catch((e: unknown) => e);
    // Run exactly once: a `failed` answer is not retried.
    expect(stepper.tasksRun() - before).toBe(1);
    // Not SERVICE_UNAVAILABLE (a process that died twice): the error handler answers it 500 INTERNAL_ERROR.
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(DomainError);
    expect((error as Error).message).toMatch(/^backtest stepping failed: .*null/);
    expect((error as Error).stack).toMatch(/domain\/(backtest|wallet|trading|fill-model)\//);
    // Not retried on a fresh process: the same one, alive, steps the next batch.
    expect(stepper.processIds()).toEqual([pid]);
    expect(processAlive(pid!)).toBe(true);
    expect(stored(await stepper.step(request(300)))).toBe(inline(300));
    expect(stepper.processIds()).toEqual([pid]);
  }, 120_000);

  it('a task that cannot be sent to the process fails its batch once (500), not as a dead process (503)', async () => {
    await stepper.step(request(50));
    const [pid] = stepper.processIds();
    // A market whose transfer the structured clone refuses: sending the task with it throws a DataCloneError.
    const unsendable = unsendableMarket(CANDLES, 'unsendable-market-process');
    const before = stepper.tasksRun();
    const error = await stepper.step({ ...request(100), market: unsendable }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(DomainError);
    expect((error as Error).message).toMatch(/could not be cloned/);
    // The task without the market (the process lacks it), then with it: refused, not run once more.
    expect(stepper.tasksRun() - before).toBe(2);
    // The process was not killed for it.
    expect(stepper.processIds()).toEqual([pid]);
    expect(processAlive(pid!)).toBe(true);
    expect(stored(await stepper.step(request(300)))).toBe(inline(300));
  }, 120_000);

  it('a chunk reply the IPC channel cannot send fails that batch alone (500), as on a thread: the process goes on', async () => {
    await stepper.step(request(50));
    const [pid] = stepper.processIds();
    // A market the process reads in chunks, each asked of the request thread (no candle store named), whose reader
    // answers a value the structured clone refuses: the reply is answered as the chunk's error instead.
    const chunkedOnly = unsendableChunksMarket(CANDLES, 'unsendable-chunks-process');
    const before = stepper.tasksRun();
    const error = await stepper.step({ ...request(100), market: chunkedOnly }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(DomainError);
    expect((error as Error).message).toMatch(/^backtest stepping failed: .*could not be cloned/);
    // The task without the market, then with it: not run once more as after a death.
    expect(stepper.tasksRun() - before).toBe(2);
    // The process was not killed for it, and steps the next batch.
    expect(stepper.processIds()).toEqual([pid]);
    expect(processAlive(pid!)).toBe(true);
    expect(stored(await stepper.step(request(300)))).toBe(inline(300));
  }, 120_000);

  it('a batch the venue abandons while its process waits for a chunk ends there (`cancel`): the process goes on', async () => {
    // The stepping process driven over its own IPC protocol, as `process-pool.ts` does, to see what the pool does
    // not show: whether the child ends a task the venue failed (its chunk answer threw) or waits for it forever.
    const file = new URL('../../src/backtest/step-process.ts', import.meta.url);
    const child = fork(file.pathname, [], {
      execArgv: withTsxLoader(file, childExecArgv(process.execArgv)),
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const heard: ProcessMessage[] = [];
    child.on('message', (m: ProcessMessage) => heard.push(m));
    try {
      // A market whose every pair's chunks are asked of the venue (no candle store named).
      const task: StepTask = {
        kind: 'backtest',
        key: 'abandoned-chunks',
        market: chunkedTransfer(market),
        remote: market.series.map((_, i) => i),
        sessionId: SESSION,
        revision: revision + 1,
        state: encodeState(state),
        steps: 100,
        now: NOW.getTime(),
        sliceSteps: 8,
        sliceMs: 1,
      };
      child.send({ kind: 'run', id: 1, task } satisfies ProcessMessage);
      await until(() => heard.some((m) => m.kind === 'side' && m.id === 1), {
        what: 'a chunk asked for',
        timeoutMs: 60_000,
      });
      child.send({ kind: 'cancel', id: 1, reason: 'the venue could not answer' } satisfies ProcessMessage);
      // The task waiting for its chunk ends (its late `done`, which the pool ignores), instead of waiting forever.
      await until(() => heard.some((m) => m.kind === 'done' && m.id === 1), {
        what: 'the abandoned task ended',
        timeoutMs: 10_000,
      });
      const done = heard.find((m) => m.kind === 'done' && m.id === 1) as {
        result: { failed: { message: string } };
      };
      expect(done.result.failed.message).toBe('the venue abandoned the task: the venue could not answer');
      expect(heard.filter((m) => m.kind === 'side' && m.id === 1)).toHaveLength(1);
      // The process goes on with the next task.
      child.send({ kind: 'run', id: 2, task: { kind: 'warm' } } satisfies ProcessMessage);
      await until(() => heard.some((m) => m.kind === 'done' && m.id === 2), {
        what: 'the next task answered',
      });
      expect(heard.find((m) => m.kind === 'done' && m.id === 2)).toEqual({
        kind: 'done',
        id: 2,
        result: { warm: true },
      });
    } finally {
      child.kill('SIGKILL');
    }
  }, 120_000);

  it('a stepping process that cannot start (its module fails to load): 503 after two tries, as on a thread', async () => {
    const warned: { fields: Record<string, unknown>; message: string }[] = [];
    const failing = createPooledStepper({
      threads: 1,
      inlineUpTo: 0,
      sliceMs: 1,
      stepping: 'process',
      log: { warn: (fields, message) => warned.push({ fields, message }), error: () => {} },
      taskModule: new URL('../workers/fixtures/failing-at-load.ts', import.meta.url),
    });
    try {
      // A batch, then a later one: each answered 503 after two tries, none waiting forever.
      for (let batch = 1; batch <= 2; batch++) {
        const before = failing.tasksRun();
        const error = await failing.step(request(300)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(DomainError);
        expect((error as DomainError).code).toBe('SERVICE_UNAVAILABLE');
        expect((error as DomainError).message).toBe('backtest stepping is unavailable; retry shortly');
        expect((error as DomainError).details).toEqual({ retry_after_seconds: 1 });
        expect(failing.tasksRun() - before).toBe(2);
      }
      expect(warned).toHaveLength(2);
      expect(JSON.stringify(warned[0]!.fields)).toMatch(/the backtest stepping process exited \(code 1\)/);
    } finally {
      await failing.close();
    }
  }, 120_000);

  it('closing the stepper fails a running batch with SERVICE_UNAVAILABLE and starts no process again', async () => {
    const closing = createPooledStepper({ threads: 1, inlineUpTo: 0, sliceMs: 1, stepping: 'process' });
    try {
      closing.warm();
      await until(() => closing.processIds().length === 1, { what: 'a stepping process' });
      const [pid] = closing.processIds();
      const batch = closing.step(request(HOURS - 20)).catch((e: unknown) => e);
      await closing.close();
      const error = await batch;
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('SERVICE_UNAVAILABLE');
      expect((error as DomainError).details).toEqual({ retry_after_seconds: 1 });
      // Not run again in a fresh process: none is started after close() resolved, nor for a later batch.
      expect(closing.processIds()).toEqual([]);
      expect(processAlive(pid!)).toBe(false);
      const later = await closing.step(request(300)).catch((e: unknown) => e);
      expect((later as DomainError).code).toBe('SERVICE_UNAVAILABLE');
      closing.warm();
      expect(closing.processIds()).toEqual([]);
    } finally {
      await closing.close();
    }
  }, 120_000);

  it('exits when the venue is killed with SIGKILL (no orphan)', async () => {
    // A parent that starts a stepping process, waits until it answers, prints its pid, then waits to be killed.
    const code = `
      import { createPooledStepper } from ${JSON.stringify(new URL('../../src/backtest/stepper.ts', import.meta.url).href)};
      const s = createPooledStepper({ threads: 1, stepping: 'process' });
      s.warm();
      const wait = () => s.processIds().length ? console.log('PID ' + s.processIds()[0]) : setTimeout(wait, 50);
      wait();
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    parent.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    try {
      await until(() => /PID \d+/.test(out), { what: 'the stepping process started', timeoutMs: 60_000 });
      const pid = Number(/PID (\d+)/.exec(out)![1]);
      // Its modules loaded: its IPC channel is served (a disconnect then ends it).
      await until(() => niceOf(pid).every((n) => n === 19) && niceOf(pid).length > 3, {
        what: 'the stepping process reniced',
        timeoutMs: 60_000,
      });
      expect(processAlive(pid)).toBe(true);
      parent.kill('SIGKILL');
      await until(() => !processAlive(pid), { what: 'the orphan gone', timeoutMs: 30_000 });
    } finally {
      parent.kill('SIGKILL');
    }
  }, 150_000);
});
