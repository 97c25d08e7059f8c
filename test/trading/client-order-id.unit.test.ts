import { describe, expect, it } from 'vitest';
import type { WalletCommand } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import { deciderSpec } from '../support/decider-spec';
import { context, dataOf, opened, place, run } from './support';

/**
 * Client order ids (issue 21, item 2; docs/trading-rules.md, "Client order ids"), decided by the wallet decider:
 * recorded on the order, refused when malformed, unique among the wallet's open orders and free again once the
 * order holding it is no longer open.
 */

const spec = deciderSpec(walletDecider);

const limitBuy = (clientOrderId?: string, price = '30000'): WalletCommand =>
  place({
    type: 'limit',
    price,
    quantity: '0.01',
    ...(clientOrderId !== undefined ? { clientOrderId } : {}),
  });

describe('client_order_id', () => {
  it('is recorded on the placed order and on the open order of the state; absent, nothing is recorded', () => {
    const { produced, state } = run([limitBuy('bot-1.a_B'), limitBuy()], context(), opened());
    expect(dataOf(produced[0]!, 'OrderPlaced').client_order_id).toBe('bot-1.a_B');
    expect('client_order_id' in dataOf(produced[1]!, 'OrderPlaced')).toBe(false);
    expect(Object.values(state.openOrders).map((o) => o.clientOrderId)).toEqual(['bot-1.a_B', null]);
  });

  it('is recorded on a rejected order', () => {
    const { last } = run([place({ quantity: '100', clientOrderId: 'too-big' })], context(), opened());
    expect(dataOf(last, 'OrderRejected').client_order_id).toBe('too-big');
  });

  it('another open order with the same id is CONFLICT and records nothing', () => {
    const { events } = run([limitBuy('dup')], context(), opened());
    spec
      .given(events)
      .when(limitBuy('dup', '31000'), context())
      .thenThrows('CONFLICT', { reason: 'duplicate_client_order_id', field: 'client_order_id' });
  });

  it('is free again once the order holding it was cancelled or filled', () => {
    const first = run([limitBuy('again')], context(), opened());
    const orderId = dataOf(first.last, 'OrderPlaced').order_id;
    const cancelled = run(
      [{ type: 'CancelOrder', data: { orderId } }, limitBuy('again')],
      context(),
      first.events,
    );
    expect(dataOf(cancelled.last, 'OrderPlaced').client_order_id).toBe('again');
    // A market order never stays open: its id is free as soon as it filled.
    const market = run(
      [place({ clientOrderId: 'mkt' }), place({ clientOrderId: 'mkt' })],
      context(),
      opened(),
    );
    expect(market.produced.map((p) => dataOf(p, 'OrderFilled').order_id)).toHaveLength(2);
  });

  it('outside 1 to 36 characters of a-zA-Z0-9-_. is VALIDATION_ERROR', () => {
    for (const bad of ['with space', 'x'.repeat(37), 'ünï', 'a/b']) {
      spec
        .given(opened())
        .when(limitBuy(bad), context())
        .thenThrows('VALIDATION_ERROR', { field: 'client_order_id' });
    }
    const { last } = run([limitBuy('x'.repeat(36))], context(), opened());
    expect(dataOf(last, 'OrderPlaced').client_order_id).toHaveLength(36);
  });
});
