import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { EventStore } from '../../ports/event-store';
import type { SnapshotStore } from '../../ports/snapshot-store';
import type { ProjectionRunner } from '../../projections/runner';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { createSqlSnapshotStore } from '../../src/eventstore/snapshots';
import {
  createPGliteTestDatabase,
  createPostgresTestDatabase,
  createTestDatabase,
  postgresUnavailableReason,
  type TestDatabase,
} from './databases';
import { lateBound } from './late-bound';

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

/**
 * Waits (30 s at most) until `runner` has folded `store`'s head position; a failed or stuck fold fails the test
 * with the runner's status (which names the projection and its error).
 */
export const foldedToHead = async (runner: ProjectionRunner, store: EventStore): Promise<void> => {
  if (await runner.waitFor(await store.headPosition(), 30_000)) return;
  throw new Error(`the projections did not fold: ${JSON.stringify(await runner.status())}`);
};

/** A test database and the real event store on it. */
export interface TestStore {
  db: TestDatabase;
  store: EventStore;
}

/**
 * A fresh {@link createTestDatabase} with the real event store on it for each test of the file: a `beforeEach`
 * opens them and hands them to `opened` (which makes what runs on them), an `afterEach` awaits `stopping` (what the
 * test started on them, stopped while its store is still open), then closes the store and the database. The answer
 * reads the current test's pair through {@link lateBound}: a read outside a test throws.
 */
export const useStorePerTest = (
  opened: (stores: TestStore) => void,
  stopping: () => Promise<void>,
): TestStore => {
  let stores: TestStore | undefined;
  beforeEach(async () => {
    const db = await createTestDatabase();
    stores = { db, store: createPostgresEventStore(db) };
    opened(stores);
  });
  afterEach(async () => {
    await stopping();
    await stores?.store.close();
    await stores?.db.close();
    stores = undefined;
  });
  return lateBound('the test database and its event store', () => stores);
};
