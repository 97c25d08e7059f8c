import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, EXIT_USAGE } from './errors';

/**
 * The embedded PGlite database lives in `DATA_DIR/pglite` and serves **one process at a time**: PGlite has no
 * lock of its own, and two processes opening the same directory (a `serve` and an `audit replay`, say) each
 * write pages the other does not know about, which corrupts it. Every CLI command that opens that database
 * first takes `DATA_DIR/pglite.lock` (created exclusively; it names the process) and gives it back when the
 * process exits. A lock whose process is gone (killed, crashed) is taken over.
 */
export const LOCK_FILE = 'pglite.lock';

/** What the lock file holds. */
export interface DataDirLockInfo {
  pid: number;
  command: string;
  started_at: string;
  hostname: string;
}

/** Whether the configuration uses the embedded PGlite (no `DATABASE_URL`). */
export const usesEmbeddedDatabase = (config: { DATABASE_URL?: string | undefined }): boolean =>
  !config.DATABASE_URL;

/**
 * For commands that read an existing venue (audit, events, projections, accounts): refuses, with one line and
 * exit code 2, a `DATA_DIR` that holds no database, instead of silently creating an empty one there (a typo in
 * `DATA_DIR` would otherwise "verify" an empty log).
 */
export const requireExistingDatabase = (config: {
  DATABASE_URL?: string | undefined;
  DATA_DIR: string;
}): void => {
  if (!usesEmbeddedDatabase(config)) return;
  const dataDir = path.resolve(config.DATA_DIR);
  if (fs.existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'))) return;
  throw new CliError(
    `no venue database in DATA_DIR ${dataDir} (${path.join(dataDir, 'pglite')} does not exist): set DATA_DIR (or --data-dir) to the server's data directory, or DATABASE_URL to its PostgreSQL database`,
    EXIT_USAGE,
  );
};

const readLock = (file: string): DataDirLockInfo | undefined => {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<DataDirLockInfo>;
    return typeof parsed.pid === 'number' ? (parsed as DataDirLockInfo) : undefined;
  } catch {
    return undefined;
  }
};

/** Whether the process that wrote `lock` still runs (on this machine; another host's lock counts as held). */
const isHeld = (lock: DataDirLockInfo | undefined): lock is DataDirLockInfo => {
  if (!lock) return false; // unreadable: not written by this code (locks are linked into place complete)
  if (lock.hostname !== os.hostname()) return true;
  // Our own pid: a previous life of this container (pid 1 again) or of this process; nobody else holds it.
  if (lock.pid === process.pid) return false;
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Takes the PGlite lock of `config.DATA_DIR` for `command` (nothing to do with `DATABASE_URL`). Returns the
 * release function (also run when the process exits). Throws a {@link CliError} (exit code 1) naming the holder
 * when another live process holds it.
 */
export const lockDataDir = (
  config: { DATABASE_URL?: string | undefined; DATA_DIR: string },
  command: string,
): (() => void) => {
  if (!usesEmbeddedDatabase(config)) return () => {};
  const dataDir = path.resolve(config.DATA_DIR);
  const file = path.join(dataDir, LOCK_FILE);
  fs.mkdirSync(dataDir, { recursive: true });
  const mine: DataDirLockInfo = {
    pid: process.pid,
    command,
    started_at: new Date().toISOString(),
    hostname: os.hostname(),
  };
  // Written beside it, then hard-linked into place: the link fails if the lock exists, and a lock file is never
  // seen half-written.
  const draft = `${file}.${process.pid}`;
  fs.writeFileSync(draft, `${JSON.stringify(mine)}\n`);
  for (let attempt = 0; ; attempt++) {
    try {
      fs.linkSync(draft, file);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) {
        fs.rmSync(draft, { force: true });
        throw error;
      }
    }
    const holder = readLock(file);
    if (isHeld(holder)) {
      fs.rmSync(draft, { force: true });
      throw new CliError(
        `DATA_DIR ${dataDir} is in use by another process (pid ${holder.pid}: ${holder.command}, since ${holder.started_at}). ` +
          'The embedded PGlite database serves one process at a time: stop that process first, or run the venue on ' +
          `PostgreSQL (DATABASE_URL) to use the CLI beside it. If no such process runs, delete ${file}.`,
      );
    }
    // Stale: its process is gone. Remove it unless someone replaced it meanwhile, then try again.
    const again = readLock(file);
    if (JSON.stringify(again) === JSON.stringify(holder)) fs.rmSync(file, { force: true });
  }
  fs.rmSync(draft, { force: true });
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    if (readLock(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  };
  process.on('exit', release);
  return release;
};
