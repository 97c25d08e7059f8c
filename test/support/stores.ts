import { afterAll, beforeAll } from 'vitest';
import type { EventStore } from '../../ports/event-store';
import type { SnapshotStore } from '../../ports/snapshot-store';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { createSqlSnapshotStore } from '../../src/eventstore/snapshots';
import {
  createPGliteTestDatabase,
  createPostgresTestDatabase,
  postgresUnavailableReason,
  type TestDatabase,
} from './databases';

/**
 * The databases a store test runs on, as `describe.each` rows `[name, open, skip]`: PGlite always, and the
 * PostgreSQL server, whose `skip` is why not when none answers (`null` when it does).
 */
export const eachTestDatabase = async () =>
  [
    ['PGlite', createPGliteTestDatabase, null],
    ['PostgreSQL', createPostgresTestDatabase, await postgresUnavailableReason()],
  ] as const;

/** A test database with the real event store and snapshot store on it. */
export interface TestStores {
  db: TestDatabase;
  store: EventStore;
  snapshots: SnapshotStore;
}

/**
 * Opens a database with `open` in a `beforeAll` (none when `skip` is set), hands it and its stores to `opened`
 * (the suite keeps them in its own variables), and closes them in an `afterAll`. `timeout`: the opening hook's, in ms.
 */
export const useTestStores = (
  open: () => Promise<TestDatabase>,
  skip: string | null,
  opened: (stores: TestStores) => void,
  timeout?: number,
): void => {
  let stores: TestStores | undefined;
  beforeAll(async () => {
    if (skip) return;
    const db = await open();
    stores = { db, store: createPostgresEventStore(db), snapshots: createSqlSnapshotStore(db.all) };
    opened(stores);
  }, timeout);
  afterAll(async () => {
    await stores?.store.close();
    await stores?.db.close();
  });
};
