import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createCommandHandler } from '../../commands/handler';
import { type HistoryOffer, Snapshotter } from '../../commands/snapshots';
import { type WalletTimeTravel, walletSnapshotFormat } from '../../commands/wallet-time-travel';
import { encodeState } from '../../domain/shared/state-codec';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import { walletSnapshotCodec } from '../../domain/wallet/snapshot';
import type { WalletState } from '../../domain/wallet/state';
import type { EventStore } from '../../ports/event-store';
import type { SnapshotStore } from '../../ports/snapshot-store';
import { verifyWalletSnapshots, verifyWalletSnapshotsOf } from '../../src/audit/snapshot-audit';
import { type WalletAsOf, walletAsOf } from '../../src/audit/wallet-as-of';
import type { TestDatabase } from '../support/databases';
import { replayingWalletDecider } from '../support/replaying-decider';
import { eachTestDatabase, useTestStores } from '../support/stores';
import { walletHistories } from './wallet-histories';

/**
 * Time travel of a wallet (`GET /account/portfolio?as_of=`, issue 20), on PGlite and on the PostgreSQL server:
 * `walletAsOf` reads the stream a page at a time and stops at the first event later than the time, and gives exactly
 * what folding the whole stream's prefix gives (state, revision, each symbol's last fill) for random histories,
 * business times that sometimes go back a little (the prefix rule, not a time filter), random times and page sizes
 * — while reading no more than the events before the time and one page. With the wallet's snapshots (written by
 * the command handler every few events, so a history has several in turn), it starts from the snapshot when that
 * lies entirely at or before the time, gives the same answer as the fold from event 0, and reads only the events
 * after the snapshot; a snapshot without the time-travel annex (written before it) or of another history is not
 * used. With the sparse history of older snapshots (one per few events here), a time in the middle starts from
 * the newest historical one entirely before it, with the same answer; audits check the historical ones too, and
 * one of another history or schema is not used.
 */

/** An answer of `walletAsOf` in comparable form (exact state text, revision, marks as decimal strings). */
const plain = (a: WalletAsOf) => ({
  revision: a.revision,
  state: encodeState(a.state),
  marks: [...a.marks].map(([s, m]) => [s, m.price.toFixed(8), m.source]),
});

/** A store that counts the events it reads. */
const countingStore = (store: EventStore) => {
  const counter = { read: 0, store };
  counter.store = {
    ...store,
    readStream: async (id, options) => {
      const page = await store.readStream(id, options);
      counter.read += page.length;
      return page;
    },
  };
  return counter;
};

