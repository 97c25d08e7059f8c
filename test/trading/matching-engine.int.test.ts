import { randomUUID } from 'node:crypto';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { WalletCommands } from '../../commands/wallet';
import type { OrderPlacedData } from '../../domain/wallet/events';
import { ProjectionRunner } from '../../projections/runner';
import { streamSummariesProjection } from '../../projections/stream-summaries';
import type { PriceTick } from '../../src/market/ticks';
import { MatchingEngine } from '../../src/matching/engine';
import { soleLeadership } from '../../src/matching/leader';
import { useStorePerTest } from '../support/stores';

/**
 * The matching engine following the log through the projection runner's pages (one reader per process):
 * it builds its index from the log at start, then sees every order placed or finished afterwards as soon as
 * the runner commits the page, before a waiting command is answered.
 */
let runner: ProjectionRunner;
let engine: MatchingEngine | undefined;
const stores = useStorePerTest(
  ({ db, store }) => {
    runner = new ProjectionRunner(store, db.db, [streamSummariesProjection], { unwaitedFoldDelayMs: 60_000 });
  },
  async () => {
    await engine?.stop();
    engine = undefined;
    await runner.stop();
  },
);

const placed = (order_id: string, price: string): OrderPlacedData => ({
  order_id,
  session_id: randomUUID(),
  symbol: 'BTCUSDT',
  base_asset: 'BTC',
  side: 'buy',
  type: 'limit',
  quantity: '0.01',
  price,
  trigger_price: null,
  locked_amount: '0',
  lock_asset: 'USDT',
  fee_rate: '0.001',
  idempotency_key: null,
  request_hash: null,
  placed_at: new Date().toISOString(),
});

/** The fills the engine asks for (the fill path itself is what the HTTP trading tests cover). */
const fillsAsked: string[] = [];
const recordingWallets = {
  fill: async (_owner: string, orderId: string) => {
    fillsAsked.push(orderId);
    return { events: [] };
  },
} as unknown as WalletCommands;

const startEngine = async () => {
  engine = new MatchingEngine({
    store: stores.store,
    wallets: recordingWallets,
    ticks$: new Subject<PriceTick>(),
    lastTick: () => undefined,
    leadership: soleLeadership(),
    folded: (listener) => runner.onFolded(listener),
  });
  await engine.start();
  return engine;
};

describe('matching engine on the runner’s reader', () => {
  it('indexes the log at start, then follows the runner’s pages without a reader of its own', async () => {
    fillsAsked.length = 0;
    const owner = randomUUID();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    const first = await stores.store.append(`wallet-${owner}`, [
      { type: 'OrderPlaced', data: placed(a, '100') },
      { type: 'OrderPlaced', data: placed(b, '90') },
    ]);
    await runner.start();
    // The runner has folded them before the engine starts, so the engine's own read must find them. (Without
    // this wait, an older transaction open elsewhere on the shared server can hold the log's visible head back
    // for a moment; both would then see the orders a little later.)
    expect(await runner.waitFor(first.position, 30_000)).toBe(true);
    const e = await startEngine();
    expect(e.status()).toMatchObject({ ready: true, pending_orders: 2 });

    // Read your writes: once the runner has the page, the engine has it too (it hears the page first).
    const next = await stores.store.append(`wallet-${owner}`, [
      { type: 'OrderPlaced', data: placed(c, '80') },
    ]);
    expect(await runner.waitFor(next.position, 10_000)).toBe(true);
    expect(e.index.size).toBe(3);
    expect(
      e.onTick({ symbol: 'BTCUSDT', price: '105', priceUnits: 105e8, time: Date.now(), source: 'files' }),
    ).toHaveLength(0);

    const cancelled = await stores.store.append(`wallet-${owner}`, [
      {
        type: 'OrderCancelled',
        data: { order_id: a, reason: 'user', cancelled_at: new Date().toISOString() },
      },
    ]);
    expect(await runner.waitFor(cancelled.position, 10_000)).toBe(true);
    expect(e.index.size).toBe(2);
    // The remaining orders are found by price: 90 is reached at 85, 80 is not.
    const reached = e.onTick({
      symbol: 'BTCUSDT',
      price: '85',
      priceUnits: 85e8,
      time: Date.now(),
      source: 'files',
    });
    expect(reached.map((o) => o.orderId)).toEqual([b]);
    await e.idle();
    expect(fillsAsked).toEqual([b]);
  });
});
