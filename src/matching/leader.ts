import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { DatabaseHandle } from '../db/database';

/** Whether this process may run a singleton task (the matching engine). */
export interface Leadership {
  isLeader(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The advisory lock key of the matching engine (any 64-bit constant shared by all processes). */
export const MATCHING_LOCK_KEY = 7_208_114_305_551_001n;

/**
 * Leader election with a PostgreSQL session advisory lock (issue item 3: one leader when several processes
 * run): the process that holds `pg_try_advisory_lock(key)` on a connection it keeps open is the leader; the
 * others retry every `retryMs`. Losing the connection loses the lock (PostgreSQL releases it), and the leader
 * notices at its next health probe and steps down. PGlite is in-process and cannot be shared: always leader.
 */
export const createLeadership = (
  database: DatabaseHandle,
  options: { key?: bigint; retryMs?: number; probeMs?: number; logger?: Logger } = {},
): Leadership => {
  if (database.kind === 'pglite') {
    return { isLeader: () => true, start: async () => {}, stop: async () => {} };
  }
  const key = options.key ?? MATCHING_LOCK_KEY;
  const retryMs = options.retryMs ?? 2_000;
  const probeMs = options.probeMs ?? 5_000;
  let leader = false;
  let stopping = false;
  let wake: (() => void) | undefined;
  let loop: Promise<void> | undefined;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  let decided: (() => void) | undefined;
  const attempt = async () => {
    await database.db.connection().execute(async (conn) => {
      const { rows } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${key}) as ok`.execute(conn);
      if (!rows[0]?.ok) return;
      leader = true;
      decided?.();
      options.logger?.info({ key: String(key) }, 'matching engine: leader');
      try {
        while (!stopping) {
          await sleep(probeMs);
          if (stopping) break;
          await sql`select 1`.execute(conn);
        }
      } finally {
        leader = false;
        await sql`select pg_advisory_unlock(${key})`.execute(conn).catch(() => {});
      }
    });
  };

  return {
    isLeader: () => leader,
    /** Resolves once the first attempt has won or lost the lock. */
    async start() {
      const first = new Promise<void>((resolve) => {
        decided = resolve;
      });
      loop = (async () => {
        while (!stopping) {
          try {
            await attempt();
          } catch (error) {
            leader = false;
            options.logger?.warn({ err: error }, 'matching engine: leadership lost');
          }
          decided?.();
          if (!stopping) await sleep(retryMs);
        }
      })();
      await first;
    },
    async stop() {
      stopping = true;
      wake?.();
      await loop;
    },
  };
};
