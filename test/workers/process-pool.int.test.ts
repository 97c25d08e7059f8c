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

/** A pool of one process of `fixtures/side-child.ts` (each task a side round trip). */
const sidePool = () =>
  createProcessPool(new URL('./fixtures/side-child.ts', import.meta.url), {
    maxProcesses: 1,
    nice: 0,
    label: 'test',
  });

/**
 * A task the IPC channel's structured clone refuses (a function): `child.send` throws, and the process would
 * otherwise keep the task as running forever (never idle, holding the venue's event loop) with no answer to come.
 */
describe('createProcessPool', () => {
  it('a task that cannot be sent fails with the clone error, not as a gone process, and leaves no process busy', async () => {
    const error = await pool.run({ kind: 'warm', f: () => 1 }).catch((e: unknown) => e);
    // Nothing was sent: the same value would fail again, so it is no ProcessGoneError (which a caller runs again).
    expect(error).not.toBeInstanceOf(ProcessGoneError);
    expect((error as Error).message).toMatch(/could not be cloned/);
    // The process it was meant for is not busy with it: it runs the next task.
    expect(await pool.run({ kind: 'warm' })).toEqual({ warm: true });
  }, 60_000);

  it('a task that cannot be sent fails alone: its process and the tasks it runs go on', async () => {
    pool.warm();
    await until(() => pool.pids().length === 1, { what: 'a task process' });
    const [pid] = pool.pids();
    // Two tasks on the one process: one it can be sent, then one it cannot.
    const sendable = pool.run({ kind: 'warm' }).catch((e: unknown) => e);
    const unsendable = pool.run({ kind: 'warm', f: () => 1 }).catch((e: unknown) => e);
    expect(await sendable).toEqual({ warm: true });
    expect(await unsendable).not.toBeInstanceOf(ProcessGoneError);
    expect(((await unsendable) as Error).message).toMatch(/could not be cloned/);
    expect(pool.pids()).toEqual([pid]);
    expect(processAlive(pid!)).toBe(true);
    expect(await pool.run({ kind: 'warm' })).toEqual({ warm: true });
  }, 60_000);

  it('a side reply that cannot be sent throws to the replier, nothing sent: its task and process go on', async () => {
    const side = sidePool();
    try {
      const answer = await side.run('ask', (_data, reply) => {
        try {
          reply({ f: () => 1 });
        } catch (error) {
          reply(`refused: ${(error as Error).message}`);
        }
      });
      // The same rule as a task that cannot be sent: the sender gets the clone's error; no process is killed.
      expect(answer).toMatch(/^refused: .*could not be cloned/);
      const [pid] = side.pids();
      expect(await side.run('again', (data, reply) => reply(`echo ${String(data)}`))).toBe('echo again');
      expect(side.pids()).toEqual([pid]);
    } finally {
      await side.close();
    }
  }, 60_000);

  it('a side handler that throws fails its task alone with that error, not the venue nor the process', async () => {
    const side = sidePool();
    try {
      const error = await side
        .run('ask', () => {
          throw new Error('the venue could not answer');
        })
        .catch((e: unknown) => e);
      expect(error).not.toBeInstanceOf(ProcessGoneError);
      expect((error as Error).message).toBe('the venue could not answer');
      const [pid] = side.pids();
      expect(processAlive(pid!)).toBe(true);
      expect(await side.run('next', (data, reply) => reply(`echo ${String(data)}`))).toBe('echo next');
      expect(side.pids()).toEqual([pid]);
    } finally {
      await side.close();
    }
  }, 60_000);

  it('a task the venue failed alone (its side handler threw, its reply could not be sent) ends in the child too', async () => {
    const side = sidePool();
    try {
      // A task of the same process answered later: abandoning another task must not touch it.
      const other = side.run('other', (data, reply) => {
        setTimeout(() => reply(`late ${String(data)}`), 300);
      });
      const threw = await side
        .run('ask', () => {
          throw new Error('the venue could not answer');
        })
        .catch((e: unknown) => e);
      expect((threw as Error).message).toBe('the venue could not answer');
      // A reply the structured clone refuses, not caught by the side handler: the same failure of the task alone.
      const unsendable = await side
        .run('ask', (_data, reply) => reply({ f: () => 1 }))
        .catch((e: unknown) => e);
      expect(unsendable).not.toBeInstanceOf(ProcessGoneError);
      expect((unsendable as Error).message).toMatch(/could not be cloned/);
      const [pid] = side.pids();
      expect(await other).toBe('late other');
      // The child was told: its two tasks waiting for an answer that will not come ended there, holding nothing
      // (before, they waited forever in a process the venue counted idle and gave new tasks).
      await until(async () => (await side.run('held')) === 0, {
        what: 'the child holding none of the tasks the venue failed',
        timeoutMs: 5_000,
      });
      // One bad task killed neither the process nor its other tasks.
      expect(side.pids()).toEqual([pid]);
      expect(processAlive(pid!)).toBe(true);
      expect(await side.run('next', (data, reply) => reply(`echo ${String(data)}`))).toBe('echo next');
    } finally {
      await side.close();
    }
  }, 60_000);
});
