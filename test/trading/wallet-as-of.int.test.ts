import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeState } from '../../domain/shared/state-codec';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import type { EventStore } from '../../ports/event-store';
import { walletAsOf } from '../../src/audit/wallet-as-of';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { createPGliteTestDatabase, type TestDatabase } from '../support/databases';
import { walletHistories } from './wallet-histories';

/**
 * Time travel of a wallet (`GET /account/portfolio?as_of=`, issue 20): `walletAsOf` reads the stream a page at a
 * time and stops at the first event later than the time, and gives exactly what folding the whole stream's prefix
 * gives (state, revision, each symbol's last fill) for random histories, business times that sometimes go back a
 * little (the prefix rule, not a time filter), random times and page sizes — while reading no more than the
 * events before the time and one page. On PGlite.
 */

let db: TestDatabase;
let store: EventStore;

beforeAll(async () => {
  db = await createPGliteTestDatabase();
  store = createPostgresEventStore(db);
}, 180_000);
afterAll(async () => {
  await store?.close();
  await db?.close();
});

const BASE = Date.parse('2024-01-05T10:00:00.000Z');

describe('walletAsOf', () => {
  it('equals the fold of the whole stream up to the first later event, reading only up to it', async () => {
    await fc.assert(
      fc.asyncProperty(
        walletHistories(60),
        fc.array(fc.integer({ min: -90, max: 600 }), { minLength: 1, maxLength: 20 }),
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
          const got = await walletAsOf(counting, ownerId, asOf, pageSize);
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
  }, 120_000);
});
