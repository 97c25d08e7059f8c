import { describe, expect, it } from 'vitest';
import { postgresPassOnlyReason } from '../support/databases';
import {
  type ClusterDatabase,
  clusterSecrets,
  createClusterDatabase,
  spawnVenueProcess,
  type VenueProcess,
} from './support';

/**
 * Issue 16, item 3: processes started at the same moment on a fresh database all come up — an API process, a
 * `serve` that also folds the read models, and a worker — ten times in a row, each on a new database. Before,
 * half of them died on `duplicate key value violates unique constraint "pg_type_typname_nsp_index"` (two
 * migrators creating the same table) or on two runners creating the same projection generation.
 */
const reason = await postgresPassOnlyReason();
if (reason) console.warn(`multi-process start-up test skipped: ${reason}`);

// Three rounds in the suite (about 25 s each here); the ten by hand: STARTUP_ROUNDS=10 (docs/operations.md).
const ROUNDS = Number(process.env.STARTUP_ROUNDS ?? 3);

describe.skipIf(reason !== null)('processes started together on a fresh database', () => {
  it(`all come up, ${ROUNDS} times in a row`, async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const database: ClusterDatabase = await createClusterDatabase();
      const env = { ...clusterSecrets(), DATABASE_URL: database.url };
      const processes: VenueProcess[] = [];
      try {
        processes.push(
          ...(await Promise.all([
            spawnVenueProcess('serve', env),
            spawnVenueProcess('serve', { ...env, PROJECTIONS: 'true' }),
            spawnVenueProcess('worker', env),
          ])),
        );
        await Promise.all(processes.map((p) => p.ready(120_000)));
        for (const p of processes) expect(p.alive(), `round ${round}: ${p.role} is up`).toBe(true);
        // One schema, one live generation per projection: nothing was created twice.
        const migrations = await database.query<{ n: string }>(
          'select count(*)::text as n from kysely_migration',
        );
        expect(Number(migrations[0]!.n)).toBeGreaterThan(0);
        const live = await database.query<{ name: string; n: string }>(
          `select name, count(*)::text as n from projection_generations where status = 'live' group by name`,
        );
        expect(live.length).toBeGreaterThan(0);
        for (const row of live) expect(Number(row.n), `round ${round}: ${row.name}`).toBe(1);
        const all = await database.query<{ n: string }>(
          'select count(*)::text as n from projection_generations',
        );
        expect(Number(all[0]!.n), `round ${round}: generations created`).toBe(live.length);
      } catch (error) {
        for (const p of processes) console.error(`--- ${p.role} output ---\n${p.output().slice(-5_000)}`);
        throw error;
      } finally {
        await Promise.all(processes.map((p) => p.stop()));
        await database.drop();
      }
    }
  }, 900_000);
});
