import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createWalletCommands,
  type MarketView,
  type OwnerRef,
  type WalletCommands,
} from '../../commands/wallet';
import { isDomainError } from '../../domain/shared/errors';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { dec, fmt } from '../../domain/trading/decimal';
import type { WalletState } from '../../domain/wallet/state';
import { ordersProjection } from '../../projections/orders';
import { rebuildProjection } from '../../projections/rebuild';
import { walletsProjection } from '../../projections/wallets';
import { getBalances, getPositions, getWallet, listOrders, listTrades } from '../../queries/trading';
import type { TradingProfile } from '../../queries/trading-profile';
import { replayWallet, stateSummary, verifyAllChains } from '../../src/audit/wallet-audit';
import { loadConfig } from '../../src/config';
import { createRuntime, type Runtime } from '../../src/runtime';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { accountTradingProfile } from '../support/owner';
import { committedHead } from './log-head';
import { orderTerms, type RandomOrder, type RandomSymbol, randomMove, randomPlace } from './random-orders';
import { PAIRS } from './support';

/**
 * The wallet command handler on the real event store and projections (PGlite, or PostgreSQL with DATABASE_URL):
 * random sequences of orders, price moves, cancels and resets; then the read models must equal the state folded
 * from the log (balances, positions, open orders, session figures), and a rebuild from position 0 must give the
 * same rows.
 */

let database: TestDatabase;
let runtime: Runtime;
let wallets: WalletCommands;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-ledger-'));
const prices = new Map<string, string>();
const resetPrices = () => {
  prices.set('BTCUSDT', '40000');
  prices.set('ETHUSDT', '2000');
};
const view: MarketView = {
  price: (s) => {
    const p = prices.get(s);
    return p ? { price: p, timestamp: new Date().toISOString(), source: 'synthetic' } : undefined;
  },
  pair: (s) => PAIRS[s],
  quoteVolume24h: (s) => (s === 'BTCUSDT' ? '400000000' : '100000000'),
};
const profiles = new Map<string, TradingProfile>();
const profileFor = (ownerId: string): TradingProfile => {
  let p = profiles.get(ownerId);
  if (!p) {
    p = accountTradingProfile(ownerId, '10000.00000000', {
      ...DEFAULT_RISK_PROFILE,
      max_position_size_pct: 100,
      max_order_size_pct: 100,
    });
    profiles.set(ownerId, p);
  }
  return p;
};

beforeAll(async () => {
  database = await createTestDatabase();
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  runtime = await createRuntime(config, pino({ level: process.env.TEST_LOG ?? 'silent' }), {
    database,
    market: false,
  });
  wallets = createWalletCommands({
    store: runtime.services.eventStore,
    db: database.db,
    market: () => view,
    profileOf: async (o: OwnerRef) => profileFor(o.accountId),
    // The ledger's figures here are the spec's slippage table: wallets open `instant` explicitly.
    fillModel: 'instant',
  });
});

beforeEach(resetPrices);

