/**
 * Child process for the crash test: opens the configured store (PGlite in DATA_DIR, or DATABASE_URL) and
 * appends one event at a time from 8 concurrent writers, printing `ack <event_id>` once each append has
 * returned. The parent kills it with SIGKILL mid-flight.
 */
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrate';
import { createPostgresEventStore } from '../../src/eventstore/postgres';

const db = await openDatabase({ DATABASE_URL: process.env.DATABASE_URL, DATA_DIR: process.env.DATA_DIR! });
await migrateToLatest(db.db);
const store = createPostgresEventStore(db);
process.stdout.write('ready\n');
await Promise.all(
  Array.from({ length: 8 }, async (_, w) => {
    for (let i = 0; ; i++) {
      const id = randomUUID();
      await store.append(`crash-${w}`, [{ type: 'Appended', data: { w, i }, eventId: id }]);
      process.stdout.write(`ack ${id}\n`);
    }
  }),
);
