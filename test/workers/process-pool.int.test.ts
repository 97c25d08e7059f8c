import { afterAll, describe, expect, it } from 'vitest';
import { createProcessPool, ProcessGoneError } from '../../src/workers/process-pool';

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
});
