import { afterAll, describe, expect, it } from 'vitest';
import { createProcessPool, ProcessGoneError } from '../../src/workers/process-pool';
import { processAlive } from '../support/process-alive';
import { until } from '../support/until';

const pool = createProcessPool(new URL('../../src/backtest/step-process.ts', import.meta.url), {
  maxProcesses: 1,
  nice: 0,
  label: 'test',
});
afterAll(() => pool.close());

/**
 * A task the IPC channel's structured clone refuses (a function): `child.send` throws, and the process would
 * otherwise keep the task as running forever (never idle, holding the venue's event loop) with no answer to come.
 */
describe('createProcessPool', () => {
  it('a task that cannot be sent fails and its process is stopped, not left busy forever', async () => {
    const error = await pool.run({ kind: 'warm', f: () => 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProcessGoneError);
    expect((error as Error).message).toMatch(/^the test process could not be sent a message: /);
    expect(pool.started()).toBe(0);
  });

  it('a message that cannot be sent kills its process (its pid ends) and fails every task it was running', async () => {
    pool.warm();
    await until(() => pool.pids().length === 1, { what: 'a task process' });
    const [pid] = pool.pids();
    // Two tasks on the one process: one it can be sent, then one it cannot.
    const sendable = pool.run({ kind: 'warm' }).catch((e: unknown) => e);
    const unsendable = pool.run({ kind: 'warm', f: () => 1 }).catch((e: unknown) => e);
    for (const error of [await sendable, await unsendable]) {
      expect(error).toBeInstanceOf(ProcessGoneError);
      expect((error as Error).message).toMatch(/^the test process could not be sent a message: /);
    }
    expect(pool.pids()).toEqual([]);
    // Killed, not only forgotten: a forgotten child would live on, idle, until the venue exits.
    await until(() => !processAlive(pid!), { what: `process ${pid} to end` });
    // The next task starts a fresh process.
    expect(await pool.run({ kind: 'warm' })).toEqual({ warm: true });
    expect(pool.pids()).not.toContain(pid);
  }, 60_000);
});
