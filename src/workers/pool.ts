import { Piscina } from 'piscina';

/**
 * `execArgv` with tsx's loader added (`--import tsx`) when `file` is TypeScript and no option of `execArgv` names
 * tsx (the venue runs from its sources through `tsx`, which a thread or child process needs too); otherwise
 * `execArgv` itself, the same array. Pure.
 */
export const withTsxLoader = (file: URL, execArgv: string[]): string[] =>
  file.pathname.endsWith('.ts') && !execArgv.some((a) => a.includes('tsx'))
    ? [...execArgv, '--import', 'tsx']
    : execArgv;

/**
 * A pool of worker threads (piscina) running the default export of `file`. The venue runs from TypeScript sources
 * through `tsx`; a worker thread inherits the parent's `execArgv`, which carries tsx's loader when the process was
 * started by `tsx` but not under another runner (vitest), so the loader is added when it is missing.
 * `niceIncrement` lowers the threads' CPU priority (Linux, through piscina's optional `@napi-rs/nice`), so the
 * request thread wins the CPU when both want it.
 */
export const createWorkerPool = (
  file: URL,
  options: {
    maxThreads: number;
    minThreads?: number;
    niceIncrement?: number;
    idleTimeoutMs?: number;
    /** Tasks one thread runs at once (async tasks interleave at their awaits; default 1). */
    concurrentTasksPerWorker?: number;
  },
): Piscina => {
  const execArgv = withTsxLoader(file, process.execArgv);
  return new Piscina({
    filename: file.href,
    maxThreads: options.maxThreads,
    minThreads: options.minThreads ?? 0,
    idleTimeout: options.idleTimeoutMs ?? 30_000,
    concurrentTasksPerWorker: options.concurrentTasksPerWorker ?? 1,
    ...(options.niceIncrement ? { niceIncrement: options.niceIncrement } : {}),
    // Only when the loader is added: a thread given no `execArgv` inherits the parent's.
    ...(execArgv === process.execArgv ? {} : { execArgv }),
  });
};
