import type { OrderPlacedData } from '../../domain/wallet/events';

/**
 * The `OrderPlaced` data of a limit buy of 0.01 BTC at 30,000 USDT as the wallet records it: it locks 300.30 USDT
 * (price × quantity and the 0.1 % fee on it), has no trigger, no idempotency key and no list. The caller names the
 * order, its session and when it was placed (ISO 8601).
 */
export const limitBuyPlaced = (
  ids: Pick<OrderPlacedData, 'order_id' | 'session_id' | 'placed_at'>,
): OrderPlacedData => ({
  order_id: ids.order_id,
  session_id: ids.session_id,
  symbol: 'BTCUSDT',
  base_asset: 'BTC',
  side: 'buy',
  type: 'limit',
  quantity: '0.01000000',
  price: '30000.00000000',
  trigger_price: null,
  locked_amount: '300.30000000',
  lock_asset: 'USDT',
  fee_rate: '0.001',
  idempotency_key: null,
  request_hash: null,
  placed_at: ids.placed_at,
});
