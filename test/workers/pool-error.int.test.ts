import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * A worker thread that fails outside any task — its module fails to load as it starts — is reported by piscina as
 * the pool's `error` event, not as a task's rejection (piscina 5, `_onError`: a thread with no task of its own).
 * Unheard, Node throws it as an uncaught exception (the venue ends), and heard but ignored, the tasks queued for
 * the thread wait forever (piscina starts no thread again after one failed starting). The pool of
 * `createWorkerPool` logs it and fails the tasks it holds as a thread's death (`threadDied`); the next task gets a
 * fresh pool. Run in a child process of the test: the crash it guards against would end the test's own process.
 * (A thread that is running no task does not reach its own timers: it waits on `Atomics.wait` for the next task,
 * so an error outside a task after start-up is in practice an error under one, which rejects that task.)
 */

const src = (path: string): string => JSON.stringify(new URL(`../../src/${path}`, import.meta.url).href);
const fixture = (name: string): string => JSON.stringify(new URL(`./fixtures/${name}`, import.meta.url).href);

const scratch = mkdtempSync(join(tmpdir(), 'pool-error-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let scripts = 0;
/** tsx's register API (its ES module), by its path: the script lives outside the repository. */
const tsxApi = (() => {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const exports = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports: Record<string, unknown> })
    .exports;
  const entry = (exports['./esm/api'] as { import: { default: string } }).import.default;
  return JSON.stringify(pathToFileURL(join(dirname(manifest), entry)).href);
})();

/**
 * Runs the ES module `code` in a fresh Node, up to `timeoutMs`; its exit code and output. As the venue does
 * (`bin/ptv.mjs`): tsx registered by the script, not in the process's options, which a worker thread would inherit
 * (`--input-type` fails it as it starts); `createWorkerPool` gives the threads tsx's loader. `code` imports the
 * venue's TypeScript modules with `await import(…)`.
 */
const runModule = (
  code: string,
  timeoutMs = 60_000,
): Promise<{ code: number | null; out: string; err: string }> =>
  new Promise((resolve) => {
    const file = join(scratch, `script-${++scripts}.mjs`);
    writeFileSync(file, `const { register } = await import(${tsxApi});\nregister();\n${code}`);
    const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'], cwd: process.cwd() });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (exit) => {
      clearTimeout(timer);
      resolve({ code: exit, out, err });
    });
  });

/** The line of `out` starting with `RESULT `, parsed. */
const resultOf = (run: { code: number | null; out: string; err: string }): Record<string, unknown> => {
  const line = run.out.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`no result (exit ${run.code}):\n${run.out}\n${run.err.slice(-2000)}`);
  return JSON.parse(line.slice('RESULT '.length)) as Record<string, unknown>;
};

describe("a worker pool's error event (a thread failing outside any task)", () => {
  it('a thread whose module fails to load: every task fails as a death, logged; no hang, no crash', async () => {
    const run = await runModule(`
      const { createWorkerPool } = await import(${src('workers/pool.ts')});
      const { threadDied } = await import(${src('workers/thread-death.ts')});
      const logged = [];
      const log = { error: (fields, message) => logged.push([message, String(fields.err?.message)]) };
      const pool = createWorkerPool(new URL(${fixture('failing-at-load.ts')}), { maxThreads: 1, log });
      // A task that waits forever is reported as hung (the process would otherwise wait for nothing).
      const outcome = (task) => Promise.race([
        pool.run(task).then(() => 'answered', (e) => ({ died: threadDied(e), message: e.message })),
        new Promise((r) => setTimeout(() => r('hung'), 20000).unref()),
      ]);
      // Two tasks waiting for the one thread as it fails, then one more: on a fresh pool, which fails again.
      const first = await Promise.all([outcome('a'), outcome('b')]);
      const later = await outcome('c');
      await pool.destroy();
      console.log('RESULT ' + JSON.stringify({ tasks: [...first, later], logged }));
    `);
    const result = resultOf(run);
    expect(run.code).toBe(0);
    const tasks = result.tasks as { died: boolean; message: string }[];
    expect(tasks).toHaveLength(3);
    for (const task of tasks) {
      expect(task).toMatchObject({ died: true });
      // The thread's own error (piscina's report of the module's failure names the module).
      expect(task.message).toMatch(/failing-at-load\.ts|fails to load/);
    }
    // Each pool's failure logged once, with the thread's error.
    const logged = result.logged as [string, string][];
    expect(logged).toHaveLength(2);
    for (const [message, error] of logged) {
      expect(message).toMatch(/worker thread/);
      expect(error).toMatch(/failing-at-load\.ts|fails to load/);
    }
  }, 90_000);
});
