import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { marksStreamId } from '../../domain/analytics/marks';
import type { EventStore } from '../../ports/event-store';
import { equitySnapshotsProjection } from '../../projections/equity-snapshots';
import { rebuildProjection } from '../../projections/rebuild';
import { ProjectionRunner } from '../../projections/runner';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { foldedToHead, useTestStores } from '../support/stores';
import { RANDOM_SYMBOLS, randomMove } from '../trading/random-orders';
import {
  appendInterleaved,
  type HistoryAction,
  historyAction,
  walletHistory,
} from '../trading/wallet-histories';

/**
 * The equity projection folds a page of fills alone without loading the wallets (`applyFills`: cash and realized
 * PnL moved by the page's sums, positions and marks from each pair's last fill; issue 23). Random wallet histories
 * of the real decider (buys, sells that close positions, resets with new sessions), interleaved in the log, some
 * wallets deleted, a minute's marks recorded now and then, folded live in pages of random sizes (most pages hold fills
 * alone), must equal row by row what `projections rebuild --verify` folds from the whole log in one page (which holds
 * the sessions, so it takes the load-fold-write path) and in pages of 7. On PGlite, or on PostgreSQL with `DATABASE_URL`.
 */

let db: TestDatabase;
let store: EventStore;

/** Waits until the runner folded the log's head; a failed fold fails the test with the runner's status. */
const folded = (runner: ProjectionRunner) => foldedToHead(runner, store);

useTestStores(createTestDatabase, null, (opened) => ({ db, store } = opened), 180_000);

/**
 * Histories heavy in fills: market buys and sells (sells that close a position too) of both pairs, price moves, and
 * now and then any other action (limit orders, cancels, resets that start a new session).
 */
const fillHeavy = fc
  .array(
    fc.oneof(
      {
        weight: 10,
        arbitrary: fc.record({
          kind: fc.constant('place' as const),
          symbol: fc.constantFrom(...RANDOM_SYMBOLS),
          side: fc.constantFrom('buy' as const, 'sell' as const),
          type: fc.constant('market' as const),
          // Lots of 5 and 10: a sell often closes the position exactly (its holding row is deleted).
          steps: fc.constantFrom(5, 10),
          levelPct: fc.constant(100),
          key: fc.constant(null),
        }),
      },
      { weight: 3, arbitrary: randomMove({ min: 70, max: 140 }) },
      { weight: 1, arbitrary: historyAction },
    ) as fc.Arbitrary<HistoryAction>,
    { minLength: 1, maxLength: 60 },
  )
  .map(walletHistory);

/** Minutes of recorded marks so far (each `MarksRecorded` a minute later than the one before). */
let minute = 0;

/** Records the marks of minute `n` (from 2024-01-01 UTC) for both pairs, at prices that move with `n`. */
const recordMarks = async (n: number) => {
  const at = new Date(Date.UTC(2024, 0, 1) + n * 60_000);
  const marks = RANDOM_SYMBOLS.map((symbol, i) => ({
    symbol,
    price: (i === 0 ? 40_000 + n * 37.5 : 2_000 + n * 1.25).toFixed(8),
    price_time: at.toISOString(),
    source: 'files',
  }));
  await store.append(marksStreamId(at), [{ type: 'MarksRecorded', data: { at: at.toISOString(), marks } }]);
};

/** A wallet that buys both pairs and sells part of one, so it ends holding both (never deleted: it is the first). */
const heldToTheEnd = walletHistory(
  (['buy', 'buy', 'sell'] as const).map((side, i) => ({
    kind: 'place' as const,
    symbol: RANDOM_SYMBOLS[i % RANDOM_SYMBOLS.length]!,
    side,
    type: 'market' as const,
    steps: i === 2 ? 5 : 10,
    levelPct: 100,
    key: null,
  })),
);

describe('equity_snapshots: pages of fills alone (issue 23)', () => {
  it('equal a rebuild from the log in one page and in pages of 7, row by row', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fillHeavy, { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        async (histories, chunkSizes, pageSize, deleted) => {
          const runner = new ProjectionRunner(store, db.db, [equitySnapshotsProjection], {
            batchSize: pageSize,
          });
          await runner.start();
          try {
            const ids = histories.map(() => randomUUID());
            await appendInterleaved(store, ids, histories, {
              chunkSizes,
              deleted,
              foldEvery: 2,
              // A minute's marks between fill pages now and then: the full path then values the holdings and marks
              // the fills-only pages wrote, and writes snapshot rows from them.
              fold: async () => {
                if (minute++ % 2 === 0) await recordMarks(minute);
                await folded(runner);
              },
            });
            await folded(runner);
          } finally {
            await runner.stop();
          }
        },
      ),
      {
        numRuns: 10,
        // One wallet that buys and keeps its position, run first (so its first fold records a minute's marks): the
        // counts below then never hang on what the random runs happened to leave open.
        examples: [[[heldToTheEnd], [1], 3, [false, false, false]]],
      },
    );
    // Something was held, closed and valued, so every part of the page's statement was exercised.
    const held = await sql<{ n: string }>`select count(*)::text as n from equity_holdings`.execute(db.db);
    const marks = await sql<{ n: string }>`select count(*)::text as n from equity_marks`.execute(db.db);
    expect(Number(held.rows[0]!.n)).toBeGreaterThan(0);
    expect(Number(marks.rows[0]!.n)).toBeGreaterThan(0);
    const points = await sql<{ n: string }>`select count(*)::text as n from equity_snapshots`.execute(db.db);
    expect(Number(points.rows[0]!.n)).toBeGreaterThan(0);
    for (const batchSize of [5_000, 7]) {
      const rebuilt = await rebuildProjection(store, db.db, equitySnapshotsProjection, {
        verify: true,
        batchSize,
      });
      expect(rebuilt.differences ?? []).toEqual([]);
      expect(rebuilt.swapped).toBe(true);
    }
  }, 300_000);
});
