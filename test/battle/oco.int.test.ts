import { beforeAll, describe, expect, it } from 'vitest';
import type { BattleEvent } from '../../domain/battle/events';
import type { WalletEvent } from '../../domain/wallet/events';
import { bearer, createAgent, registerAccount } from '../accounts/support';
import { useBacktestApp } from '../backtest/http-support';
import { fails, ok } from '../support/api-calls';

/**
 * `POST /battles/{id}/trade/order/oco` (issue 21; docs/trading-rules.md, "Order lists: OCO and bracket"): an OCO of
 * a participant's sandbox in a historical battle, decided by the one wallet decider as live and in a backtest: both
 * legs in one list with one lock, the first leg the candles reach fills and cancels the other (`linked_fill`), a
 * cancel of either leg cancels both (`linked_cancel`), and the decider's validation answers as live. And (issue 21,
 * item 1) `GET /battles` shows the taker and maker fee rates the battle recorded, as its detail does.
 */
const t = useBacktestApp(undefined, { TAKER_FEE_RATE: '0.001', MAKER_FEE_RATE: '0.0002' });
let H: Record<string, string>;
let agentId: string;
/** The second participant a battle needs to start; it does not trade. */
let otherId: string;
let id: string;
let price: number;

/** The sandbox events the battle recorded for the participant (its wallet's events, in order). */
const sandboxEvents = async (): Promise<WalletEvent[]> =>
  (await t.app.services.eventStore.readStream(`battle-${id}`))
    .map((e) => ({ type: e.type, data: e.data }) as BattleEvent)
    .flatMap((e) =>
      e.type === 'BattleSandboxEventRecorded' && e.data.agent_id === agentId
        ? [e.data.event as WalletEvent]
        : [],
    );

const cancelReasons = async () =>
  Object.fromEntries(
    (await sandboxEvents()).flatMap((e) =>
      e.type === 'OrderCancelled' ? [[e.data.order_id, e.data.reason] as const] : [],
    ),
  );

const oco = (tp: number, sl: number) =>
  ok(
    t.app,
    H,
    'POST',
    `/battles/${id}/trade/order/oco`,
    {
      agent_id: agentId,
      symbol: 'BTCUSDT',
      side: 'sell',
      quantity: '0.01',
      take_profit: { price: tp.toFixed(2) },
      stop_loss: { trigger_price: sl.toFixed(2) },
    },
    201,
  );

beforeAll(async () => {
  const owner = await registerAccount(t.app, {}, { plain: true });
  H = bearer(owner);
  agentId = (await createAgent(t.app, owner, { display_name: 'Lists' })).agentId;
  otherId = (await createAgent(t.app, owner, { display_name: 'Idle' })).agentId;
  const b = await ok(
    t.app,
    H,
    'POST',
    '/battles',
    {
      name: 'OCO',
      battle_mode: 'historical',
      backtest_config: {
        start_time: '2022-01-01T00:00:00Z',
        end_time: '2022-01-03T00:00:00Z',
        candle_interval: '1h',
        pairs: ['BTCUSDT'],
      },
    },
    201,
  );
  id = b.battle_id;
  for (const agent of [agentId, otherId])
    await ok(t.app, H, 'POST', `/battles/${id}/participants`, { agent_id: agent }, 201);
  await ok(t.app, H, 'POST', `/battles/${id}/start`);
  price = Number((await ok(t.app, H, 'GET', `/battles/${id}/market/prices`)).prices.BTCUSDT);
  const bought = {
    agent_id: agentId,
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'market',
    quantity: '0.02',
  };
  await ok(t.app, H, 'POST', `/battles/${id}/trade/order`, bought, 201);
}, 300_000);

describe('an OCO in a historical battle', () => {
  it('places both legs in one list; cancelling either leg cancels both', async () => {
    const placed = await oco(price * 1.5, price * 0.5);
    expect(placed).toMatchObject({ list_kind: 'oco' });
    expect(placed.orders.map((o: any) => [o.list_role, o.status, o.order_list_id, o.locked_amount])).toEqual([
      ['take_profit', 'pending', placed.order_list_id, '0.01000000'],
      ['stop_loss', 'pending', placed.order_list_id, '0.01000000'],
    ]);
    const [tp, sl] = placed.orders as { order_id: string }[];
    await ok(t.app, H, 'DELETE', `/battles/${id}/trade/order/${sl!.order_id}`);
    expect(await cancelReasons()).toMatchObject({ [sl!.order_id]: 'user', [tp!.order_id]: 'linked_cancel' });
    await fails(t.app, H, 'DELETE', `/battles/${id}/trade/order/${tp!.order_id}`, 404, 'ORDER_NOT_FOUND');
  });

  it('the first leg the candles reach fills and cancels the other (linked_fill)', async () => {
    // A take-profit just above the price (a later candle's high reaches it), a stop far below (none does).
    const placed = await oco(price * 1.001, price * 0.5);
    const [tp, sl] = placed.orders as { order_id: string }[];
    await ok(t.app, H, 'POST', `/battles/${id}/step/batch`, { steps: 47 });
    const events = await sandboxEvents();
    const filled = events.flatMap((e) => (e.type === 'OrderFilled' ? [e.data.order_id] : []));
    expect(filled).toContain(tp!.order_id);
    expect(filled).not.toContain(sl!.order_id);
    expect((await cancelReasons())[sl!.order_id]).toBe('linked_fill');
  });

  it('refuses legs on the wrong sides as live (VALIDATION_ERROR) and a live battle (BATTLE_INVALID_STATE)', async () => {
    await fails(t.app, H, 'POST', `/battles/${id}/trade/order/oco`, 422, 'VALIDATION_ERROR', {
      agent_id: agentId,
      symbol: 'BTCUSDT',
      side: 'sell',
      quantity: '0.01',
      take_profit: { price: (price * 0.5).toFixed(2) },
      stop_loss: { trigger_price: (price * 0.6).toFixed(2) },
    });
    const live = await ok(t.app, H, 'POST', '/battles', { name: 'Live', battle_mode: 'live' }, 201);
    for (const agent of [agentId, otherId])
      await ok(t.app, H, 'POST', `/battles/${live.battle_id}/participants`, { agent_id: agent }, 201);
    await ok(t.app, H, 'POST', `/battles/${live.battle_id}/start`);
    await fails(t.app, H, 'POST', `/battles/${live.battle_id}/trade/order/oco`, 409, 'BATTLE_INVALID_STATE', {
      agent_id: agentId,
      symbol: 'BTCUSDT',
      side: 'sell',
      quantity: '0.01',
      take_profit: { price: '100000' },
      stop_loss: { trigger_price: '1000' },
    });
  });
});

describe('battle fee rates', () => {
  it('GET /battles shows the taker and maker rates the battle recorded, as the detail does', async () => {
    const detail = await ok(t.app, H, 'GET', `/battles/${id}`);
    expect(detail).toMatchObject({ fee_rate: '0.00100000', maker_fee_rate: '0.00020000' });
    const list = await ok(t.app, H, 'GET', '/battles?limit=200');
    const row = list.battles.find((b: { battle_id: string }) => b.battle_id === id);
    expect(row).toMatchObject({ fee_rate: '0.00100000', maker_fee_rate: '0.00020000' });
  });
});
