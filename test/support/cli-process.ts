import { execFile } from 'node:child_process';
import path from 'node:path';

/** The repository's root, where `src/main.ts` is run from. */
const ROOT = path.resolve(import.meta.dirname, '../..');

/** What a finished CLI process gave: its exit code (-1 when killed) and its output. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real command line, `node --import tsx src/main.ts ...args`, from the repository's root with the test
 * process's environment plus `LOG_LEVEL=warn` and `env`; resolves (never rejects) to its exit code and output. Killed
 * after 120 s.
 */
export const runCli = (args: string[], env: Record<string, string>): Promise<CliRun> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/main.ts', ...args],
      {
        cwd: ROOT,
        env: { ...process.env, LOG_LEVEL: 'warn', ...env },
        maxBuffer: 64 << 20,
        timeout: 120_000,
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