describe.each(await eachTestDatabase())('walletAsOf on %s', (_name, open, skip) => {
  let db: TestDatabase;
  let store: EventStore;
  let snapshots: SnapshotStore;

  useTestStores(open, skip, (opened) => ({ db, store, snapshots } = opened), 180_000);

  const BASE = Date.parse('2024-01-05T10:00:00.000Z');
  /** Steps of business time in seconds: mostly forward by seconds to minutes, sometimes back a little. */
  const timeSteps = fc.array(fc.integer({ min: -90, max: 600 }), { minLength: 1, maxLength: 20 });

  it.skipIf(skip)(
    'equals the fold of the whole stream up to the first later event, reading only up to it',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          walletHistories(60),
          timeSteps,
          fc.integer({ min: 1, max: 40 }),
          fc.double({ min: -0.1, max: 1.1, noNaN: true }),
          async ({ events }, steps, pageSize, where) => {
            const ownerId = randomUUID();
            const streamId = walletStreamId(ownerId);
            // Business times mostly forward by seconds to minutes, sometimes back a little.
            let t = BASE;
            const times = events.map((_, i) => {
              t += steps[i % steps.length]! * 1000;
              return t;
            });
            for (const [i, event] of events.entries())
              await store.append(streamId, [
                { ...event, metadata: { occurred_at: new Date(times[i]!).toISOString() } },
              ]);
            const asOf = new Date(Math.round(BASE + where * (t - BASE)));

            // The reference: the whole stream read, folded up to its first event later than asOf.
            const all = await store.readStream(streamId);
            let state = walletDecider.initialState();
            let revision = -1;
            const marks = new Map<string, string>();
            for (const e of all) {
              if (Date.parse(e.metadata.occurred_at) > asOf.getTime()) break;
              const event = { type: e.type, data: e.data } as WalletEvent;
              state = walletDecider.evolve(state, event);
              revision = e.revision;
              if (event.type === 'OrderFilled') marks.set(event.data.symbol, event.data.reference_price);
            }

            let read = 0;
            const counting: EventStore = {
              ...store,
              readStream: async (id, options) => {
                const page = await store.readStream(id, options);
                read += page.length;
                return page;
              },
            };
            const got = await walletAsOf(counting, ownerId, asOf, { pageSize });
            expect(got.revision).toBe(revision);
            expect(encodeState(got.state)).toBe(encodeState(state));
            expect(new Map([...got.marks].map(([s, m]) => [s, m.price.toFixed(8)]))).toEqual(
              new Map([...marks].map(([s, p]) => [s, Number(p).toFixed(8)])),
            );
            // Flat in what follows the time: the events before it, plus at most one page.
            expect(read).toBeLessThanOrEqual(revision + 1 + pageSize);
          },
        ),
        { numRuns: 40 },
      );
    },
    120_000,
  );

  const ctx = () => ({ now: new Date(), newId: randomUUID });
  /** Checks where the snapshot was a valid start (so the property is seen to exercise it). */
  let startedFromSnapshot = 0;
  /** Checks where a historical snapshot (the newest one not being a valid start) was. */
  let startedFromHistory = 0;

  it.skipIf(skip)(
    'starts from the newest snapshot, or historical one, entirely before the time, with the answer of the fold from event 0',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          walletHistories(60),
          timeSteps,
          fc.integer({ min: 1, max: 8 }),
          fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
          fc.integer({ min: 1, max: 30 }),
          fc.array(fc.double({ min: -0.1, max: 1.1, noNaN: true }), { minLength: 1, maxLength: 4 }),
          fc.integer({ min: 1, max: 12 }),
          async ({ events }, steps, every, sizes, pageSize, wheres, historyEvery) => {
            const ownerId = randomUUID();
            const stream = walletStreamId(ownerId);
            const writer = new Snapshotter<WalletState, WalletTimeTravel>({
              store: snapshots,
              codec: walletSnapshotFormat,
              every,
              historyEvery,
              onError: (error) => {
                throw error;
              },
            });
            const handler = createCommandHandler(store, replayingWalletDecider, { snapshots: writer });
            let t = BASE;
            for (let i = 0, k = 0; i < events.length; k++) {
              // One business time per append, mostly forward by seconds to minutes, sometimes back a little.
              const chunk = events.slice(i, i + sizes[k % sizes.length]!);
              t += steps[k % steps.length]! * 1000;
              await handler.handle(stream, { events: chunk }, ctx, {
                metadata: { occurred_at: new Date(t).toISOString() },
              });
              i += chunk.length;
              await writer.idle();
              // After each append (which may have left a newer snapshot): random times over the history so far.
              const row = await snapshots.read(stream);
              const annex =
                row?.annex === undefined ? undefined : walletSnapshotFormat.annex!.decode(row.annex);
              // Also the time of the snapshot's own event (an earlier event may be later than it: business times
              // go back a little) and a time after the last event (where a snapshot, once taken, is the start).
              const ownTime = row
                ? [
                    Date.parse(
                      (await store.readStream(stream, { fromRevision: row.revision, maxCount: 1 }))[0]!
                        .metadata.occurred_at,
                    ),
                  ]
                : [];
              const times = [
                ...wheres.map((w) => Math.round(BASE + w * (t - BASE))),
                ...ownTime,
                t + 3_600_000,
              ];
              // The sparse history of older snapshots: at most one per bucket of `historyEvery` events (none in
              // the first), each of them the replay from event 0 at its revision.
              const history = await snapshots.history(stream);
              const buckets = history.map((h) => Math.floor((h.revision + 1) / historyEvery));
              expect(new Set(buckets).size).toBe(history.length);
              expect(buckets.every((b) => b >= 1)).toBe(true);
              const log = await store.readStream(stream);
              for (const verdict of verifyWalletSnapshotsOf([...(row ? [row] : []), ...history], log))
                expect(verdict).toEqual({ status: 'equal' });
              const historyTimes = history.map((h) => walletSnapshotFormat.annex!.decode(h.annex!).latestAt!);
              for (const at of [...times, ...historyTimes, ...historyTimes.map((h) => h - 1)]) {
                const asOf = new Date(at);
                const fromZero = await walletAsOf(store, ownerId, asOf, { pageSize });
                const counted = countingStore(store);
                const fromSnapshot = await walletAsOf(counted.store, ownerId, asOf, { pageSize, snapshots });
                expect(plain(fromSnapshot)).toEqual(plain(fromZero));
                // The expected start: the newest snapshot if entirely at or before the time, else the newest
                // historical one that is.
                const older = history.filter((_, j) => historyTimes[j]! <= at).at(-1);
                const start =
                  row && annex?.latestAt != null && annex.latestAt <= at ? row : older ? older : undefined;
                if (start) {
                  // Started from it: its own event, the events after it up to the time, at most one page more.
                  if (start === row) startedFromSnapshot++;
                  else startedFromHistory++;
                  expect(counted.read).toBeLessThanOrEqual(fromZero.revision - start.revision + 1 + pageSize);
                }
              }
            }
          },
        ),
        // 40 runs: fast-check's first runs are small histories, and in a fresh-clone CI run 20 once gave no time
        // whose start was a historical snapshot (the sanity check below).
        { numRuns: 40 },
      );
      expect(startedFromSnapshot).toBeGreaterThan(0);
      expect(startedFromHistory).toBeGreaterThan(0);
    },
    240_000,
  );

  it.skipIf(skip)(
    'does not use a snapshot without the annex or of another history; a cold load rewrites it with one',
    async () => {
      const { events } = fc.sample(
        walletHistories(40).filter((h) => h.events.length > 12),
        { numRuns: 1, seed: 11 },
      )[0]!;
      const ownerId = randomUUID();
      const stream = walletStreamId(ownerId);
      for (const [i, e] of events.entries())
        await store.append(stream, [
          { ...e, metadata: { occurred_at: new Date(BASE + i * 1000).toISOString() } },
        ]);
      const after = new Date(BASE + events.length * 1000);
      const reference = plain(await walletAsOf(store, ownerId, after));
      expect(reference.revision).toBe(events.length - 1);

      // A snapshot as written before the annex existed (the state alone), at the stream's last event.
      const old = new Snapshotter<WalletState>({ store: snapshots, codec: walletSnapshotCodec, every: 5 });
      await createCommandHandler(store, walletDecider, { snapshots: old }).load(stream);
      await old.idle();
      expect(await snapshots.read(stream)).toMatchObject({ revision: events.length - 1 });
      expect((await snapshots.read(stream))?.annex).toBeUndefined();
      const withoutAnnex = countingStore(store);
      expect(plain(await walletAsOf(withoutAnnex.store, ownerId, after, { snapshots }))).toEqual(reference);
      expect(withoutAnnex.read).toBe(events.length);

      // The wallet commands' snapshots ignore it for a cold load and rewrite it with the annex.
      const current = new Snapshotter<WalletState, WalletTimeTravel>({
        store: snapshots,
        codec: walletSnapshotFormat,
        every: 5,
      });
      await createCommandHandler(store, walletDecider, { snapshots: current }).load(stream);
      await current.idle();
      const rewritten = await snapshots.read(stream);
      expect(rewritten?.revision).toBe(events.length - 1);
      expect(walletSnapshotFormat.annex!.decode(rewritten!.annex!).latestAt).toBe(
        BASE + (events.length - 1) * 1000,
      );
      const fromSnapshot = countingStore(store);
      expect(plain(await walletAsOf(fromSnapshot.store, ownerId, after, { snapshots }))).toEqual(reference);
      expect(fromSnapshot.read).toBe(1);
      // Not for a time before its latest event: from event 0.
      const before = new Date(BASE + (events.length - 2) * 1000);
      const earlier = countingStore(store);
      expect(plain(await walletAsOf(earlier.store, ownerId, before, { snapshots }))).toEqual(
        plain(await walletAsOf(store, ownerId, before)),
      );
      expect(earlier.read).toBe(events.length);

      // Taken after another history (its event's hash is not the log's): checked, then from event 0.
      await sql`update snapshots set event_hash = 'f00' where stream_id = ${stream}`.execute(db.all);
      const otherHistory = countingStore(store);
      expect(plain(await walletAsOf(otherHistory.store, ownerId, after, { snapshots }))).toEqual(reference);
      expect(otherHistory.read).toBe(1 + events.length);
    },
  );

  /**
   * The longest of a few random histories (seeded; about 20 events), appended one event per command a second
   * apart by the command handler with a snapshot after each event and a history every `historyEvery` (0: none).
   */
  const longestWallet = async (seed: number, historyEvery: number) => {
    const { events } = fc
      .sample(walletHistories(60), { numRuns: 200, seed })
      .reduce((x, y) => (y.events.length > x.events.length ? y : x));
    const ownerId = randomUUID();
    const stream = walletStreamId(ownerId);
    const writer = new Snapshotter<WalletState, WalletTimeTravel>({
      store: snapshots,
      codec: walletSnapshotFormat,
      every: 1,
      historyEvery,
    });
    const handler = createCommandHandler(store, replayingWalletDecider, { snapshots: writer });
    for (const [i, e] of events.entries()) {
      await handler.handle(stream, { events: [e] }, ctx, {
        metadata: { occurred_at: new Date(BASE + i * 1000).toISOString() },
      });
      await writer.idle();
    }
    return { events, ownerId, stream };
  };

  it.skipIf(skip)(
    'a history written only going forward is filled in by the first fold that passes it; the next time starts near it',
    async () => {
      // Snapshots without a history (as written before migration 0010, or of a state version bumped since).
      const { events, ownerId, stream } = await longestWallet(9, 0);
      expect(events.length).toBeGreaterThan(15);
      expect(await snapshots.history(stream)).toEqual([]);

      const spacing = 3;
      const late = new Date(BASE + (events.length - 3) * 1000);
      const reference = plain(await walletAsOf(store, ownerId, late));
      expect(reference.revision).toBe(events.length - 3);
      let offered: HistoryOffer[] = [];
      const history = { spacing, offer: (offers: HistoryOffer[]) => (offered = offers) };
      // The newest snapshot is past the time and there is no history: from event 0, offering each bucket passed.
      const first = countingStore(store);
      expect(plain(await walletAsOf(first.store, ownerId, late, { snapshots, history }))).toEqual(reference);
      expect(first.read).toBeGreaterThan(reference.revision);
      const boundaries = Array.from(
        { length: Math.floor((reference.revision + 1) / spacing) },
        (_, k) => spacing * (k + 1) - 1,
      );
      expect(offered.map((o) => o.snapshot.revision)).toEqual(boundaries);
      expect(offered.map((o) => o.history.bucket)).toEqual(boundaries.map((_, k) => k + 1));
      await snapshots.writeHistory(offered);
      const kept = await snapshots.history(stream);
      expect(kept.map((h) => h.revision)).toEqual(boundaries);
      // Each is the replay from event 0 at its revision (what audits check).
      const log = await store.readStream(stream);
      for (const verdict of verifyWalletSnapshotsOf(kept, log)) expect(verdict).toEqual({ status: 'equal' });
      // Written again (another process's fold): the kept ones stay.
      await snapshots.writeHistory(offered.map((o) => ({ ...o, snapshot: { ...o.snapshot, state: 'x' } })));
      expect(await snapshots.history(stream)).toEqual(kept);

      // The next time in that part of the history starts from the newest historical snapshot at or before it.
      const next = new Date(BASE + (events.length - 4) * 1000);
      const nextReference = plain(await walletAsOf(store, ownerId, next));
      const second = countingStore(store);
      offered = [];
      expect(
        plain(await walletAsOf(second.store, ownerId, next, { snapshots, history, pageSize: 2 })),
      ).toEqual(nextReference);
      const start = kept.filter((h) => h.revision <= nextReference.revision).at(-1)!;
      expect(second.read).toBeLessThanOrEqual(nextReference.revision - start.revision + 1 + 2);
      // It passed no bucket that is not kept already.
      expect(offered.every((o) => kept.some((h) => h.revision === o.snapshot.revision))).toBe(true);
    },
  );

  it.skipIf(skip)(
    'historical snapshots: a time in the middle starts from one; audits check them; a wrong one is reported and not used',
    async () => {
      const { events, ownerId, stream } = await longestWallet(5, 4);
      expect(events.length).toBeGreaterThan(12);
      const history = await snapshots.history(stream);
      // One per bucket of 4 events past the first: revisions 3, 7, 11, …
      expect(history.map((h) => h.revision)).toEqual(
        Array.from({ length: Math.floor(events.length / 4) }, (_, k) => 4 * (k + 1) - 1),
      );
      // A time in the middle, after the second historical snapshot: from it, the answer of the fold from event 0.
      const middle = new Date(BASE + (history[1]!.revision + 2) * 1000);
      const reference = plain(await walletAsOf(store, ownerId, middle));
      expect(reference.revision).toBe(history[1]!.revision + 2);
      const counted = countingStore(store);
      expect(plain(await walletAsOf(counted.store, ownerId, middle, { snapshots, pageSize: 2 }))).toEqual(
        reference,
      );
      // Its own event, the 2 after it, and at most one page more.
      expect(counted.read).toBeLessThanOrEqual(1 + 2 + 2);

      // Audits check them with the newest: all equal to the replay, and a tampered one is named.
      const log = await store.readStream(stream);
      const own = async () =>
        (await verifyWalletSnapshots(store, snapshots)).differing.filter((d) => d.streamId === stream);
      expect(await own()).toEqual([]);
      const tampered = history[1]!.state.replace('"closedTrades":', '"closedTrades":1');
      await sql`update snapshot_history set state = ${tampered}
        where stream_id = ${stream} and revision = ${history[1]!.revision}`.execute(db.all);
      expect(await own()).toEqual([
        {
          streamId: stream,
          text: `historical snapshot at revision ${history[1]!.revision}: differs from the state replayed from event 0 (fields closedTrades)`,
        },
      ]);
      expect(verifyWalletSnapshotsOf(await snapshots.history(stream), log)[1]).toMatchObject({
        status: 'differs',
      });
      await sql`update snapshot_history set state = ${history[1]!.state}
        where stream_id = ${stream} and revision = ${history[1]!.revision}`.execute(db.all);

      // Of another history (hash): not used; the fold starts from event 0 with the same answer.
      await sql`update snapshot_history set event_hash = 'f00'
        where stream_id = ${stream} and revision = ${history[1]!.revision}`.execute(db.all);
      const fromZero = countingStore(store);
      expect(plain(await walletAsOf(fromZero.store, ownerId, middle, { snapshots }))).toEqual(reference);
      expect(fromZero.read).toBeGreaterThan(reference.revision + 1);
      // Of another schema: ignored (the older historical snapshot of the current one is used instead).
      await sql`update snapshot_history set event_hash = ${history[1]!.eventHash}, schema = 'wallet@0'
        where stream_id = ${stream} and revision = ${history[1]!.revision}`.execute(db.all);
      const older = countingStore(store);
      expect(plain(await walletAsOf(older.store, ownerId, middle, { snapshots, pageSize: 2 }))).toEqual(
        reference,
      );
      expect(older.read).toBeLessThanOrEqual(reference.revision - history[0]!.revision + 1 + 2);
      expect(older.read).toBeGreaterThan(5);

      // Deleting the stream deletes its snapshots, historical ones too.
      await store.deleteStream(stream);
      expect(await snapshots.read(stream)).toBeUndefined();
      expect(await snapshots.history(stream)).toEqual([]);
    },
  );
});
