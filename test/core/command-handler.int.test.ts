import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCommandHandler } from '../../commands/handler';
import { DomainError } from '../../domain/shared/errors';
import type { EventStore } from '../../ports/event-store';
import { WrongExpectedRevisionError } from '../../ports/event-store';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { cashDecider } from '../support/counter-decider';
import { createTestDatabase, type TestDatabase } from '../support/databases';

let db: TestDatabase;
let store: EventStore;
beforeAll(async () => {
  db = await createTestDatabase();
  store = createPostgresEventStore(db);
});
afterAll(async () => {
  await store.close();
  await db.close();
});

const context = () => ({ now: new Date(), newId: randomUUID });

describe('command handler', () => {
  it('loads, decides, appends with the expected revision and stamps metadata', async () => {
    const handler = createCommandHandler(store, cashDecider);
    const stream = `cash-${randomUUID()}`;
    const first = await handler.handle(stream, { type: 'Fund', amount: 10 }, context, {
      metadata: { actor: 'tester', correlation_id: 'req-9' },
    });
    expect(first.revision).toBe(0);
    expect(first.state.balance).toBe(10);
    const second = await handler.handle(stream, { type: 'Spend', amount: 3 }, context);
    expect(second.revision).toBe(1);
    const events = await store.readStream(stream);
    expect(events.map((e) => e.type)).toEqual(['Funded', 'Spent']);
    expect(events[0]!.metadata).toMatchObject({ actor: 'tester', correlation_id: 'req-9' });
  });

  it('passes the decider error through and appends nothing', async () => {
    const handler = createCommandHandler(store, cashDecider);
    const stream = `cash-${randomUUID()}`;
    await handler.handle(stream, { type: 'Fund', amount: 1 }, context);
    await expect(handler.handle(stream, { type: 'Spend', amount: 5 }, context)).rejects.toBeInstanceOf(
      DomainError,
    );
    expect(await store.streamRevision(stream)).toBe(0);
  });

  it('never overspends under concurrent commands: conflicts are retried against fresh state', async () => {
    const stream = `cash-${randomUUID()}`;
    const setup = createCommandHandler(store, cashDecider);
    await setup.handle(stream, { type: 'Fund', amount: 10 }, context);
    // Two handlers (two processes' caches) and 30 concurrent spends of 1: exactly 10 succeed. A conflict means
    // another append landed, and only 10 spends can land, so 50 attempts always suffice however slow the
    // machine; with the default bound a busy CI host exhausted retries (WrongExpectedRevisionError).
    const handlers = [
      createCommandHandler(store, cashDecider, { maxAttempts: 50 }),
      createCommandHandler(store, cashDecider, { maxAttempts: 50 }),
    ];
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        handlers[i % 2]!.handle(stream, { type: 'Spend', amount: 1 }, context),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled').length;
    const refused = results.filter(
      (r) => r.status === 'rejected' && (r.reason as DomainError).code === 'INSUFFICIENT_BALANCE',
    ).length;
    expect(ok).toBe(10);
    expect(refused).toBe(20);
    const final = await createCommandHandler(store, cashDecider).load(stream);
    expect(final.state).toEqual({ balance: 0, spends: 10 });
  });

  it('decides on the cached state without a read; a stale cache ends in a conflict and a re-decision', async () => {
    const stream = `cash-${randomUUID()}`;
    const a = createCommandHandler(store, cashDecider);
    const b = createCommandHandler(store, cashDecider);
    await a.handle(stream, { type: 'Fund', amount: 5 }, context);
    await b.handle(stream, { type: 'Fund', amount: 7 }, context); // a's cache: balance 5 at revision 0
    // a spends on its cache (expected revision 0), conflicts with b's append, re-reads and spends on 12.
    const r = await a.handle(stream, { type: 'Spend', amount: 1 }, context);
    expect(r.revision).toBe(2);
    expect(r.state.balance).toBe(11);
    const events = await store.readStream(stream);
    expect(events.map((e) => [e.type, e.revision])).toEqual([
      ['Funded', 0],
      ['Funded', 1],
      ['Spent', 2],
    ]);
    // Without trusting the cache the same flow costs a read first and never conflicts.
    const c = createCommandHandler(store, cashDecider, { trustCache: false });
    expect((await c.handle(stream, { type: 'Spend', amount: 1 }, context)).state.balance).toBe(10);
  });

  it('folds a cold load a page at a time: never more than one page of events read at once', async () => {
    const stream = `cash-${randomUUID()}`;
    const setup = createCommandHandler(store, cashDecider);
    for (let i = 1; i <= 11; i++) await setup.handle(stream, { type: 'Fund', amount: i }, context);
    const whole = await createCommandHandler(store, cashDecider).load(stream);
    expect(whole).toMatchObject({ revision: 10, state: { balance: 66 } });
    for (const [loadPageSize, reads] of [
      [4, [4, 4, 3]],
      [11, [11, 0]],
      [1, [...Array(11).fill(1), 0]],
    ] as const) {
      const pages: number[] = [];
      const counting: EventStore = {
        ...store,
        readStream: async (id, options) => {
          expect(options?.maxCount).toBe(loadPageSize);
          const page = await store.readStream(id, options);
          pages.push(page.length);
          return page;
        },
      };
      const loaded = await createCommandHandler(counting, cashDecider, { loadPageSize }).load(stream);
      expect(loaded).toEqual(whole);
      expect(pages).toEqual(reads);
    }
  });

  it('reads only the events after the cached revision, and heals a stale cache', async () => {
    const stream = `cash-${randomUUID()}`;
    const a = createCommandHandler(store, cashDecider);
    const b = createCommandHandler(store, cashDecider);
    await a.handle(stream, { type: 'Fund', amount: 5 }, context);
    await b.handle(stream, { type: 'Fund', amount: 5 }, context); // a's cache is now one revision behind
    const r = await a.handle(stream, { type: 'Spend', amount: 10 }, context);
    expect(r.state.balance).toBe(0);
    expect(r.revision).toBe(2);
  });

  it('forgets a stream another process deleted: loads and refusals see it gone, not the cached state', async () => {
    const stream = `cash-${randomUUID()}`;
    const a = createCommandHandler(store, cashDecider);
    await a.handle(stream, { type: 'Fund', amount: 5 }, context); // a caches balance 5 at revision 0
    // Another process deletes the stream (its handler is not this one, so `forget` never reaches `a`).
    await store.deleteStream(stream);
    expect(await a.load(stream)).toMatchObject({ revision: -1, state: cashDecider.initialState() });
    // A refusal decided on the cache is re-checked on the stream, which no longer holds the 5.
    await a.handle(stream, { type: 'Fund', amount: 5 }, context);
    await store.deleteStream(stream);
    await expect(a.handle(stream, { type: 'Spend', amount: 9 }, context)).rejects.toMatchObject({
      code: 'INSUFFICIENT_BALANCE',
      details: { available: 0 },
    });
  });

  it('checks a cached stream in the same read as its new events: one readStream per warm load', async () => {
    const stream = `cash-${randomUUID()}`;
    const reads: (number | undefined)[] = [];
    const counting: EventStore = {
      ...store,
      readStream: (id, options) => {
        reads.push(options?.fromRevision);
        return store.readStream(id, options);
      },
    };
    const a = createCommandHandler(counting, cashDecider);
    await a.handle(stream, { type: 'Fund', amount: 5 }, context); // cached at revision 0
    await store.append(stream, [{ type: 'Funded', data: { amount: 2, at: new Date().toISOString() } }]);
    reads.length = 0;
    expect(await a.load(stream)).toMatchObject({ revision: 1, state: { balance: 7 } });
    // From the cached revision's own event (its hash checked), not a second statement.
    expect(reads).toEqual([0]);
  });

  it('does not fold a re-created stream onto the deleted one it cached', async () => {
    const stream = `cash-${randomUUID()}`;
    const a = createCommandHandler(store, cashDecider);
    const b = createCommandHandler(store, cashDecider);
    await a.handle(stream, { type: 'Fund', amount: 5 }, context); // a: balance 5 at revision 0
    await store.deleteStream(stream);
    await b.handle(stream, { type: 'Fund', amount: 1 }, context); // a new stream: revisions restart at 0
    await b.handle(stream, { type: 'Fund', amount: 1 }, context);
    // Reading only after a's cached revision would add the new revision 1 to the old 5 (6).
    expect(await a.load(stream)).toMatchObject({ revision: 1, state: { balance: 2, spends: 0 } });
  });

  it('gives up after the bounded attempts when an explicit expected revision is wrong', async () => {
    const stream = `cash-${randomUUID()}`;
    const handler = createCommandHandler(store, cashDecider);
    await handler.handle(stream, { type: 'Fund', amount: 5 }, context);
    await expect(
      handler.handle(stream, { type: 'Fund', amount: 1 }, context, { expectedRevision: 7 }),
    ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
  });
});
