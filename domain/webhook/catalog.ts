import { createHash } from 'node:crypto';
import { WEBHOOK_TEST_EVENT, type WebhookEventType } from './events';

/** The part of a recorded ledger event the catalogue reads. */
export interface LedgerEventInput {
  eventId: string;
  streamId: string;
  type: string;
  data: unknown;
}

/**
 * A ledger event as a webhook event: its webhook type and the key that makes its delivery unique per webhook
 * (the source event's id; for the breaker, the wallet session and UTC day, so it is delivered once per day).
 */
export interface WebhookEventMatch {
  type: WebhookEventType;
  dedupeKey: string;
}

const field = (data: unknown, name: string): unknown =>
  data !== null && typeof data === 'object' ? (data as Record<string, unknown>)[name] : undefined;

/**
 * Which webhook event a ledger event is (docs/webhooks.md, "Event types"; the ledger events are
 * `docs/events.md`'s), or undefined:
 * - `OrderFilled` of a `wallet-` stream → `order.filled` (every fill, a reset's closing fills too);
 * - `OrderCancelled` of a `wallet-` stream → `order.cancelled` (any reason);
 * - `OrderRejected` of a `wallet-` stream with rule `daily_loss_limit` → `risk.daily_loss_breaker_tripped`, once
 *   per wallet session and UTC day (the breaker has no event of its own: its first refusal of the day trips it);
 * - `BacktestCompleted` of a `backtest-` stream → `backtest.completed` (cancelled and failed backtests are not);
 * - `BattleCompleted` of a `battle-` stream → `battle.completed`.
 * Sandbox wallet events inside backtest and battle streams are not order events of the account.
 */
export const webhookEventOf = (event: LedgerEventInput): WebhookEventMatch | undefined => {
  const { streamId, type, data, eventId } = event;
  if (streamId.startsWith('wallet-')) {
    if (type === 'OrderFilled') return { type: 'order.filled', dedupeKey: eventId };
    if (type === 'OrderCancelled') return { type: 'order.cancelled', dedupeKey: eventId };
    if (type === 'OrderRejected' && field(data, 'rule') === 'daily_loss_limit') {
      const day = String(field(data, 'rejected_at') ?? '').slice(0, 10);
      return {
        type: 'risk.daily_loss_breaker_tripped',
        dedupeKey: `breaker:${streamId}:${String(field(data, 'session_id'))}:${day}`,
      };
    }
    return undefined;
  }
  if (streamId.startsWith('backtest-') && type === 'BacktestCompleted')
    return { type: 'backtest.completed', dedupeKey: eventId };
  if (streamId.startsWith('battle-') && type === 'BattleCompleted')
    return { type: 'battle.completed', dedupeKey: eventId };
  return undefined;
};

/** Whose a stream is: the account, and the agent for an agent's wallet or backtest. */
export interface StreamOwner {
  accountId: string;
  agentId: string | null;
}

/**
 * The owner a stream's first event names, or undefined when the event names none: `WalletOpened` (`wallet-`),
 * `BacktestCreated` (`backtest-`, the session's agent), `BattleCreated` (`battle-`, the account).
 */
export const streamOwnerOf = (event: LedgerEventInput): StreamOwner | undefined => {
  const accountId = field(event.data, 'account_id');
  if (typeof accountId !== 'string') return undefined;
  switch (event.type) {
    case 'WalletOpened':
      return {
        accountId,
        agentId: field(event.data, 'owner_type') === 'agent' ? String(field(event.data, 'owner_id')) : null,
      };
    case 'BacktestCreated': {
      const agentId = field(event.data, 'agent_id');
      return { accountId, agentId: typeof agentId === 'string' ? agentId : null };
    }
    case 'BattleCreated':
      return { accountId, agentId: null };
    default:
      return undefined;
  }
};

/**
 * Whether a webhook receives an event of `owner`: the account's webhooks (no agent) receive the events of the
 * account and of all its agents; an agent's webhook only that agent's (a battle belongs to the account alone).
 */
export const webhookReceives = (
  webhook: { accountId: string; agentId: string | null },
  owner: StreamOwner,
): boolean =>
  webhook.accountId === owner.accountId && (webhook.agentId === null || webhook.agentId === owner.agentId);

/** The dedupe key of a test delivery. */
export const testDedupeKey = (testId: string): string => `${WEBHOOK_TEST_EVENT}:${testId}`;

/**
 * The id of the delivery of one event (its dedupe key) to one webhook: a UUID (version 8 layout) from the SHA-256 of
 * both, so the subscriber and `POST /webhooks/{id}/test` name the same delivery without asking each other.
 */
export const deliveryIdOf = (webhookId: string, dedupeKey: string): string => {
  const h = createHash('sha256').update(`${webhookId}\n${dedupeKey}`).digest('hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
};
