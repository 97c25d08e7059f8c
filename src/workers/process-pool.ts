import { type ChildProcess, fork } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { errorText } from './error-text';
import { withTsxLoader } from './pool';

/**
 * A message between the venue and one of its task processes ({@link createProcessPool}), sent with Node's
 * `advanced` IPC serialization (the structured clone: typed arrays, bigints, `Map`s cross as they are; a typed
 * array over a `SharedArrayBuffer` crosses as a copy of its bytes in a plain buffer; a bare `SharedArrayBuffer`
 * cannot be sent).
 * - `run` (venue → child): task `id`, its `task` value.
 * - `done` (child → venue): task `id`'s result, or `error` (an exception's message and stack: the task threw). A
 *   `done` for a task the venue no longer runs (it abandoned it: `cancel`) is ignored.
 * - `side` (either way): a message of task `id`'s own conversation (e.g. a chunk asked for and answered) while it
 *   runs; `data` is the task's own. One for a task the other side no longer runs is ignored.
 * - `cancel` (venue → child): the venue abandoned task `id` — it failed it alone, with `reason` (its side handler
 *   threw, or a side reply could not be serialised), and answers it no more. The child aborts the task's
 *   `SideChannel.signal` (with reason "the venue abandoned the task: <reason>") and stops handing it side
 *   messages, so a task waiting for an answer ends (rejects) and frees what it holds instead of waiting forever;
 *   its `done` still goes, ignored. Only the task ends: its process and other tasks go on.
 */
export type ProcessMessage =
  | { kind: 'run'; id: number; task: unknown }
  | { kind: 'done'; id: number; result?: unknown; error?: { message: string; stack?: string } }
  | { kind: 'side'; id: number; data: unknown }
  | { kind: 'cancel'; id: number; reason: string };

/** Options of {@link createProcessPool}. */
export interface ProcessPoolOptions {
  /** Processes at most (tasks go to the one with the fewest running). */
  maxProcesses: number;
  /** Nice value every thread of a process is set to (Linux; 0 leaves it; default 19, the lowest priority). */
  nice?: number;
  /** A process with no task for this long exits (ms; default 60 s). */
  idleTimeoutMs?: number;
  /** Names the processes in errors (e.g. "backtest stepping"). */
  label: string;
}

/** Runs tasks on child processes: see {@link createProcessPool}. */
export interface ProcessPool {
  /**
   * Runs `task` on a process and resolves with its result. `onSide` receives the task's side messages from the
   * child; `reply` sends one back to it. One rule for every message of the task: one the structured clone refuses
   * is not sent and fails its sender alone — the task (rejected with the clone's error, e.g. "… could not be
   * cloned") or `reply` (throws it: `onSide` may answer otherwise) — and the process goes on; an `onSide` that
   * throws (a `reply` it did not catch too) fails its task with that error, and the child is told (`cancel`): its
   * run of the task is abandoned there too (`SideChannel.signal`), the process and its other tasks go on. Rejects
   * too when the task threw in the child (its message), or when the process exited before answering (a
   * {@link ProcessGoneError}: a crash, a kill, a broken channel, "the <label> process exited …"; the next task
   * starts a fresh one).
   */
  run(task: unknown, onSide?: (data: unknown, reply: (data: unknown) => void) => void): Promise<unknown>;
  /** Starts the processes still missing without waiting for them (their first tasks then find them loaded). */
  warm(): void;
  /** Processes started (or starting) now. */
  started(): number;
  /** Their process ids (for a test or a benchmark to watch or kill them). */
  pids(): number[];
  /** Kills every process; a task running then rejects. */
  close(): Promise<void>;
}

/** Options that take a value, as `--opt value` or `--opt=value`, a child keeps (module loading, resolution). */
const KEPT_WITH_VALUE = new Set([
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
  '--experimental-default-type',
  '--conditions',
  '-C',
]);
/**
 * Options a child keeps as they are (`--opt=value` or a bare switch): memory limits, warnings, source maps, and
 * `--experimental-*` switches but those taking a value (`--experimental-policy`, `--experimental-sea-config`,
 * `--experimental-config-file`: the venue's own; the loaders are `KEPT_WITH_VALUE`'s), whose value would be lost.
 */
const KEPT =
  /^(--max-old-space-size=|--max-semi-space-size=|--max_old_space_size=|--max_semi_space_size=|--stack-size=|--enable-source-maps$|--no-warnings$|--no-deprecation$|--disable-warning=|--(no-)?experimental-(?!(policy|sea-config|config-file)(=|$))[a-z0-9-]+$|--expose-gc$|--unhandled-rejections=|--trace-warnings$|--trace-uncaught$)/;

