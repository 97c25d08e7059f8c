import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  comparePositions,
  DELETIONS_STREAM,
  type EventStore,
  type RecordedEvent,
  StreamNotFoundError,
  WrongExpectedRevisionError,
} from '../../ports/event-store';
import { encodeDataText } from '../../src/eventstore/data-text';
import { verifyChain } from '../../src/eventstore/hash-chain';

/** What the contract needs from an adapter under test. */
export interface ContractSubject {
  store: EventStore;
  /** Changes a stored event's data behind the store's back (tamper test); absent when impossible. */
  tamper?: (streamId: string, revision: number) => Promise<void>;
  /**
   * Batches sent by the adapter's append batcher so far, when it has one: the batching tests then also check
   * that concurrent appends really shared batches (and transactions).
   */
  appendBatches?: () => number;
  /**
   * True when appends to one stream issued without waiting for each other are applied in the order they were
   * issued (the PostgreSQL batcher); EventStoreDB gives no such promise for concurrent calls.
   */
  keepsSubmissionOrder?: boolean;
  close(): Promise<void>;
}

const uniqueStream = (prefix: string) => `${prefix}-${randomUUID()}`;

/** Collects `count` events of the given streams from a subscription (or fails after `timeoutMs`). */
const collect = async (
  store: EventStore,
  predicate: (e: RecordedEvent) => boolean,
  count: number,
  start: () => Promise<void>,
  timeoutMs = 30_000,
): Promise<RecordedEvent[]> => {
  const head = await store.headPosition();
  const sub = store.subscribeToAll({ after: head, maxBatch: 500 });
  const seen: RecordedEvent[] = [];
  const timer = setTimeout(() => void sub.close(), timeoutMs);
  const consumer = (async () => {
    for await (const batch of sub) {
      for (const e of batch) if (predicate(e)) seen.push(e);
      if (seen.length >= count) break;
    }
  })();
  await start();
  await consumer;
  clearTimeout(timer);
  await sub.close();
  return seen;
};

/**
 * The event store contract (ARCHITECTURE §5): every adapter must pass it. `open` gives a fresh, empty store.
 */
