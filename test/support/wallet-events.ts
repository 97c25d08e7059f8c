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

/**
 * The two events that open an agent's wallet as the log records them, stamped `at` (ISO 8601, also their
 * `metadata.occurred_at`): `WalletOpened` for `owner` of `accountId`, then `SessionStarted` 'opened' of `session`
 * with 10,000 USDT. For tests that write a wallet's stream directly.
 */
export const agentWalletOpening = (ids: {
  owner: string;
  accountId: string;
  session: string;
  at: string;
}) => [
  {
    type: 'WalletOpened',
    data: { owner_id: ids.owner, owner_type: 'agent', account_id: ids.accountId, opened_at: ids.at },
    metadata: { occurred_at: ids.at },
  },
  {
    type: 'SessionStarted',
    data: {
      session_id: ids.session,
      starting_balance: '10000.00000000',
      owner_session_id: ids.session,
      reason: 'opened',
      started_at: ids.at,
    },
    metadata: { occurred_at: ids.at },
  },
];
