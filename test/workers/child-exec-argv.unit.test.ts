import { describe, expect, it } from 'vitest';
import { childEnv, childExecArgv } from '../../src/workers/process-pool';

/**
 * The Node options a task process inherits from the venue (`childExecArgv`): an allow-list, so a dropped option's
 * value given as the next word (`--cpu-prof-dir DIR`, what bench/market-scale.ts passes with --cpu-prof) is
 * dropped with it instead of becoming the child's script (`node DIR …`: "Cannot find module DIR").
 */
describe('childExecArgv', () => {
  it('drops profiling and inspector options together with a value given as the next word', () => {
    expect(childExecArgv(['--cpu-prof', '--cpu-prof-dir', '/x', '--import', 'tsx'])).toEqual([
      '--import',
      'tsx',
    ]);
    expect(
      childExecArgv(['--heap-prof', '--heap-prof-dir', '/h', '--cpu-prof-name', 'p.cpuprofile']),
    ).toEqual([]);
    expect(childExecArgv(['--inspect-port', '9230', '--inspect', '--max-old-space-size=4096'])).toEqual([
      '--max-old-space-size=4096',
    ]);
    expect(childExecArgv(['--cpu-prof-dir=/x', '--inspect=0.0.0.0:9229', '--prof'])).toEqual([]);
  });

  it('drops a script given on the command line, with its text', () => {
    expect(childExecArgv(['--import', 'tsx', '--input-type=module', '-e', 'console.log(1)'])).toEqual([
      '--import',
      'tsx',
    ]);
    expect(childExecArgv(['-p', '1+1', '--input-type', 'module'])).toEqual([]);
  });

  it('keeps loaders, resolution conditions and memory limits, their values in either form', () => {
    expect(
      childExecArgv([
        '--require',
        './a.cjs',
        '--import=tsx',
        '--loader',
        'tsx',
        '--experimental-loader=./l.mjs',
        '-r',
        './b.cjs',
        '--conditions',
        'development',
        '-C=x',
        '--max-semi-space-size=64',
        '--max-old-space-size=8192',
        '--enable-source-maps',
        '--no-warnings',
        '--disable-warning=ExperimentalWarning',
      ]),
    ).toEqual([
      '--require',
      './a.cjs',
      '--import=tsx',
      '--loader',
      'tsx',
      '--experimental-loader=./l.mjs',
      '-r',
      './b.cjs',
      '--conditions',
      'development',
      '-C=x',
      '--max-semi-space-size=64',
      '--max-old-space-size=8192',
      '--enable-source-maps',
      '--no-warnings',
      '--disable-warning=ExperimentalWarning',
    ]);
  });
});

describe('childEnv', () => {
  it("passes what a task needs and not the venue's secrets", () => {
    const env = childEnv(
      {
        PATH: '/usr/bin',
        TZ: 'UTC',
        LC_ALL: 'C',
        NODE_OPTIONS: '--max-semi-space-size=64',
        BACKTEST_WORKER_CANDLES: '100',
        DATABASE_URL: 'postgres://secret',
        JWT_SECRET: 's',
        NODE_AUTH_TOKEN: 't',
        AWS_SECRET_ACCESS_KEY: 'k',
      },
      19,
    );
    expect(env).toEqual({
      PATH: '/usr/bin',
      TZ: 'UTC',
      LC_ALL: 'C',
      NODE_OPTIONS: '--max-semi-space-size=64',
      BACKTEST_WORKER_CANDLES: '100',
      PTV_CHILD_NICE: '19',
    });
  });
});
