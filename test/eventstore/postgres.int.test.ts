import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import {
  comparePositions,
  formatPosition,
  isAfter,
  type RecordedEvent,
  START,
  WrongExpectedRevisionError,
} from '../../ports/event-store';
import { openPostgres } from '../../src/db/database';
import { verifyChain } from '../../src/eventstore/hash-chain';
import {
  createPostgresEventStore,
  EVENTS_CHANNEL,
  type PostgresEventStore,
} from '../../src/eventstore/postgres';
import {
  createPGliteTestDatabase,
  createPostgresTestDatabase,
  postgresUnavailableReason,
  type TestDatabase,
} from '../support/databases';
import { until } from '../support/until';
import { type ContractSubject, eventStoreContract } from './contract';

const subjectOn = (db: TestDatabase): ContractSubject => {
  const store = createPostgresEventStore(db);
  return {
    store,
    appendBatches: () => store.appendBatchStats()?.batches ?? 0,
    keepsSubmissionOrder: true,
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

/** Batcher behaviour specific to this adapter, on PGlite and (when reachable) on the server. */
const batcherTests = (name: string, open: () => Promise<TestDatabase>) => {
  describe(`PostgreSQL adapter append batcher: ${name}`, () => {
    it('hands subscriptions an elided field without its value, marked; readAll and readStream give it', async () => {
      const db = await open();
      const store = createPostgresEventStore(db, {
        elide: [{ type: 'Big', key: 'text', onlyWith: 'peak' }],
      });
      try {
        const stream = `elide-${randomUUID()}`;
        const from = await store.headPosition();
        const given = [
          { type: 'Big', data: { text: 'a,b*2', peak: '1', n: 1 } },
          { type: 'Big', data: { text: 'c', n: 2 } },
          { type: 'Small', data: { text: 'd', peak: '1' } },
        ];
        await store.append(stream, given, { expectedRevision: 'no_stream' });
        const sub = store.subscribeToAll({ after: from });
        const seen: RecordedEvent[] = [];
        for await (const batch of sub) {
          seen.push(...batch.filter((e) => e.streamId === stream));
          if (seen.length >= 3) break;
        }
        await sub.close();
        expect(seen.map((e) => [e.data, e.elided])).toEqual([
          [{ peak: '1', n: 1 }, ['text']],
          [{ text: 'c', n: 2 }, undefined],
          [{ text: 'd', peak: '1' }, undefined],
        ]);
        const page = await store.readAll({ after: from });
        const read = page.events.filter((e) => e.streamId === stream);
        expect(read.map((e) => [e.data, e.elided])).toEqual(given.map((g) => [g.data, undefined]));
        expect((await store.readStream(stream)).map((e) => e.data)).toEqual(given.map((g) => g.data));
      } finally {
        await store.close();
        await db.close();
      }
    });

    it('resends a batch the database rejects append by append, so only the bad append fails', async () => {
      const db = await open();
      const store = createPostgresEventStore(db);
      try {
        const streams = Array.from({ length: 10 }, (_, i) => `isolate-${i}-${randomUUID()}`);
        // jsonb refuses \u0000: the whole batch statement fails, not just one append.
        const settled = await Promise.allSettled(
          streams.map((s, i) =>
            store.append(s, [{ type: 'T', data: { text: i === 4 ? 'a\u0000b' : 'ok' } }], {
              expectedRevision: 'no_stream',
            }),
          ),
        );
        expect(settled.map((r) => r.status)).toEqual(
          streams.map((_, i) => (i === 4 ? 'rejected' : 'fulfilled')),
        );
        const error = (settled[4] as PromiseRejectedResult).reason as { code?: string };
        expect(error).not.toBeInstanceOf(WrongExpectedRevisionError);
        expect(error.code).toBe('22P05');
        expect(store.appendBatchStats()).toMatchObject({ isolated: 1 });
        for (const [i, s] of streams.entries()) {
          expect(await store.streamRevision(s)).toBe(i === 4 ? -1 : 0);
        }
      } finally {
        await store.close();
        await db.close();
      }
    });

    it('appends one at a time with batching off, with the same results', async () => {
      const db = await open();
      const store = createPostgresEventStore(db, { batching: false });
      try {
        const stream = `unbatched-${randomUUID()}`;
        const settled = await Promise.allSettled(
          Array.from({ length: 8 }, (_, i) =>
            store.append(stream, [{ type: 'T', data: { i } }], { expectedRevision: 'no_stream' }),
          ),
        );
        expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(store.appendBatchStats()).toBeUndefined();
        await store.append(stream, [{ type: 'U', data: {} }], { expectedRevision: 0 });
        expect(verifyChain(await store.readStream(stream))).toBeNull();
      } finally {
        await store.close();
        await db.close();
      }
    });
  });
};

batcherTests('PGlite', createPGliteTestDatabase);

const pgReason = await postgresUnavailableReason();
if (pgReason) {
  console.log(`[contract] PostgreSQL server run skipped: ${pgReason}`);
  describe.skip('event store contract: PostgreSQL server', () => {
    it('needs a reachable PostgreSQL server', () => {});
  });
} else {
  eventStoreContract('PostgreSQL server', async () => subjectOn(await createPostgresTestDatabase()));
  batcherTests('PostgreSQL server', () => createPostgresTestDatabase());

  describe('PostgreSQL batches from several processes', () => {
    it('lets one first append win per new stream across pools, without aborting a batch or deadlocking', async () => {
      const db = await createPostgresTestDatabase();
      const pools = Array.from({ length: 4 }, () => openPostgres(db.url!, { max: 4 }));
      const stores = pools.map((p) => createPostgresEventStore(p));
      try {
        for (let round = 0; round < 5; round++) {
          const contested = Array.from({ length: 8 }, (_, i) => `race-${round}-${i}-${randomUUID()}`);
          const open = Array.from({ length: 8 }, (_, i) => `open-${round}-${i}-${randomUUID()}`);
          const settled = await Promise.all(
            stores.map((store, p) => {
              // Each pool touches the streams in its own order, so the batches' stream sets cross.
              const order = p % 2 ? [...contested.keys()].reverse() : [...contested.keys()];
              return Promise.allSettled(
                order.flatMap((i) => [
                  store.append(contested[i]!, [{ type: 'Claimed', data: { p } }], {
                    expectedRevision: 'no_stream',
                  }),
                  store.append(open[i]!, [{ type: 'Joined', data: { p } }], { expectedRevision: 'any' }),
                  store.append(`own-${p}-${randomUUID()}`, [{ type: 'Own', data: { p } }], {
                    expectedRevision: 'no_stream',
                  }),
                ]),
              );
            }),
          );
          for (const results of settled) {
            for (const [k, r] of results.entries()) {
              if (k % 3 === 0) {
                if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(WrongExpectedRevisionError);
              } else {
                expect(r.status).toBe('fulfilled');
              }
            }
          }
          const reader = stores[0]!;
          for (const s of contested) {
            const events = await reader.readStream(s);
            expect(events).toHaveLength(1);
            expect(verifyChain(events)).toBeNull();
          }
          const winners = settled.flatMap((results) =>
            results.filter((r, k) => k % 3 === 0 && r.status === 'fulfilled'),
          );
          expect(winners).toHaveLength(contested.length);
          for (const s of open) {
            const events = await reader.readStream(s);
            expect(events.map((e) => e.revision)).toEqual([0, 1, 2, 3]);
            expect(verifyChain(events)).toBeNull();
          }
        }
        // No batch failed as a whole (a unique violation on a new stream's head would have, and would have
        // been resent append by append), and no placeholder head was left behind.
        for (const store of stores) expect(store.appendBatchStats()?.isolated).toBe(0);
        const { rows } = await sql<{ n: string }>`
          select count(*)::text as n from streams where revision < 0`.execute(db.db);
        expect(rows[0]!.n).toBe('0');
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await Promise.all(pools.map((p) => p.close()));
        await db.close();
      }
    });

    it('keeps append_events (one stream, raises EV409) as a wrapper with the same chain', async () => {
      const db = await createPostgresTestDatabase();
      const store = createPostgresEventStore(db);
      try {
        const stream = `wrapper-${randomUUID()}`;
        await store.append(stream, [{ type: 'A', data: { x: 1 } }]);
        const { rows } = await sql<{ o_revision: string }>`
          select o_revision::text as o_revision from append_events(${stream}, 0, array[gen_random_uuid()],
            array['B'], array['{"y":2}'], array['{"occurred_at":"2026-01-01T00:00:00.000Z"}'])`.execute(
          db.db,
        );
        expect(rows.map((r) => r.o_revision)).toEqual(['1']);
        const conflict = await sql`
          select * from append_events(${stream}, 0, array[gen_random_uuid()], array['C'], array['{}'],
            array['{"occurred_at":"2026-01-01T00:00:00.000Z"}'])`
          .execute(db.db)
          .catch((e) => e);
        expect(conflict).toMatchObject({ code: 'EV409', detail: '1' });
        const events = await store.readStream(stream);
        expect(events.map((e) => e.type)).toEqual(['A', 'B']);
        expect(verifyChain(events)).toBeNull();
      } finally {
        await store.close();
        await db.close();
      }
    });
  });

  /**
   * Runs `body` with two stores on one fresh database as two processes would have them: a writer on the test
   * database's pool and a reader on a pool of its own; closes both, their pools and the database after it.
   */
  const withTwoStores = async (
    body: (s: { db: TestDatabase; writer: PostgresEventStore; reader: PostgresEventStore }) => Promise<void>,
  ): Promise<void> => {
    const db = await createPostgresTestDatabase();
    const writer = createPostgresEventStore(db);
    const otherPool = openPostgres(db.url!);
    const reader = createPostgresEventStore(otherPool);
    try {
      await body({ db, writer, reader });
    } finally {
      await reader.close();
      await otherPool.close();
      await writer.close();
      await db.close();
    }
  };

  describe('PostgreSQL wake-ups across processes', () => {
    it('wakes a subscriber on another connection pool through NOTIFY, well before its idle poll', () =>
      withTwoStores(async ({ writer, reader }) => {
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
      }));
  });

  describe('PostgreSQL LISTEN connection lost', () => {
    it('tells the listener the moment its connection is lost, then re-subscribes and hears NOTIFYs again', async () => {
      const db = await createPostgresTestDatabase();
      const handle = openPostgres(db.url!);
      const name = `listen-test-${randomUUID()}`;
      const seen: string[] = [];
      const heard: string[] = [];
      try {
        const unlisten = await handle.listen('listen_test', (p) => heard.push(p), {
          applicationName: name,
          onLost: () => seen.push('lost'),
          onResubscribed: () => seen.push('resubscribed'),
        });
        await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${name}`.execute(
          db.db,
        );
        await until(() => seen.includes('resubscribed'), { timeoutMs: 5_000, what: 're-subscription' });
        // Lost first (so a caller polls while the connection is re-opened), once per loss.
        expect(seen).toEqual(['lost', 'resubscribed']);
        await sql`select pg_notify('listen_test', 'after')`.execute(db.db);
        await until(() => heard.includes('after'), {
          timeoutMs: 2_000,
          what: 'NOTIFY after re-subscription',
        });
        await unlisten();
        // Ending it on purpose is not a loss.
        expect(seen).toEqual(['lost', 'resubscribed']);
      } finally {
        await handle.close();
        await db.close();
      }
    });
  });

  describe('PostgreSQL heardHead: the position another store announced, in full', () => {
    it('hears commit/prepare of another store, not its own appends; a bare prepare (an older version) reads the head', () =>
      withTwoStores(async ({ db, writer, reader }) => {
        const sub = reader.subscribeToAll({ after: await reader.headPosition() });
        const iterator = sub[Symbol.asyncIterator]();
        try {
          await new Promise((resolve) => setTimeout(resolve, 300));
          const appended = await writer.append('heard-1', [{ type: 'Ping', data: {} }]);
          await iterator.next();
          // The announcement carries the transaction id: heardHead is the append's position exactly.
          await until(() => comparePositions(reader.heardHead!(), appended.position) === 0, {
            timeoutMs: 5_000,
            what: 'the reader heard the append in full',
          });
          // The reader's own append is no announcement of another's.
          const own = await reader.append('heard-own', [{ type: 'Own', data: {} }]);
          await iterator.next();
          expect(reader.heardHead!()).toEqual(appended.position);
          expect(isAfter(own.position, reader.heardHead!())).toBe(true);
          // A payload that is no position is ignored.
          await sql`select pg_notify(${EVENTS_CHANNEL}, 'not a position')`.execute(db.db);
          await new Promise((resolve) => setTimeout(resolve, 200));
          expect(reader.heardHead!()).toEqual(appended.position);
          // An older process's payload, a bare global position, names no transaction: the log's head stands in for
          // it (here the reader's own append, the newest event), never the bare number itself.
          await sql`select pg_notify(${EVENTS_CHANNEL}, ${(own.position.prepare + 1_000n).toString()})`.execute(
            db.db,
          );
          await until(() => comparePositions(reader.heardHead!(), own.position) === 0, {
            timeoutMs: 5_000,
            what: 'the head read for a bare position',
          });
        } finally {
          await sub.close();
        }
      }));
  });

  describe('PostgreSQL wake-ups only while another store listens', () => {
    it('sends no NOTIFY per batch to a lone store, and every batch once another store listens', () =>
      withTwoStores(async ({ db, writer, reader }) => {
        // A plain LISTEN connection (not a store's: it does not count as a listener) hears what is sent.
        const ear = new pg.Client({ connectionString: db.url! });
        await ear.connect();
        // Each payload is the batch's last position in full, `<commit>/<prepare>`.
        const heard: string[] = [];
        ear.on('notification', (m) => heard.push(m.payload ?? ''));
        await ear.query(`listen ${EVENTS_CHANNEL}`);
        try {
          // The writer's own subscription (its own LISTEN connection) is not another listener.
          const own = writer.subscribeToAll({ after: await writer.headPosition() });
          const ownIterator = own[Symbol.asyncIterator]();
          await new Promise((resolve) => setTimeout(resolve, 100));
          const started = performance.now();
          for (let i = 0; i < 30; i++) {
            await writer.append('lone-1', [{ type: 'Lone', data: { i } }]);
            expect((await ownIterator.next()).value[0].data).toEqual({ i });
          }
          const elapsed = performance.now() - started;
          await new Promise((resolve) => setTimeout(resolve, 100));
          // One NOTIFY at most per look at the listeners (every 250 ms), not one per batch.
          expect(heard.length).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
          expect(heard.length).toBeLessThan(30);
          // Another store subscribes: it sees the next appends at once, and once the writer has looked again every
          // batch is announced.
          const sub = reader.subscribeToAll({ after: await reader.headPosition() });
          const iterator = sub[Symbol.asyncIterator]();
          const latencies: number[] = [];
          for (let i = 0; i < 8; i++) {
            const t0 = performance.now();
            const pending = iterator.next();
            const appended = await writer.append('shared-1', [{ type: 'Ping', data: { i } }]);
            const { value } = await pending;
            latencies.push(performance.now() - t0);
            expect((value as RecordedEvent[])[0]?.data).toEqual({ i });
            if (i >= 6) {
              await until(() => heard.includes(formatPosition(appended.position)), {
                timeoutMs: 2_000,
                what: `NOTIFY of append ${i}`,
              });
            }
            await new Promise((resolve) => setTimeout(resolve, 150));
          }
          expect(Math.max(...latencies)).toBeLessThan(500);
          await sub.close();
          await own.close();
        } finally {
          await ear.end();
        }
      }));
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
        // The horizon is the whole server's: another test's open transaction, in any database of this server, can
        // hold both events back a moment longer (seen in a CI pass), so wait until they are visible.
        let after = await store.readAll({ after: START });
        await until(
          async () => {
            after = await store.readAll({ after: START });
            return after.events.length >= 2;
          },
          { what: 'both events visible after the commit' },
        );
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