/**
 * The Node options a task process is started with, from the venue's own `execArgv` (`process.execArgv`): an
 * allow-list, not a deny-list, because an option the venue was started with may take its value as the next word
 * (`--cpu-prof-dir DIR`), and dropping the option but not its value would start the child as `node DIR …`. Kept:
 * the module loaders and resolution (`--import`, `--require`/`-r`, `--loader`, `--experimental-loader`,
 * `--experimental-default-type`, `--conditions`/`-C`, with their value in either form), memory limits
 * (`--max-old-space-size=`, `--max-semi-space-size=`, `--stack-size=`), warnings and source maps,
 * `--experimental-*` switches (not those taking a value, e.g. `--experimental-policy`). Everything else is the
 * venue's alone — the inspector (a child would fight for its port), profiling (each would write its own profile), a
 * script (`-e`, `-p`, `--input-type`) that would run instead of the task module — and is dropped, and so is a value
 * following it as the next word (a word that is no kept option is dropped). Pure; throws nothing.
 */
export const childExecArgv = (execArgv: readonly string[]): string[] => {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const a = execArgv[i]!;
    const name = a.split('=')[0]!;
    if (KEPT_WITH_VALUE.has(name)) {
      if (a.includes('=')) kept.push(a);
      else if (i + 1 < execArgv.length) kept.push(a, execArgv[++i]!);
    } else if (KEPT.test(a)) kept.push(a);
  }
  return kept;
};

/** Environment variables a task process is given (`childEnv`); `LC_*`, `NODE_*` but `NODE_AUTH_TOKEN`, `TSX_*`, `ESBUILD_*`, `BACKTEST_*` too. */
const CHILD_ENV = new Set([
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'TZ',
  'LANG',
  'LANGUAGE',
  'UV_THREADPOOL_SIZE',
]);
const CHILD_ENV_PREFIX = /^(LC_|NODE_|TSX_|ESBUILD_|BACKTEST_)/;

/**
 * The environment of a task process, from the venue's (`process.env`): only what running a task module needs —
 * the search path, home and temporary directories, time zone and locale, Node's own (`NODE_OPTIONS`: the venue's
 * V8 flags, `NODE_PATH`, `NODE_ENV`), tsx's and esbuild's, the `BACKTEST_*` settings (`BACKTEST_WORKER_CANDLES`)
 * — and `PTV_CHILD_NICE` (`nice`, which `process-child.ts` renices its threads to). The venue's secrets (database
 * URL, API keys, signing keys) are not passed: a task has no use for them. Pure; throws nothing.
 */
export const childEnv = (env: NodeJS.ProcessEnv, nice: number): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === 'NODE_AUTH_TOKEN') continue;
    if (CHILD_ENV.has(name) || CHILD_ENV_PREFIX.test(name)) out[name] = value;
  }
  out.PTV_CHILD_NICE = String(nice);
  return out;
};

/**
 * A task's rejection because its process went away before answering (exited, killed, its channel broke, stopped
 * by `close` or its idle timer), as opposed to the task itself throwing: the task did not run to its end, and a
 * deterministic task can be run again on another process.
 */
export class ProcessGoneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProcessGoneError';
  }
}

interface Running {
  resolve(value: unknown): void;
  reject(error: Error): void;
  onSide?: ((data: unknown, reply: (data: unknown) => void) => void) | undefined;
}

interface Member {
  child: ChildProcess;
  running: Map<number, Running>;
  idle?: NodeJS.Timeout | undefined;
  exited: boolean;
}

/**
 * A small pool of child processes running the default export of the module `file` (ESM; run through `tsx` when
 * it is TypeScript), each its own V8 — heap, external memory, GC and compiler helper threads — and, on Linux, every
 * thread of it at nice `nice` (the child renices its threads itself as it starts, `process-child.ts`'s
 * `reniceAllThreads`; the venue sets the process's main thread too). Why processes and not worker threads: a
 * worker thread's isolate shares the process's V8 platform threads, which run at the request thread's priority,
 * and the memory it hands over counts as the request isolate's external memory (docs/benchmarks.md, "Stepping in a
 * child process at nice 19"). A library pool was not used: tinypool's `child_process` runtime sends with JSON
 * serialization and carries no per-task channel, which the stepping's typed columns and chunk requests need.
 *
 * A child exits when its IPC channel closes (the venue ended, even by SIGKILL: no orphan), when killed by
 * `close`, or after `idleTimeoutMs` without a task. A child that dies fails its running tasks, and the next task
 * starts a fresh one: the venue keeps running. An idle child does not keep the venue's event loop alive.
 */
