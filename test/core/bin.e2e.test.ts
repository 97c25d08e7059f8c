import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

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
});
