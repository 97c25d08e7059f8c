import { afterEach, describe, expect, it } from 'vitest';
import { createPooledStepper } from '../../src/backtest/stepper';
import { loadConfig } from '../../src/config';

/**
 * `BACKTEST_STEPPING` is the configuration's: a bad value refuses the start with a clear error (it once fell back to
 * thread stepping silently, read straight from the environment by the stepper), and the stepper takes only what it
 * is given.
 */
describe('BACKTEST_STEPPING', () => {
  const before = process.env.BACKTEST_STEPPING;
  afterEach(() => {
    if (before === undefined) delete process.env.BACKTEST_STEPPING;
    else process.env.BACKTEST_STEPPING = before;
  });

  it('a bad value refuses the configuration, naming the variable', () => {
    expect(() => loadConfig({ BACKTEST_STEPPING: 'proces' })).toThrow(
      /invalid configuration: BACKTEST_STEPPING/,
    );
    expect(loadConfig({ BACKTEST_STEPPING: 'process' }).BACKTEST_STEPPING).toBe('process');
    expect(loadConfig({}).BACKTEST_STEPPING).toBe('thread');
  });

  it('the stepper does not read the environment: without `stepping` it steps on threads', async () => {
    process.env.BACKTEST_STEPPING = 'process';
    const stepper = createPooledStepper({ threads: 1 });
    try {
      stepper.warm();
      expect(stepper.processIds()).toEqual([]);
    } finally {
      await stepper.close();
    }
  });
});
