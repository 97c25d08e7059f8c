import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { EventStore } from '../../ports/event-store';
import { ordersProjection } from '../../projections/orders';
import type { ReadModels } from '../../projections/read-models';
import { rebuildProjection } from '../../projections/rebuild';
import { ProjectionRunner } from '../../projections/runner';
import { listOrders, listTrades, OPEN_STATUSES } from '../../queries/trading';
import { createPGliteTestDatabase, type TestDatabase } from '../support/databases';
import { foldedToHead, useTestStores } from '../support/stores';
import { appendInterleaved, walletHistories, walletHistory } from './wallet-histories';

/**
 * The counts the orders projection keeps for the list totals (issue 20: `order_counts` for `GET /trade/orders` and
 * `/trade/orders/open`, `trade_counts` for `/trade/history`) always equal a `count(*)` of the rows they stand for:
 * random wallet histories of the real decider (orders of every type placed, filled, cancelled, rejected; resets
 * with their closing fills and new sessions), appended in random chunks, some wallets deleted, folded in pages of
 * random sizes (so an order's placement and its fill or cancel fall in the same page or in different ones); and
 * again after `projections rebuild --verify` folds the whole log afresh (the rebuilt generation equals the live one
 * row by row). The list queries' totals are checked against `count(*)` for several filters. On PGlite.
 */

let db: TestDatabase;
let store: EventStore;

/** Waits until the runner folded the log's head; a failed fold fails the test with the runner's status. */
const folded = (runner: ProjectionRunner) => foldedToHead(runner, store);

useTestStores(createPGliteTestDatabase, null, (opened) => ({ db, store } = opened), 180_000);

/** Every kept count against a `count(*)` of the rows, as `owner|session|symbol|key=n` lines, sorted. */
const countsAndRows = async (rm: Kysely<ReadModels>) => {
  const lines = (rows: { owner_id: string; session_id: string; symbol: string; k: string; n: string }[]) =>
    rows.map((r) => `${r.owner_id}|${r.session_id}|${r.symbol}|${r.k}=${Number(r.n)}`).sort();
  const q = async (text: string) => lines((await sql.raw<never>(text).execute(rm)).rows);
  return {
    orderCounts: await q('select owner_id, session_id, symbol, status as k, n::text as n from order_counts'),
    orders: await q(
      'select owner_id, session_id, symbol, status as k, count(*)::text as n from orders group by 1, 2, 3, 4',
    ),
    tradeCounts: await q('select owner_id, session_id, symbol, side as k, n::text as n from trade_counts'),
    trades: await q(
      'select owner_id, session_id, symbol, side as k, count(*)::text as n from trades group by 1, 2, 3, 4',
    ),
  };
};

const expectCountsExact = async (rm: Kysely<ReadModels>) => {
  const c = await countsAndRows(rm);
  expect(c.orderCounts).toEqual(c.orders);
  expect(c.tradeCounts).toEqual(c.trades);
};

/** The list queries' totals against `count(*)` of the same filter, for one owner. */
const expectTotals = async (rm: Kysely<ReadModels>, ownerId: string) => {
  const count = async (table: 'orders' | 'trades', where: string) =>
    Number(
      (
        await sql
          .raw<{ n: string }>(
            `select count(*)::text as n from ${table} where owner_id = '${ownerId}' ${where}`,
          )
          .execute(rm)
      ).rows[0]!.n,
    );
  const page = { limit: 1, offset: 0 };
  expect((await listOrders(rm, ownerId, page)).total).toBe(await count('orders', ''));
  expect((await listOrders(rm, ownerId, { ...page, statuses: OPEN_STATUSES })).total).toBe(
    await count('orders', `and status in ('pending', 'partially_filled')`),
  );
  expect((await listOrders(rm, ownerId, { ...page, statuses: ['filled'], symbol: 'BTCUSDT' })).total).toBe(
    await count('orders', `and status = 'filled' and symbol = 'BTCUSDT'`),
  );
  expect((await listOrders(rm, ownerId, { ...page, statuses: ['cancelled', 'rejected'] })).total).toBe(
    await count('orders', `and status in ('cancelled', 'rejected')`),
  );
  const session = (
    await sql
      .raw<{ s: string }>(`select max(session_id) as s from orders where owner_id = '${ownerId}'`)
      .execute(rm)
  ).rows[0]?.s;
  if (session)
    expect((await listOrders(rm, ownerId, { ...page, sessionId: session })).total).toBe(
      await count('orders', `and session_id = '${session}'`),
    );
  expect((await listTrades(rm, ownerId, { ...page, side: 'sell', symbol: 'ETHUSDT' })).total).toBe(
    await count('trades', `and side = 'sell' and symbol = 'ETHUSDT'`),
  );
};

/**
 * A history that ends with an order in each status (one limit order left pending, one market order filled, one
 * limit order cancelled, one oversized order rejected): run first, so every status is counted whatever the random
 * runs reach (a random set of runs may well leave no order pending).
 */
const everyStatus = walletHistory([
  { kind: 'place', symbol: 'BTCUSDT', side: 'buy', type: 'limit', steps: 1, levelPct: 80, key: null },
  { kind: 'place', symbol: 'ETHUSDT', side: 'buy', type: 'market', steps: 1, levelPct: 100, key: null },
  { kind: 'place', symbol: 'ETHUSDT', side: 'buy', type: 'limit', steps: 1, levelPct: 80, key: null },
  { kind: 'cancel', index: 1 },
  { kind: 'place', symbol: 'BTCUSDT', side: 'buy', type: 'market', steps: 400_000, levelPct: 100, key: null },
]);

describe('order_counts and trade_counts (issue 20)', () => {
  it('equal count(*) after random histories folded in random pages, and after a rebuild', async () => {
    const owners: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.array(walletHistories(60), { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        async (histories, chunkSizes, pageSize, deleted) => {
          const runner = new ProjectionRunner(store, db.db, [ordersProjection], { batchSize: pageSize });
          await runner.start();
          try {
            const ids = histories.map(() => randomUUID());
            owners.push(...ids);
            // The wallets' events interleaved in the log, chunk by chunk, so pages mix wallets.
            await appendInterleaved(store, ids, histories, {
              chunkSizes,
              deleted,
              // Fold now and then mid-history, so later fills and cancels find their orders in the table.
              foldEvery: 3,
              fold: () => folded(runner),
            });
            await folded(runner);
            await expectCountsExact(db.db);
            for (const id of ids) await expectTotals(db.db, id);
          } finally {
            await runner.stop();
          }
        },
      ),
      { numRuns: 12, examples: [[[everyStatus], [2], 3, [false, false, false]]] },
    );
    // Something was counted in every status the histories reach, and a rebuild folds the same counts.
    const statuses = await sql<{ status: string }>`select distinct status from order_counts`.execute(db.db);
    expect(statuses.rows.map((r) => r.status).sort()).toEqual(
      expect.arrayContaining(['cancelled', 'filled', 'pending', 'rejected']),
    );
    const rebuilt = await rebuildProjection(store, db.db, ordersProjection, { verify: true, batchSize: 7 });
    expect(rebuilt.differences ?? []).toEqual([]);
    expect(rebuilt.swapped).toBe(true);
    await expectCountsExact(db.db);
    for (const id of owners.slice(-5)) await expectTotals(db.db, id);
  }, 300_000);
});
