import { randomUUID } from 'node:crypto';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { WalletCommands } from '../../commands/wallet';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { dec } from '../../domain/trading/decimal';
import type { PairFilters } from '../../domain/trading/quantity';
import type { OrderRequest, WalletCommand, WalletContext } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import {
  comparePositions,
  type EventStore,
  type LogPosition,
  type ReadAllOptions,
  START,
} from '../../ports/event-store';
import { ordersProjection } from '../../projections/orders';
import { ProjectionRunner } from '../../projections/runner';
import type { PriceTick } from '../../src/market/ticks';
import { MatchingEngine } from '../../src/matching/engine';
import { soleLeadership } from '../../src/matching/leader';
import { readIndexSeed } from '../../src/matching/seed';
import { newAccountOwner } from '../support/owner';
import { useStorePerTest } from '../support/stores';
import { until } from '../support/until';
import { PAIRS } from './support';

/**
 * The matching engine seeded from the `orders` read model (issue 20: a restart must not read the whole log): it
 * indexes exactly what reading the whole log indexes — pending and partly filled resting orders, not filled,
 * cancelled, IOC or market ones — in the same order among equal levels, reads only the log after the read
 * model's checkpoint, and still sees what was appended after it.
 */
let runner: ProjectionRunner;
const engines: MatchingEngine[] = [];
const stores = useStorePerTest(
  ({ db, store }) => {
    runner = new ProjectionRunner(store, db.db, [ordersProjection]);
  },
  async () => {
    for (const e of engines.splice(0)) await e.stop();
    await runner.stop();
  },
);

const PAIR: PairFilters = { ...PAIRS.BTCUSDT!, tickSize: '0.01000000' };

/** A wallet's events decided by the real decider at a price that the test moves. */
const walletBuilder = () => {
  const owner = newAccountOwner('1000000.00000000');
  const { ownerId } = owner;
  let price = '100.00000000';
  let state = walletDecider.initialState();
  const ctx = (): WalletContext => ({
    now: new Date(),
    newId: randomUUID,
    prices: () => ({ price, timestamp: new Date().toISOString(), source: 'synthetic' }),
    pairs: (s) => (s === 'BTCUSDT' ? PAIR : undefined),
    quoteVolume24h: () => dec('50000000'),
    riskProfile: { ...DEFAULT_RISK_PROFILE, max_position_size_pct: 100, max_order_size_pct: 100 },
    feeRate: dec('0.001'),
    fillModel: 'realistic',
  });
  const events: WalletEvent[] = [];
  const decide = (command: WalletCommand) => {
    for (const e of walletDecider.decide(command, state, ctx())) {
      state = walletDecider.evolve(state, e);
      events.push(e);
    }
  };
  /** Places an order; returns its id. */
  const place = (order: Omit<OrderRequest, 'symbol'>): string => {
    decide({
      type: 'PlaceOrder',
      data: { owner, order: { symbol: 'BTCUSDT', ...order, idempotencyKey: null, requestHash: null } },
    });
    const placed = events.findLast((e) => e.type === 'OrderPlaced');
    return (placed!.data as { order_id: string }).order_id;
  };
  decide({ type: 'OpenWallet', data: { owner } });
  return {
    ownerId,
    events,
    decide,
    place,
    setPrice: (p: string) => {
      price = p;
    },
    /** Takes the events decided so far (to append them). */
    take: () => events.splice(0),
  };
};

const idleWallets = {
  fill: async () => ({ events: [], state: { openOrders: {} } }),
} as unknown as WalletCommands;

/**
 * Waits until the log's visible head includes `position`. On a shared PostgreSQL server another test's open
 * transaction can hold the visible head back for a moment after an append (src/eventstore/postgres.ts); the engine
 * catches up with the log it sees at start, and follows the rest as it becomes visible.
 */
const visible = (position: LogPosition) =>
  until(async () => comparePositions(await stores.store.headPosition(), position) >= 0, {
    what: 'the appended events visible in the log',
  });

/** Counts the events the engine reads from the log (`readAll` while following the runner). */
const counting = (inner: EventStore) => {
  let read = 0;
  const proxy = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === 'readAll')
        return async (options: ReadAllOptions) => {
          const page = await target.readAll(options);
          read += page.events.length;
          return page;
        };
      return Reflect.get(target, prop, receiver);
    },
  });
  return { store: proxy, read: () => read };
};

const startEngine = async (options: { seeded: boolean; followRunner: boolean; store?: EventStore }) => {
  const engine = new MatchingEngine({
    store: options.store ?? stores.store,
    wallets: idleWallets,
    ticks$: new Subject<PriceTick>(),
    lastTick: () => undefined,
    leadership: soleLeadership(),
    ...(options.seeded ? { seed: () => readIndexSeed(stores.db.db) } : {}),
    ...(options.followRunner ? { folded: runner.onFolded.bind(runner) } : {}),
  });
  engines.push(engine);
  await engine.start();
  return engine;
};

/**
 * What an engine's index holds, and the order a sweep of prices reaches each wallet's orders in (equal levels
 * included). Across wallets the order among equal levels may differ from the log's (the seed reads wallet by
 * wallet): it decides nothing, since a print's participation share and book depth are each wallet's own.
 */
