import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { openPGlite } from '../../src/db/database';
import { pgliteTemplate } from '../support/databases';

/**
 * `openPGlite(undefined, { loadDataDir })` starts from the dump it is given. It once passed the dump as PGlite's
 * second argument beside an undefined data directory, which PGlite ignores: every in-memory test database ran
 * initdb and all migrations (8–11 s each under load) instead of loading the migrated template (~2 s).
 */
describe('openPGlite', () => {
  it('starts an in-memory database from the data-directory dump it is given (the migrated test template)', async () => {
    const handle = await openPGlite(undefined, { loadDataDir: await pgliteTemplate() });
    try {
      // No migration has run on this handle: the migrations table can only come from the dump.
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(
        handle.db,
      );
      expect(rows[0]!.n).toBeGreaterThan(0);
      expect(handle.location).toBe('memory');
    } finally {
      await handle.close();
    }
  });
});
