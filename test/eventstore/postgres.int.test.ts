import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/database';
import { type RecordedEvent, START } from '../../src/eventstore/port';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import {
  createPGliteTestDatabase,
  createPostgresTestDatabase,
  postgresUnavailableReason,
  type TestDatabase,
} from '../support/databases';
import { type ContractSubject, eventStoreContract } from './contract';

const subjectOn = (db: TestDatabase): ContractSubject => {
  const store = createPostgresEventStore(db);
  return {
    store,
    tamper: async (streamId, revision) => {
      await sql`update events set data = jsonb_set(data, '{amount}', '"4000.00000000"')
                where stream_id = ${streamId} and revision = ${revision}`.execute(db.db);
    },
    close: async () => {
      await store.close();
      await db.close();
    },
  };
};

eventStoreContract('PGlite (embedded)', async () => subjectOn(await createPGliteTestDatabase()));

const pgReason = await postgresUnavailableReason();
if (pgReason) {
  console.log(`[contract] PostgreSQL server run skipped: ${pgReason}`);
  describe.skip('event store contract: PostgreSQL server', () => {
    it('needs a reachable PostgreSQL server', () => {});
  });
} else {
  eventStoreContract('PostgreSQL server', async () => subjectOn(await createPostgresTestDatabase()));

  describe('PostgreSQL wake-ups across processes', () => {
    it('wakes a subscriber on another connection pool through NOTIFY, well before its idle poll', async () => {
      const db = await createPostgresTestDatabase();
      const writer = createPostgresEventStore(db);
      const otherPool = openPostgres(db.url!);
      const reader = createPostgresEventStore(otherPool);
      try {
        const warm = await writer.append('warm-1', [{ type: 'Warm', data: {} }]);
        const sub = reader.subscribeToAll({ after: warm.position });
        const iterator = sub[Symbol.asyncIterator]();
        // Let the subscription go idle (its fallback poll is 1 s) before appending.
        await new Promise((resolve) => setTimeout(resolve, 300));
        const latencies: number[] = [];
        for (let i = 0; i < 5; i++) {
          const started = performance.now();
          const pending = iterator.next();
          await writer.append('notify-1', [{ type: 'Ping', data: { i } }]);
          const { value } = await pending;
          latencies.push(performance.now() - started);
          expect((value as RecordedEvent[])[0]?.type).toBe('Ping');
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
        await sub.close();
        expect(Math.max(...latencies)).toBeLessThan(500);
      } finally {
        await reader.close();
        await otherPool.close();
        await writer.close();
        await db.close();
      }
    });
  });

  describe('PostgreSQL $all reader and late commits', () => {
    it('never skips an event whose transaction commits after a later one (xid8 horizon)', async () => {
      const db = await createPostgresTestDatabase();
      const store = createPostgresEventStore(db);
      const slow = new pg.Client({ connectionString: db.url });
      await slow.connect();
      try {
        // T1 takes its transaction id first and appends, but commits last.
        await slow.query('begin');
        await slow.query('select pg_current_xact_id()');
        await slow.query(
          `select * from append_events('late-1', -2, array[gen_random_uuid()], array['Late'], array['{}'], array['{"occurred_at":"2026-01-01T00:00:00.000Z"}'])`,
        );
        await store.append('early-1', [{ type: 'Early', data: {} }]);
        const whileOpen = await store.readAll({ after: START });
        expect(whileOpen.events.map((e) => e.type)).toEqual([]);
        await slow.query('commit');
        const after = await store.readAll({ after: START });
        expect(after.events.map((e) => e.type)).toEqual(['Late', 'Early']);
        // A position-only reader would have checkpointed past 'Late': show the positions are out of order.
        const [late, early] = after.events as [RecordedEvent, RecordedEvent];
        expect(late.position.prepare < early.position.prepare).toBe(true);
      } finally {
        await slow.end();
        await store.close();
        await db.close();
      }
    });
  });
}
