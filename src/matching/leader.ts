import type { Logger } from 'pino';
import { WakeableSleep } from '../core/wakeable-sleep';
import type { DatabaseHandle, DatabaseSession } from '../db/database';

/** Whether this process may run a singleton task (the matching engine, the snapshotters). */
export interface Leadership {
  /** The task's name (logs, `/metrics`). */
  readonly name: string;
  isLeader(): boolean;
  /** Hears every change of {@link isLeader}; returns the unsubscribe. */
  onChange(listener: (leader: boolean) => void): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A leadership that never changes: always the leader (PGlite, tests, benchmarks). */
export const soleLeadership = (name = 'matching_engine'): Leadership => ({
  name,
  isLeader: () => true,
  onChange: () => () => {},
  start: async () => {},
  stop: async () => {},
});

/** The advisory lock key of the matching engine (any 64-bit constant shared by all processes). */
export const MATCHING_LOCK_KEY = 7_208_114_305_551_001n;

/** Options of {@link createLeadership}. */
export interface LeadershipOptions {
  /** Name in logs and metrics (default `matching_engine`). */
  name?: string;
  key?: bigint;
  /** Pause between attempts while another process leads or the server is away (ms, default 2,000). */
  retryMs?: number;
  /** While leading, how often the connection is probed with `select 1` (ms, default 5,000). */
  probeMs?: number;
  logger?: Logger;
}

/**
 * Leader election with a PostgreSQL session advisory lock (one leader when several processes run): the process
 * holding `pg_try_advisory_lock(key)` on a connection of its own (`DatabaseHandle.session`, outside the pool)
 * leads; the others try again every `retryMs`. Losing that connection loses the lock (the server releases it):
 * the leader steps down the moment the connection reports the loss (or at its next probe, for a connection that
 * died silently), and tries again once the server answers, so the role is re-acquired by whichever process gets
 * there first (issue 16, item 1). Never throws from the background loop. PGlite is in-process and cannot be
 * shared: always leader.
 */
export const createLeadership = (database: DatabaseHandle, options: LeadershipOptions = {}): Leadership => {
  const name = options.name ?? 'matching_engine';
  const listeners = new Set<(leader: boolean) => void>();
  const onChange = (listener: (leader: boolean) => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  if (database.kind === 'pglite' || !database.session) return soleLeadership(name);
  const openSession = database.session.bind(database);
  const key = options.key ?? MATCHING_LOCK_KEY;
  const retryMs = options.retryMs ?? 2_000;
  const probeMs = options.probeMs ?? 5_000;
  const log = options.logger;
  let leader = false;
  let stopping = false;
  const alarm = new WakeableSleep();
  let loop: Promise<void> | undefined;
  const setLeader = (value: boolean) => {
    if (leader === value) return;
    leader = value;
    for (const l of listeners) {
      try {
        l(value);
      } catch (error) {
        log?.error({ err: error, leadership: name }, 'leadership listener failed');
      }
    }
  };
  const sleep = (ms: number) => alarm.sleep(ms);

  let decided: (() => void) | undefined;
  /** One attempt: take the lock and hold it until the connection is lost or `stop`. */
  const attempt = async () => {
    let session: DatabaseSession | undefined;
    try {
      session = await openSession();
      const [row] = await session.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [
        key.toString(),
      ]);
      if (!row?.ok) return;
      setLeader(true);
      decided?.();
      log?.info({ leadership: name, key: String(key) }, `${name}: leader`);
      let lost = false;
      void session.lost.then(() => {
        lost = true;
        setLeader(false);
        alarm.wake();
      });
      while (!stopping && !lost) {
        await sleep(probeMs);
        if (stopping || lost) break;
        await session.query('select 1');
      }
      if (lost) log?.warn({ leadership: name }, `${name}: leadership lost with the database connection`);
    } finally {
      setLeader(false);
      // Ending the session releases the lock on the server (an explicit unlock would need a live connection).
      await session?.end();
    }
  };

  return {
    name,
    isLeader: () => leader,
    onChange,
    /** Resolves once the first attempt has won or lost the lock (or failed to reach the server). */
    async start() {
      stopping = false;
      const first = new Promise<void>((resolve) => {
        decided = resolve;
      });
      loop = (async () => {
        while (!stopping) {
          try {
            await attempt();
          } catch (error) {
            setLeader(false);
            log?.warn({ err: error, leadership: name }, `${name}: leadership attempt failed`);
          }
          decided?.();
          if (stopping) break;
          // After a lost connection, try as soon as the server answers again, so the role is not vacant for long.
          if (!database.availability.available) await database.availability.waitUntilAvailable(retryMs);
          else await sleep(retryMs);
        }
      })();
      await first;
    },
    async stop() {
      stopping = true;
      alarm.wake();
      await loop;
    },
  };
};