afterAll(async () => {
  await runtime?.close();
  await database?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const meta = { actor: 'test' };

const caughtUp = async () => {
  const head = await committedHead(database.all);
  expect(await runtime.services.projections.waitFor(head, 20_000)).toBe(true);
};

/** Compares the read models of `ownerId` with the wallet state folded from its stream. */
const expectReadModelsEqual = async (ownerId: string, state: WalletState) => {
  const db = database.db;
  if (!state.opened) {
    // Nothing was ever recorded for this owner (only moves and cancels): no rows either.
    expect(await getBalances(db, ownerId)).toEqual([]);
    expect(await getWallet(db, ownerId)).toBeUndefined();
    return;
  }
  const balances = Object.fromEntries(
    (await getBalances(db, ownerId)).map((b) => [
      b.asset,
      [dec(b.available).toFixed(), dec(b.locked).toFixed()],
    ]),
  );
  const expected: Record<string, [string, string]> = {
    USDT: [state.cash.toFixed(), state.lockedCash.toFixed()],
  };
  for (const h of Object.values(state.holdings)) {
    expected[h.asset] = [h.quantity.minus(h.locked).toFixed(), h.locked.toFixed()];
  }
  expect(balances).toEqual(expected);
  const positions = (await getPositions(db, ownerId)).map((p) => [
    p.asset,
    dec(p.quantity).toFixed(),
    fmt(dec(p.cost_basis)),
  ]);
  expect(positions).toEqual(
    Object.values(state.holdings)
      .sort((a, b) => (a.asset < b.asset ? -1 : 1))
      .map((h) => [h.asset, h.quantity.toFixed(), fmt(h.cost)]),
  );
  const open = await listOrders(db, ownerId, { statuses: ['pending'], limit: 500, offset: 0 });
  expect(open.rows.map((o) => o.order_id).sort()).toEqual(Object.keys(state.openOrders).sort());
  for (const o of open.rows) {
    expect(dec(o.locked_amount).toFixed()).toBe(state.openOrders[o.order_id]!.lockedAmount.toFixed());
  }
  const wallet = await getWallet(db, ownerId);
  expect(wallet?.wallet.session_id).toBe(state.session?.id);
  expect(dec(wallet!.session!.realized_pnl).toFixed()).toBe(state.realizedPnl.toFixed());
  expect(dec(wallet!.session!.fees_paid).toFixed()).toBe(state.feesPaid.toFixed());
  expect(wallet!.session!.closed_trades).toBe(state.closedTrades);
  expect(wallet!.session!.winning_trades).toBe(state.winningTrades);
};

type Step =
  | (RandomOrder & { kind: 'order' })
  | { kind: 'move'; symbol: RandomSymbol; pct: number }
  | { kind: 'cancel' }
  | { kind: 'cancelAll' }
  | { kind: 'reset' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: randomPlace('order', 60, { min: 85, max: 115 }) },
  { weight: 4, arbitrary: randomMove({ min: 80, max: 125 }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancelAll' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
);

describe('trading ledger on the event store and projections', () => {
  it('read models equal the state folded from the log, for random order flows', async () => {
    const owners: string[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 5, maxLength: 30 }), async (steps) => {
        resetPrices();
        const ownerId = crypto.randomUUID();
        owners.push(ownerId);
        const owner = { accountId: ownerId };
        for (const s of steps) {
          try {
            if (s.kind === 'order') {
              await wallets.placeOrder(
                owner,
                { price: null, triggerPrice: null, ...orderTerms(s, prices.get(s.symbol)!) },
                meta,
              );
            } else if (s.kind === 'move') {
              const next = dec(prices.get(s.symbol)!).times(s.pct).div(100).decimalPlaces(2).toFixed();
              prices.set(s.symbol, next);
              const { state } = await wallets.load(ownerId);
              for (const o of Object.values(state.openOrders)) {
                if (o.symbol === s.symbol) {
                  await wallets.fill(
                    ownerId,
                    o.orderId,
                    { price: next, time: new Date().toISOString(), source: 'synthetic' },
                    meta,
                  );
                }
              }
            } else if (s.kind === 'cancel') {
              const { state } = await wallets.load(ownerId);
              const first = Object.keys(state.openOrders)[0];
              if (first) {
                await caughtUp();
                await wallets.cancelOrder(owner, first, meta);
              }
            } else if (s.kind === 'cancelAll') await wallets.cancelAll(owner, meta);
            else await wallets.reset(owner, undefined, meta);
          } catch (error) {
            if (!isDomainError(error) || error.code !== 'PRICE_NOT_AVAILABLE') throw error;
          }
        }
        await caughtUp();
        const { state } = await wallets.load(ownerId);
        await expectReadModelsEqual(ownerId, state);
      }),
      { numRuns: 6 },
    );

    // Rebuilding the projections from position 0 gives identical rows.
    for (const projection of [ordersProjection, walletsProjection]) {
      const result = await rebuildProjection(runtime.services.eventStore, database.db, projection, {
        verify: true,
      });
      expect(result.differences ?? []).toEqual([]);
      expect(result.swapped).toBe(true);
    }
    for (const ownerId of owners) {
      const { state } = await wallets.load(ownerId);
      await expectReadModelsEqual(ownerId, state);
    }
  });

  it('lists trades newest first and marks a cancelled order finished (ORDER_NOT_CANCELLABLE)', async () => {
    const ownerId = crypto.randomUUID();
    const owner = { accountId: ownerId };
    const a = await wallets.placeOrder(
      owner,
      { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' },
      meta,
    );
    const b = await wallets.placeOrder(
      owner,
      { symbol: 'ETHUSDT', side: 'buy', type: 'market', quantity: '0.1' },
      meta,
    );
    const p = await wallets.placeOrder(
      owner,
      { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01', price: '1000' },
      meta,
    );
    await caughtUp();
    const trades = await listTrades(database.db, ownerId, { limit: 10, offset: 0 });
    expect(trades.rows.map((t) => t.order_id)).toEqual([b.orderId, a.orderId]);
    expect(trades.total).toBe(2);
    await wallets.cancelOrder(owner, p.orderId, meta);
    await caughtUp();
    await expect(wallets.cancelOrder(owner, p.orderId, meta)).rejects.toMatchObject({
      code: 'ORDER_NOT_CANCELLABLE',
    });
    await expect(wallets.cancelOrder(owner, a.orderId, meta)).rejects.toMatchObject({
      code: 'ORDER_NOT_CANCELLABLE',
    });
    await expect(wallets.cancelOrder(owner, crypto.randomUUID(), meta)).rejects.toMatchObject({
      code: 'ORDER_NOT_FOUND',
    });
    // another owner's order is not found
    await expect(
      wallets.cancelOrder({ accountId: crypto.randomUUID() }, p.orderId, meta),
    ).rejects.toMatchObject({
      code: 'ORDER_NOT_FOUND',
    });
  });

  it('honours idempotency keys: same key and body → the first answer; another body → CONFLICT', async () => {
    const owner = { accountId: crypto.randomUUID() };
    const order = { symbol: 'BTCUSDT', side: 'buy' as const, type: 'market' as const, quantity: '0.01' };
    const idem = { key: 'k-1', scope: 'wallet:x', requestHash: 'h1' };
    const first = await wallets.placeOrder(owner, order, meta, idem);
    const again = await wallets.placeOrder(owner, order, meta, idem);
    expect(again.kind).toBe('replayed');
    expect(again.orderId).toBe(first.orderId);
    await expect(
      wallets.placeOrder(owner, order, meta, { ...idem, requestHash: 'h2' }),
    ).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    // A fresh command handler (another process, or after a restart) finds it in the read model.
    await caughtUp();
    const other = createWalletCommands({
      store: runtime.services.eventStore,
      db: database.db,
      market: () => view,
      profileOf: async (o: OwnerRef) => profileFor(o.accountId),
    });
    const replay = await other.placeOrder(owner, order, meta, idem);
    expect(replay).toMatchObject({ kind: 'replayed', orderId: first.orderId });
  });
});

describe('auditor tools', () => {
  it('replays a wallet (timeline, fold as of a time, read models match) and finds a tampered event', async () => {
    const ownerId = crypto.randomUUID();
    const owner = { accountId: ownerId };
    await wallets.placeOrder(
      owner,
      { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' },
      meta,
    );
    const between = new Date();
    await new Promise((r) => setTimeout(r, 5));
    await wallets.placeOrder(
      owner,
      { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.01', price: '1000' },
      meta,
    );
    await caughtUp();
    const now = await replayWallet(runtime.services.eventStore, database.db, ownerId);
    expect(now.mismatches).toEqual([]);
    expect(now.checkedReadModels).toBe(true);
    expect(now.chainBreak).toBeNull();
    expect(now.timeline).toHaveLength(6);
    expect(now.timeline[5]).toMatch(
      /OrderPlaced\s+buy limit 0.01000000 BTCUSDT @ 1000.00000000; locks 10.01000000 USDT/,
    );
    const then = await replayWallet(runtime.services.eventStore, database.db, ownerId, between);
    expect(then.events).toHaveLength(5);
    expect(then.checkedReadModels).toBe(false);
    expect(Object.keys(then.state.openOrders)).toEqual([]);
    expect(stateSummary(then.state).positions).toEqual([
      { asset: 'BTC', quantity: '0.01000000', locked: '0.00000000', cost_basis: '400.04000000' },
    ]);

    expect((await verifyAllChains(runtime.services.eventStore, database.db)).breaks).toEqual([]);
    // Tamper with a recorded fill: the chain no longer holds at that revision.
    await sql`update events set data = jsonb_set(data, '{quantity}', '"1.00000000"')
      where stream_id = ${`wallet-${ownerId}`} and type = 'OrderFilled'`.execute(database.db);
    const audit = await verifyAllChains(runtime.services.eventStore, database.db);
    expect(audit.breaks).toEqual([
      expect.objectContaining({ streamId: `wallet-${ownerId}`, revision: 4, reason: 'hash_mismatch' }),
    ]);
  });
});