const indexed = (engine: MatchingEngine) => {
  const ids = [...engine.index.orders()].map((o) => o.orderId).sort();
  const sweep = new Map<string, string[]>();
  for (const units of [200e8, 0.01e8]) {
    for (const o of engine.index.reached('BTCUSDT', units)) {
      sweep.set(o.ownerId, [...(sweep.get(o.ownerId) ?? []), o.orderId]);
    }
  }
  return { ids, sweep };
};

describe('matching engine seeded from the orders read model', () => {
  it('indexes what the whole log indexes, reading only the log after the checkpoint', async () => {
    const expectedOpen: string[] = [];
    let last = START;
    for (let w = 0; w < 3; w++) {
      const wallet = walletBuilder();
      wallet.place({ side: 'buy', type: 'market', quantity: '10' });
      // Equal levels: their placement order must survive the seed.
      expectedOpen.push(wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '90' }));
      expectedOpen.push(wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '90' }));
      expectedOpen.push(wallet.place({ side: 'sell', type: 'limit', quantity: '1', price: '110' }));
      expectedOpen.push(wallet.place({ side: 'sell', type: 'stop_loss', quantity: '1', triggerPrice: '80' }));
      expectedOpen.push(
        wallet.place({ side: 'sell', type: 'take_profit', quantity: '1', triggerPrice: '120' }),
      );
      // Finished ones: cancelled, an IOC that could not fill, a limit filled whole.
      const cancelled = wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '95' });
      wallet.decide({ type: 'CancelOrder', data: { orderId: cancelled } });
      wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '50', timeInForce: 'IOC' });
      const filled = wallet.place({ side: 'buy', type: 'limit', quantity: '0.1', price: '99' });
      wallet.decide({
        type: 'FillOrder',
        data: {
          orderId: filled,
          price: '99',
          time: new Date().toISOString(),
          source: 'synthetic',
          volume: '100',
        },
      });
      // Partly filled: 10 % of a print of 5 takes 0.5 of 2; it stays open.
      const partly = wallet.place({ side: 'buy', type: 'limit', quantity: '2', price: '98' });
      wallet.decide({
        type: 'FillOrder',
        data: {
          orderId: partly,
          price: '98',
          time: new Date().toISOString(),
          source: 'synthetic',
          volume: '5',
        },
      });
      expectedOpen.push(partly);
      last = (await stores.store.append(walletStreamId(wallet.ownerId), wallet.take())).position;
    }
    await visible(last);
    await runner.start();
    expect(await runner.waitFor(last, 30_000)).toBe(true);

    const seed = await readIndexSeed(stores.db.db);
    expect(seed?.orders.map((o) => o.orderId).sort()).toEqual([...expectedOpen].sort());

    const fromLog = await startEngine({ seeded: false, followRunner: true });
    const counted = counting(stores.store);
    const seeded = await startEngine({ seeded: true, followRunner: true, store: counted.store });
    expect(counted.read()).toBe(0); // the read model was at the log's head: nothing to read
    expect(indexed(seeded)).toEqual(indexed(fromLog));
    expect(indexed(fromLog).ids).toEqual([...expectedOpen].sort());
  });

  it('applies the log after the checkpoint: orders placed and cancelled while the read model was behind', async () => {
    const wallet = walletBuilder();
    wallet.place({ side: 'buy', type: 'market', quantity: '10' });
    const early = wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '90' });
    const toCancel = wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '91' });
    const first = await stores.store.append(walletStreamId(wallet.ownerId), wallet.take());
    await visible(first.position);
    await runner.start();
    expect(await runner.waitFor(first.position, 30_000)).toBe(true);
    await runner.stop(); // the read model stays at this checkpoint
    const checkpoint = (await readIndexSeed(stores.db.db))!.position;

    wallet.decide({ type: 'CancelOrder', data: { orderId: toCancel } });
    const late = wallet.place({ side: 'sell', type: 'stop_loss', quantity: '1', triggerPrice: '85' });
    const after = await stores.store.append(walletStreamId(wallet.ownerId), wallet.take());
    expect((await readIndexSeed(stores.db.db))!.position).toEqual(checkpoint);
    expect(after.position.commit > checkpoint.commit).toBe(true);

    await visible(after.position);
    const seeded = await startEngine({ seeded: true, followRunner: false });
    expect(indexed(seeded).ids).toEqual([early, late].sort());
  });

  it('reads the whole log when the read model cannot stand in for it (no live generation of this version)', async () => {
    expect(await readIndexSeed(stores.db.db)).toBeUndefined(); // the runner never ran: no generation
    const wallet = walletBuilder();
    const id = wallet.place({ side: 'buy', type: 'limit', quantity: '1', price: '90' });
    await visible((await stores.store.append(walletStreamId(wallet.ownerId), wallet.take())).position);
    const logLength = (await stores.store.readAll({ after: START, maxCount: 100 })).events.length;
    const counted = counting(stores.store);
    const seeded = await startEngine({ seeded: true, followRunner: true, store: counted.store });
    expect(indexed(seeded).ids).toEqual([id]);
    expect(counted.read()).toBe(logLength);
  });
});