export const createProcessPool = (file: URL, options: ProcessPoolOptions): ProcessPool => {
  const members: Member[] = [];
  const nice = options.nice ?? 19;
  const idleMs = options.idleTimeoutMs ?? 60_000;
  let nextId = 0;
  let closed = false;

  const execArgv = withTsxLoader(file, childExecArgv(process.execArgv));

  const settleIdle = (m: Member): void => {
    if (m.running.size > 0) {
      clearTimeout(m.idle);
      m.idle = undefined;
      m.child.ref();
      m.child.channel?.ref();
      return;
    }
    // Idle: the venue may exit without it; it exits by itself after a while.
    m.child.unref();
    m.child.channel?.unref();
    m.idle ??= setTimeout(() => {
      if (m.running.size === 0) kill(m, 'was stopped');
    }, idleMs).unref();
  };

  const drop = (m: Member, why: string): void => {
    if (m.exited) return;
    m.exited = true;
    clearTimeout(m.idle);
    const at = members.indexOf(m);
    if (at >= 0) members.splice(at, 1);
    for (const r of m.running.values()) r.reject(new ProcessGoneError(`the ${options.label} process ${why}`));
    m.running.clear();
  };

  /** Marks `m` gone (its running tasks rejected: "the <label> process `why`") and kills it. */
  const kill = (m: Member, why: string): void => {
    drop(m, why);
    m.child.kill('SIGKILL');
  };

  const start = (): Member => {
    const child = fork(fileURLToPath(file), [], {
      execArgv,
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: childEnv(process.env, nice),
    });
    const m: Member = { child, running: new Map(), exited: false };
    members.push(m);
    if (nice && child.pid !== undefined) {
      try {
        os.setPriority(child.pid, nice);
      } catch {
        // Not permitted or not Linux: the child renices its own threads as it starts.
      }
    }
    child.on('message', (message: ProcessMessage) => {
      const r = m.running.get(message.id);
      if (!r) return;
      if (message.kind === 'side') {
        try {
          r.onSide?.(message.data, (data) => post(m, { kind: 'side', id: message.id, data }));
        } catch (error) {
          // A throw here would be an uncaught exception of the venue (this is an event handler).
          failAlone(m, message.id, error, true);
        }
        return;
      }
      if (message.kind !== 'done') return;
      m.running.delete(message.id);
      settleIdle(m);
      if (message.error) {
        const error = new Error(message.error.message);
        if (message.error.stack) error.stack = message.error.stack;
        r.reject(error);
      } else r.resolve(message.result);
    });
    child.on('error', (error) => {
      // A child whose channel or signal failed may still run: kill it, or it would hold its memory unseen.
      kill(m, `failed: ${error.message}`);
    });
    child.on('exit', (code, signal) =>
      drop(m, `exited (${signal ? `signal ${signal}` : `code ${code}`}) before the task's end`),
    );
    settleIdle(m);
    return m;
  };

  /**
   * Sends `message` to `m`'s child. A child gone or going — exited, its channel closed, or breaking under the
   * message — is killed: its tasks fail as gone ({@link ProcessGoneError}). Throws, having sent nothing, when the
   * message cannot be serialised (a value the structured clone refuses): that is the sender's failure, not the
   * process's, which goes on (the same rule for a task and for a side message: see `run`).
   */
  const post = (m: Member, message: ProcessMessage): void => {
    if (m.exited || !m.child.connected) {
      kill(m, 'exited before it could be sent a message');
      return;
    }
    m.child.send(message, (error) => {
      // The channel broke under the message: the child is gone or going; fail its tasks now.
      if (error) kill(m, `could not be sent a message: ${error.message}`);
    });
  };

  /**
   * Fails task `id` of `m` alone with `error` (its message could not be sent, or its side handler threw): the
   * same value would fail again, so it is no {@link ProcessGoneError}; the process and its other tasks go on.
   * `sent`: the child has the task (it asked something of it), so it is told to abandon it (`cancel`) — else it
   * would wait forever for an answer that will not come, holding its memory, in a process counted idle.
   */
  const failAlone = (m: Member, id: number, error: unknown, sent: boolean): void => {
    const r = m.running.get(id);
    if (!r) return;
    m.running.delete(id);
    settleIdle(m);
    const failure = error instanceof Error ? error : new Error(errorText(error));
    // A string always clones: this posts or, the channel gone, kills the process (its other tasks fail as gone).
    if (sent) post(m, { kind: 'cancel', id, reason: failure.message });
    r.reject(failure);
  };

  const pick = (): Member => {
    if (members.length < options.maxProcesses) {
      const idle = members.find((m) => m.running.size === 0);
      return idle ?? start();
    }
    return members.reduce((a, b) => (b.running.size < a.running.size ? b : a));
  };

  return {
    run(task, onSide) {
      if (closed) return Promise.reject(new Error(`the ${options.label} processes are closed`));
      const m = pick();
      const id = ++nextId;
      return new Promise((resolve, reject) => {
        m.running.set(id, { resolve, reject, onSide });
        settleIdle(m);
        try {
          post(m, { kind: 'run', id, task });
        } catch (error) {
          // The task could not be serialised: nothing was sent and the child is fine.
          failAlone(m, id, error, false);
        }
      });
    },
    warm() {
      if (closed) return;
      while (members.length < options.maxProcesses) start();
    },
    started: () => members.length,
    pids: () => members.flatMap((m) => (m.child.pid === undefined ? [] : [m.child.pid])),
    async close() {
      closed = true;
      const all = [...members];
      await Promise.all(
        all.map(
          (m) =>
            new Promise<void>((resolve) => {
              if (m.child.exitCode !== null || m.child.signalCode !== null) return resolve();
              m.child.once('exit', () => resolve());
              kill(m, 'was stopped');
            }),
        ),
      );
    },
  };
};
