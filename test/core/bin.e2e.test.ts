import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { VENUE_NODE_FLAGS, venueNodeOptions } from '../../bin/node-flags.mjs';
import { until } from '../support/until';

const run = promisify(execFile);

describe('bin/ptv.mjs (package.json "bin")', () => {
  it('runs the same command line as npm start: version and the command list', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const printed = await run(process.execPath, ['bin/ptv.mjs', '--version']);
    expect(printed.stdout.trim()).toBe(version);
    const help = await run(process.execPath, ['bin/ptv.mjs', '--help']);
    for (const command of ['serve', 'worker', 'migrate', 'projections', 'events', 'audit']) {
      expect(help.stdout).toContain(command);
    }
  }, 60_000);

  it("runs the command with the venue's Node flags in NODE_OPTIONS, and an operator's own value wins", async () => {
    // A preload that prints each process's NODE_OPTIONS as it runs.
    const dir = mkdtempSync(path.join(tmpdir(), 'ptv-bin-'));
    const probe = path.join(dir, 'probe.cjs');
    writeFileSync(
      probe,
      "process.stderr.write('flags ' + JSON.stringify(process.env.NODE_OPTIONS) + '\\n');\n",
    );
    try {
      const seen = async (nodeOptions: string) =>
        (
          await run(process.execPath, ['bin/ptv.mjs', '--version'], {
            env: { ...process.env, NODE_OPTIONS: nodeOptions },
          })
        ).stderr
          .split('\n')
          .filter((l) => l.startsWith('flags '));
      // Without the flag: this process, then the command's process (and its loader's thread, which runs the preload
      // too) with the flags appended to NODE_OPTIONS.
      const plain = `--require ${probe}`;
      const [parent, ...command] = await seen(plain);
      expect(parent).toBe(`flags ${JSON.stringify(plain)}`);
      expect(command.length).toBeGreaterThan(0);
      for (const line of command)
        expect(line).toBe(`flags ${JSON.stringify(`${plain} ${VENUE_NODE_FLAGS.join(' ')}`)}`);
      // The operator's own young generation: no second process, the value as given.
      const own = `--require ${probe} --max-semi-space-size=16`;
      const lines = await seen(own);
      expect(lines.length).toBe(command.length);
      for (const line of lines) expect(line).toBe(`flags ${JSON.stringify(own)}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('bin/ptv.mjs serve and signals', () => {
  it('stops gracefully on a SIGTERM to its process group, which reaches the parent and the child at once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ptv-serve-'));
    const child = spawn(process.execPath, ['bin/ptv.mjs', 'serve'], {
      detached: true, // its own process group, as `setsid npm start` in .ci/run
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: dir,
        MARKET_DATA_DIR: '',
        LOG_LEVEL: 'info',
        NODE_OPTIONS: '',
      },
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += String(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => output.includes('listening on http') || child.exitCode !== null, {
        timeoutMs: 90_000,
        everyMs: 100,
        what: 'ptv serve listening',
      });
      expect(output).toContain('listening on http');
      process.kill(-child.pid!, 'SIGTERM');
      // And once more to the parent alone a moment later, which it passes on: the same stop request again.
      await new Promise((r) => setTimeout(r, 20));
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toBe(0);
      expect(output).toContain('shutting down');
      expect(output).toContain('"stopped"');
    } finally {
      if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('venueNodeOptions', () => {
  it('appends the missing flags to NODE_OPTIONS and leaves an option already given, by name, as it is', () => {
    expect(VENUE_NODE_FLAGS).toContain('--max-semi-space-size=64');
    expect(venueNodeOptions(undefined, [])).toBe('--max-semi-space-size=64');
    expect(venueNodeOptions('  --enable-source-maps ', [])).toBe(
      '--enable-source-maps --max-semi-space-size=64',
    );
    expect(venueNodeOptions('--max-semi-space-size=8', [])).toBeUndefined();
    // V8 reads `_` as `-`, and NODE_OPTIONS may quote a word: the operator's value still wins.
    expect(venueNodeOptions('--max_semi_space_size=2', [])).toBeUndefined();
    expect(venueNodeOptions('"--max-semi-space-size=8"', [])).toBeUndefined();
    expect(venueNodeOptions(undefined, ['--max_semi_space_size=4'])).toBeUndefined();
    expect(venueNodeOptions(undefined, ['--import', 'tsx', '--max-semi-space-size=32'])).toBeUndefined();
    expect(venueNodeOptions('--max-old-space-size=4096', [])).toBe(
      '--max-old-space-size=4096 --max-semi-space-size=64',
    );
  });
});