export const eventStoreContract = (name: string, open: () => Promise<ContractSubject>) => {
  describe(`event store contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: EventStore;
    beforeAll(async () => {
      subject = await open();
      store = subject.store;
    });
    afterAll(async () => {
      await subject?.close();
    });

    it('appends and reads back a stream in order, with 0-based revisions and metadata', async () => {
      const stream = uniqueStream('order');
      const result = await store.append(
        stream,
        [
          { type: 'Opened', data: { amount: '10.00000000', nested: { b: 1, a: [1, 2] } } },
          {
            type: 'Deposited',
            data: { amount: '5.50000000' },
            metadata: { actor: 'acc-1', correlation_id: 'req-1' },
          },
          { type: 'Closed', data: {} },
        ],
        { expectedRevision: 'no_stream' },
      );
      expect(result.nextRevision).toBe(2);
      expect(result.events.map((e) => e.revision)).toEqual([0, 1, 2]);
      const events = await store.readStream(stream);
      expect(events.map((e) => [e.type, e.revision])).toEqual([
        ['Opened', 0],
        ['Deposited', 1],
        ['Closed', 2],
      ]);
      expect(events[0]!.data).toEqual({ amount: '10.00000000', nested: { b: 1, a: [1, 2] } });
      expect(events[1]!.metadata).toMatchObject({ actor: 'acc-1', correlation_id: 'req-1' });
      expect(Date.parse(events[1]!.metadata.occurred_at)).not.toBeNaN();
      expect(events.map((e) => e.eventId)).toEqual(result.events.map((e) => e.eventId));
      expect(comparePositions(events[2]!.position, result.position)).toBe(0);
      expect(events[0]!.metadata.prev_hash).toBe('');
      expect(events[1]!.metadata.prev_hash).toBe(events[0]!.metadata.hash);
      expect(result.lastHash).toBe(events[2]!.metadata.hash);
      expect(await store.streamRevision(stream)).toBe(2);
      expect(await store.readStream(stream, { fromRevision: 1, maxCount: 1 })).toHaveLength(1);
      expect(await store.readStream(uniqueStream('missing'))).toEqual([]);
      expect(await store.streamRevision(uniqueStream('missing'))).toBe(-1);
    });

    it('stores data and metadata with quotes, backslashes, braces, commas and non-ASCII text as given, chain intact', async () => {
      const stream = uniqueStream('text');
      const awkward = {
        note: 'a "quoted", {braced} [bracketed] \\ back\\slash, comma; NULL null',
        unicode: 'é ü 中文 🚀 \u2028 \t tab \n newline',
        list: ['{"x":1}', '\\"', '', ',', 'NULL'],
        nested: { 'key "q"': { é: [null, true, 1.5] } },
      };
      const result = await store.append(
        stream,
        [
          { type: 'Awkward', data: awkward, metadata: { actor: 'a "b" \\ c', note: '}{,' } },
          { type: 'Plain', data: { n: 1 } },
          { type: 'Text', data: '{"not":"an object"}' as unknown as Record<string, unknown> },
        ],
        { expectedRevision: 'no_stream' },
      );
      expect(result.events[0]!.data).toEqual(awkward);
      const events = await store.readStream(stream);
      expect(events[0]!.data).toEqual(awkward);
      expect(events[0]!.metadata).toMatchObject({ actor: 'a "b" \\ c', note: '}{,' });
      expect(events[2]!.data).toBe('{"not":"an object"}');
      expect(events.map((e) => e.metadata.hash)).toEqual(result.events.map((e) => e.metadata.hash));
      expect(verifyChain(events)).toBeNull();
    });

    it('stores an event given as its encoded canonical text (dataText) as it stores its data, chain intact', async () => {
      const encoded = { to_step: 3, units: `${'12,-7*3,'.repeat(20_000)}"é\\`, fills: 0 };
      const partial = { to_step: 3, fills: 0 };
      const given = uniqueStream('encoded');
      const plain = uniqueStream('plain');
      // Beside events given as data, in one append: the encoded one's data is what its bytes hold.
      const result = await store.append(
        given,
        [
          { type: 'Small', data: { a: 1 } },
          { type: 'Stepped', data: partial, dataText: encodeDataText(encoded) },
          { type: 'Small', data: { b: '"q"' }, dataText: encodeDataText({ b: '"q"' }) },
        ],
        { expectedRevision: 'no_stream' },
      );
      await store.append(
        plain,
        [
          { type: 'Small', data: { a: 1 } },
          { type: 'Stepped', data: encoded },
          { type: 'Small', data: { b: '"q"' } },
        ],
        { expectedRevision: 'no_stream' },
      );
      expect(result.events[1]!.data).toEqual(encoded);
      const events = await store.readStream(given);
      const reference = await store.readStream(plain);
      expect(events.map((e) => e.data)).toEqual(reference.map((e) => e.data));
      expect(events[1]!.data).toEqual(encoded);
      expect(events.map((e) => e.metadata.hash)).toEqual(result.events.map((e) => e.metadata.hash));
      expect(verifyChain(events)).toBeNull();
    });

    it('enforces the expected revision and writes nothing on a conflict', async () => {
      const stream = uniqueStream('occ');
      await expect(
        store.append(stream, [{ type: 'A', data: {} }], { expectedRevision: 'stream_exists' }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await expect(
        store.append(stream, [{ type: 'A', data: {} }], { expectedRevision: 0 }),
      ).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      await store.append(stream, [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });
      const conflict = await store
        .append(stream, [{ type: 'B', data: {} }], { expectedRevision: 'no_stream' })
        .catch((e) => e);
      expect(conflict).toBeInstanceOf(WrongExpectedRevisionError);
      expect((conflict as WrongExpectedRevisionError).actual).toBe(0);
      const stale = await store
        .append(stream, [{ type: 'B', data: {} }], { expectedRevision: 5 })
        .catch((e) => e);
      expect(stale).toBeInstanceOf(WrongExpectedRevisionError);
      await store.append(stream, [{ type: 'B', data: {} }], { expectedRevision: 0 });
      await store.append(stream, [{ type: 'C', data: {} }], { expectedRevision: 'stream_exists' });
      await store.append(stream, [{ type: 'D', data: {} }], { expectedRevision: 'any' });
      const events = await store.readStream(stream);
      expect(events.map((e) => e.type)).toEqual(['A', 'B', 'C', 'D']);
      expect(verifyChain(events)).toBeNull();
    });

    it('finds the newest event of a stream recording an idempotency key, and only in that stream', async () => {
      const stream = uniqueStream('keys');
      const other = uniqueStream('keys');
      await store.append(stream, [
        { type: 'OrderPlaced', data: { order_id: 'a', idempotency_key: 'k1' } },
        { type: 'OrderFilled', data: { order_id: 'a' } },
        { type: 'OrderPlaced', data: { order_id: 'b', idempotency_key: null } },
        { type: 'OrderRejected', data: { order_id: 'c', idempotency_key: 'k2' } },
      ]);
      await store.append(stream, [{ type: 'OrderPlaced', data: { order_id: 'd', idempotency_key: 'k1' } }]);
      await store.append(other, [{ type: 'OrderPlaced', data: { order_id: 'x', idempotency_key: 'k3' } }]);
      const k1 = await store.findByIdempotencyKey(stream, 'k1');
      expect(k1).toBeDefined();
      expect([k1!.revision, (k1!.data as { order_id: string }).order_id, k1!.streamId]).toEqual([
        4,
        'd',
        stream,
      ]);
      expect(k1?.metadata.hash).toBe((await store.readStream(stream, { fromRevision: 4 }))[0]!.metadata.hash);
      expect((await store.findByIdempotencyKey(stream, 'k2'))?.type).toBe('OrderRejected');
      expect(await store.findByIdempotencyKey(stream, 'k3')).toBeUndefined();
      expect(await store.findByIdempotencyKey(uniqueStream('missing'), 'k1')).toBeUndefined();
      // Bounded by `notBefore` where the adapter scans; a key recorded after the bound is always found.
      const since = new Date(Date.now() - 3_600_000);
      expect((await store.findByIdempotencyKey(stream, 'k2', { notBefore: since }))?.revision).toBe(3);
    });

    it('reads $all in pages without gaps or repeats and reports the head', async () => {
      const streams = [uniqueStream('all'), uniqueStream('all')];
      let last: RecordedEvent['position'] | undefined;
      for (let i = 0; i < 10; i++) {
        last = (await store.append(streams[i % 2]!, [{ type: 'Tick', data: { i } }])).position;
      }
      // `$all` shows an event once no older transaction on the server is still open (the xid8 horizon):
      // other databases' transactions on a shared server can hold it back for a moment.
      let head = await store.headPosition();
      for (let waited = 0; comparePositions(head, last!) < 0 && waited < 15_000; waited += 20) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        head = await store.headPosition();
      }
      const all: RecordedEvent[] = [];
      let after: RecordedEvent['position'] | undefined;
      for (;;) {
        const page = await store.readAll({ ...(after ? { after } : {}), maxCount: 3 });
        all.push(...page.events);
        if (page.events.length === 0) break;
        after = page.next;
      }
      for (let i = 1; i < all.length; i++)
        expect(comparePositions(all[i - 1]!.position, all[i]!.position)).toBeLessThan(0);
      expect(new Set(all.map((e) => e.eventId)).size).toBe(all.length);
      const mine = all.filter((e) => streams.includes(e.streamId));
      expect(mine.map((e) => (e.data as { i: number }).i)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(comparePositions(all[all.length - 1]!.position, head)).toBeGreaterThanOrEqual(0);
      // Where the store counts the events after a position (a projection's lag), it counts what `readAll` reads.
      if (store.countEventsAfter) {
        for (const k of [0, Math.floor(all.length / 2), all.length - 1])
          expect(await store.countEventsAfter(all[k]!.position, 1_000_000)).toBe(all.length - 1 - k);
        expect(await store.countEventsAfter(all[0]!.position, 3)).toBe(Math.min(3, all.length - 1));
      }
    });

    it('delivers every committed event exactly once to a live subscriber under 32 concurrent writers', async () => {
      const tag = randomUUID();
      const shared = [uniqueStream('shared'), uniqueStream('shared')];
      const perWriter = 12;
      const acked = new Set<string>();
      let conflicts = 0;
      const writer = async (w: number) => {
        const own = uniqueStream(`writer${w}`);
        for (let i = 0; i < perWriter; i++) {
          const eventId = randomUUID();
          if (i % 3 === 2) {
            // Shared stream: read the revision, append with it, retry on conflict (like the command handler).
            const stream = shared[w % 2]!;
            for (;;) {
              const revision = await store.streamRevision(stream);
              const id = randomUUID();
              try {
                await store.append(stream, [{ type: 'Shared', data: { tag, w, i }, eventId: id }], {
                  expectedRevision: revision === -1 ? 'no_stream' : revision,
                });
                acked.add(id);
                break;
              } catch (error) {
                if (!(error instanceof WrongExpectedRevisionError)) throw error;
                conflicts++;
              }
            }
          } else {
            await store.append(own, [{ type: 'Own', data: { tag, w, i }, eventId }], {
              expectedRevision: i === 0 ? 'no_stream' : i - 1 - Math.floor(i / 3),
            });
            acked.add(eventId);
          }
        }
      };
      const total = 32 * perWriter;
      const seen = await collect(
        store,
        (e) => (e.data as { tag?: string }).tag === tag,
        total,
        async () => {
          await Promise.all(Array.from({ length: 32 }, (_, w) => writer(w)));
        },
      );
      expect(acked.size).toBe(total);
      expect(seen).toHaveLength(total);
      const ids = seen.map((e) => e.eventId);
      expect(new Set(ids).size).toBe(total);
      for (const id of ids) expect(acked.has(id)).toBe(true);
      for (let i = 1; i < seen.length; i++) {
        expect(comparePositions(seen[i - 1]!.position, seen[i]!.position)).toBeLessThan(0);
      }
      // Per stream the revisions arrive in order without holes.
      const byStream = new Map<string, number[]>();
      for (const e of seen) byStream.set(e.streamId, [...(byStream.get(e.streamId) ?? []), e.revision]);
      for (const revisions of byStream.values()) expect(revisions).toEqual(revisions.map((_, i) => i));
      for (const stream of shared) expect(verifyChain(await store.readStream(stream))).toBeNull();
      expect(conflicts).toBeGreaterThanOrEqual(0);
    });

    it('resumes a subscription from a checkpoint without repeats', async () => {
      const stream = uniqueStream('resume');
      const checkpoint = (await store.append(stream, [{ type: 'A', data: {} }])).position;
      await store.append(stream, [
        { type: 'B', data: {} },
        { type: 'C', data: {} },
      ]);
      const sub = store.subscribeToAll({ after: checkpoint });
      const got: string[] = [];
      for await (const batch of sub) {
        for (const e of batch) if (e.streamId === stream) got.push(e.type);
        if (got.length >= 2) break;
      }
      await sub.close();
      expect(got).toEqual(['B', 'C']);
    });

    it('deletes a stream, records the deletion, and lets the id be reused', async () => {
      const stream = uniqueStream('gone');
      await store.append(stream, [
        { type: 'Secret', data: { key_ciphertext: 'abc' } },
        { type: 'More', data: {} },
      ]);
      await expect(store.deleteStream(stream, { expectedRevision: 0 })).rejects.toBeInstanceOf(
        WrongExpectedRevisionError,
      );
      await store.deleteStream(stream, { expectedRevision: 1 });
      expect(await store.readStream(stream)).toEqual([]);
      expect(await store.streamRevision(stream)).toBe(-1);
      const deletions = await store.readStream(DELETIONS_STREAM);
      const mine = deletions.find((e) => (e.data as { stream_id: string }).stream_id === stream);
      expect(mine?.type).toBe('StreamDeleted');
      expect(mine?.data).toMatchObject({ stream_id: stream, last_revision: 1 });
      await expect(store.deleteStream(stream)).rejects.toBeInstanceOf(StreamNotFoundError);
      await store.append(stream, [{ type: 'Reborn', data: {} }], { expectedRevision: 'no_stream' });
      const reborn = await store.readStream(stream);
      expect(reborn.map((e) => [e.type, e.revision])).toEqual([['Reborn', 0]]);
      expect(verifyChain(reborn)).toBeNull();
    });

    // 25,000 events: 25 appends of 1,000 and, read back, two full pages of the PostgreSQL adapter's 10,000-row
    // readStream pages and a partial third, so every page boundary is crossed. Streams of 100,000 events and
    // more are the benches' (docs/benchmarks.md, "Sizes the test suite leaves to the benches").
    it('holds a 25,000-event stream and reads it back in order with an intact chain', async () => {
      const stream = uniqueStream('big');
      const batch = 1_000;
      const total = 25_000;
      for (let b = 0; b < total / batch; b++) {
        await store.append(
          stream,
          Array.from({ length: batch }, (_, i) => ({ type: 'Step', data: { n: b * batch + i } })),
          { expectedRevision: b === 0 ? 'no_stream' : b * batch - 1 },
        );
      }
      const events = await store.readStream(stream);
      expect(events).toHaveLength(total);
      expect(events.every((e, i) => e.revision === i && (e.data as { n: number }).n === i)).toBe(true);
      expect(verifyChain(events)).toBeNull();
      expect(await store.readStream(stream, { fromRevision: total - 10 })).toHaveLength(10);
      // From a page boundary, across the next one.
      const middle = await store.readStream(stream, { fromRevision: 10_000, maxCount: 10_001 });
      expect(middle.map((e) => e.revision)).toEqual(Array.from({ length: 10_001 }, (_, i) => 10_000 + i));
    }, 180_000);

    it('batches concurrent appends to distinct streams: all succeed with correct revisions and hash chains', async () => {
      const streams = Array.from({ length: 48 }, () => uniqueStream('batch'));
      const first = await Promise.all(
        streams.map((s, i) =>
          store.append(s, [{ type: 'Opened', data: { i } }], { expectedRevision: 'no_stream' }),
        ),
      );
      const batchesBefore = subject.appendBatches?.();
      const second = await Promise.all(
        streams.map((s, i) =>
          store.append(
            s,
            [
              { type: 'Deposited', data: { i, amount: '1.00000000' } },
              { type: 'Withdrawn', data: { i, amount: '0.50000000' } },
            ],
            { expectedRevision: 0 },
          ),
        ),
      );
      for (let i = 0; i < streams.length; i++) {
        expect(first[i]!.nextRevision).toBe(0);
        expect(second[i]!.nextRevision).toBe(2);
        expect(second[i]!.events.map((e) => [e.streamId, e.revision])).toEqual([
          [streams[i], 1],
          [streams[i], 2],
        ]);
        expect(second[i]!.events[0]!.metadata.prev_hash).toBe(first[i]!.lastHash);
        const events = await store.readStream(streams[i]!);
        expect(events.map((e) => [e.type, (e.data as { i: number }).i])).toEqual([
          ['Opened', i],
          ['Deposited', i],
          ['Withdrawn', i],
        ]);
        expect(events.map((e) => e.metadata.hash)).toEqual([
          first[i]!.lastHash,
          ...second[i]!.events.map((e) => e.metadata.hash),
        ]);
        expect(verifyChain(events)).toBeNull();
      }
      if (batchesBefore !== undefined) {
        // Batched: far fewer batches (and transactions) than appends.
        expect(subject.appendBatches!() - batchesBefore).toBeLessThan(streams.length / 4);
        expect(new Set(second.map((r) => r.position.commit)).size).toBeLessThan(streams.length / 4);
      }
    });

    it('fails only the conflicting appends of a batch, each with its actual revision; their neighbours commit', async () => {
      const streams = Array.from({ length: 12 }, () => uniqueStream('neighbour'));
      await Promise.all(streams.map((s) => store.append(s, [{ type: 'Opened', data: {} }])));
      const missing = uniqueStream('missing');
      const batchesBefore = subject.appendBatches?.();
      const attempts: [string, number | 'no_stream' | 'stream_exists' | 'any'][] = streams.map((s, i) => [
        s,
        i === 3 ? 5 : i === 7 ? 'no_stream' : 0,
      ]);
      attempts.splice(5, 0, [missing, 'stream_exists']);
      const settled = await Promise.allSettled(
        attempts.map(([s, expectedRevision]) =>
          store.append(s, [{ type: 'Next', data: {} }], { expectedRevision }),
        ),
      );
      const failed = settled.flatMap((r, i) => (r.status === 'rejected' ? [[i, r.reason] as const] : []));
      expect(failed.map(([i]) => attempts[i]![0])).toEqual([streams[3], missing, streams[7]]);
      for (const [i, error] of failed) {
        expect(error).toBeInstanceOf(WrongExpectedRevisionError);
        expect((error as WrongExpectedRevisionError).streamId).toBe(attempts[i]![0]);
        expect((error as WrongExpectedRevisionError).expected).toBe(attempts[i]![1]);
        expect((error as WrongExpectedRevisionError).actual).toBe(attempts[i]![0] === missing ? -1 : 0);
      }
      for (let i = 0; i < streams.length; i++) {
        const events = await store.readStream(streams[i]!);
        expect(events.map((e) => e.type)).toEqual(i === 3 || i === 7 ? ['Opened'] : ['Opened', 'Next']);
        expect(verifyChain(events)).toBeNull();
      }
      expect(await store.readStream(missing)).toEqual([]);
      expect(await store.streamRevision(missing)).toBe(-1);
      if (batchesBefore !== undefined) {
        // All thirteen were sent together: the ten that committed share one transaction.
        expect(subject.appendBatches!() - batchesBefore).toBe(1);
        const commits = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value.position.commit] : []));
        expect(commits).toHaveLength(10);
        expect(new Set(commits).size).toBe(1);
      }
    });

    it('applies appends to one stream issued together in order, checking each against its predecessor', async (ctx) => {
      if (!subject.keepsSubmissionOrder) {
        console.log(`[contract:${name}] submission-order test skipped: the adapter does not promise it`);
        ctx.skip();
        return;
      }
      const stream = uniqueStream('ordered');
      const neighbour = uniqueStream('ordered-neighbour');
      await store.append(stream, [{ type: 'Opened', data: {} }], { expectedRevision: 'no_stream' });
      const settled = await Promise.allSettled([
        store.append(stream, [{ type: 'A', data: {} }], { expectedRevision: 0 }),
        store.append(neighbour, [{ type: 'N', data: {} }], { expectedRevision: 'no_stream' }),
        store.append(
          stream,
          [
            { type: 'B', data: {} },
            { type: 'C', data: {} },
          ],
          { expectedRevision: 1 },
        ),
        // Checked against what A, B and C left (3), not against the revision before the batch (0).
        store.append(stream, [{ type: 'Stale', data: {} }], { expectedRevision: 1 }),
        store.append(stream, [{ type: 'D', data: {} }], { expectedRevision: 3 }),
        store.append(stream, [{ type: 'E', data: {} }], { expectedRevision: 'stream_exists' }),
      ]);
      expect(settled.map((r) => r.status)).toEqual([
        'fulfilled',
        'fulfilled',
        'fulfilled',
        'rejected',
        'fulfilled',
        'fulfilled',
      ]);
      const stale = (settled[3] as PromiseRejectedResult).reason;
      expect(stale).toBeInstanceOf(WrongExpectedRevisionError);
      expect((stale as WrongExpectedRevisionError).actual).toBe(3);
      const values = settled.map((r) => (r.status === 'fulfilled' ? r.value.nextRevision : null));
      expect(values).toEqual([1, 0, 3, null, 4, 5]);
      const events = await store.readStream(stream);
      expect(events.map((e) => e.type)).toEqual(['Opened', 'A', 'B', 'C', 'D', 'E']);
      expect(verifyChain(events)).toBeNull();
      for (let i = 1; i < events.length; i++) {
        expect(comparePositions(events[i - 1]!.position, events[i]!.position)).toBeLessThan(0);
      }
    });

    it('lets exactly one of many concurrent first appends to a new stream win with no_stream', async () => {
      const contested = uniqueStream('contested');
      const open = uniqueStream('open');
      const settled = await Promise.allSettled(
        Array.from({ length: 24 }, (_, i) =>
          store.append(contested, [{ type: 'Claimed', data: { i } }], { expectedRevision: 'no_stream' }),
        ),
      );
      const won = settled.filter((r) => r.status === 'fulfilled');
      expect(won).toHaveLength(1);
      expect((won[0] as PromiseFulfilledResult<{ nextRevision: number }>).value.nextRevision).toBe(0);
      for (const r of settled) {
        if (r.status === 'rejected') {
          expect(r.reason).toBeInstanceOf(WrongExpectedRevisionError);
          expect((r.reason as WrongExpectedRevisionError).actual).toBe(0);
        }
      }
      const events = await store.readStream(contested);
      expect(events).toHaveLength(1);
      expect(verifyChain(events)).toBeNull();
      // With `any`, every one of them lands, each at its own revision, in one intact chain.
      const all = await Promise.all(
        Array.from({ length: 24 }, (_, i) => store.append(open, [{ type: 'Joined', data: { i } }])),
      );
      expect(all.map((r) => r.nextRevision).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 24 }, (_, i) => i),
      );
      const joined = await store.readStream(open);
      expect(joined).toHaveLength(24);
      expect(verifyChain(joined)).toBeNull();
    });

    it('keeps every chain intact when concurrent appends hit a few shared streams in every order', async () => {
      const shared = Array.from({ length: 5 }, () => uniqueStream('crossed'));
      const perWorker = 12;
      const workers = 16;
      await Promise.all(
        Array.from({ length: workers }, async (_, w) => {
          for (let i = 0; i < perWorker; i++) {
            // Each round, every worker appends to a different shared stream, concurrently.
            const s = shared[(w * 7 + i * 3) % shared.length]!;
            await store.append(s, [{ type: 'Crossed', data: { w, i } }], { expectedRevision: 'any' });
          }
        }),
      );
      let total = 0;
      for (const s of shared) {
        const events = await store.readStream(s);
        total += events.length;
        expect(verifyChain(events)).toBeNull();
      }
      expect(total).toBe(workers * perWorker);
    });

    it('detects a tampered event through the hash chain', async (ctx) => {
      if (!subject.tamper) {
        console.log(
          `[contract:${name}] tamper test skipped: the adapter offers no way to edit a stored event`,
        );
        ctx.skip();
        return;
      }
      const stream = uniqueStream('audit');
      await store.append(stream, [
        { type: 'Deposited', data: { amount: '100.00000000' } },
        { type: 'Withdrawn', data: { amount: '40.00000000' } },
        { type: 'Deposited', data: { amount: '1.00000000' } },
      ]);
      expect(verifyChain(await store.readStream(stream))).toBeNull();
      await subject.tamper(stream, 1);
      const broken = verifyChain(await store.readStream(stream));
      expect(broken).toMatchObject({ streamId: stream, revision: 1, reason: 'hash_mismatch' });
    });
  });
};
