import { describe, expect, it } from 'vitest';
import { foldEvents } from '../../domain/shared/decider';
import { deliveryIdOf, streamOwnerOf, webhookEventOf, webhookReceives } from '../../domain/webhook/catalog';
import { decideWebhook, initialWebhookState, webhookDecider } from '../../domain/webhook/decide';
import { nextAttemptAt } from '../../src/webhooks/backoff';
import { signDelivery, verifyDelivery } from '../../src/webhooks/signature';

/** The pure parts of webhooks: the event catalogue, the decider, the schedule and the signature (docs/webhooks.md). */
const ev = (streamId: string, type: string, data: Record<string, unknown> = {}, eventId = 'e1') => ({
  eventId,
  streamId,
  type,
  data,
});

describe('the event catalogue', () => {
  it('maps wallet fills and cancels, completed backtests and battles; not sandbox orders', () => {
    expect(webhookEventOf(ev('wallet-a', 'OrderFilled'))).toEqual({ type: 'order.filled', dedupeKey: 'e1' });
    expect(webhookEventOf(ev('wallet-a', 'OrderCancelled'))?.type).toBe('order.cancelled');
    expect(webhookEventOf(ev('backtest-bt_1', 'BacktestCompleted'))?.type).toBe('backtest.completed');
    expect(webhookEventOf(ev('battle-b', 'BattleCompleted'))?.type).toBe('battle.completed');
    expect(webhookEventOf(ev('backtest-bt_1', 'OrderFilled'))).toBeUndefined();
    expect(webhookEventOf(ev('backtest-bt_1', 'BacktestCancelled'))).toBeUndefined();
    expect(webhookEventOf(ev('wallet-a', 'OrderPlaced'))).toBeUndefined();
    expect(webhookEventOf(ev('wallet-a', 'OrderRejected', { rule: 'max_open_orders' }))).toBeUndefined();
  });

  it('trips the breaker once per wallet session and UTC day', () => {
    const rejected = (eventId: string, at: string, session = 's1') =>
      webhookEventOf(
        ev(
          'wallet-a',
          'OrderRejected',
          { rule: 'daily_loss_limit', session_id: session, rejected_at: at },
          eventId,
        ),
      );
    const first = rejected('e1', '2026-11-25T10:00:00.000Z');
    expect(first?.type).toBe('risk.daily_loss_breaker_tripped');
    expect(rejected('e2', '2026-11-25T23:59:59.000Z')?.dedupeKey).toBe(first?.dedupeKey);
    expect(rejected('e3', '2026-11-26T00:00:01.000Z')?.dedupeKey).not.toBe(first?.dedupeKey);
    expect(rejected('e4', '2026-11-25T11:00:00.000Z', 's2')?.dedupeKey).not.toBe(first?.dedupeKey);
  });

  it('knows stream owners and who receives what', () => {
    const agentWallet = streamOwnerOf(
      ev('wallet-g', 'WalletOpened', { owner_id: 'g', owner_type: 'agent', account_id: 'acc' }),
    );
    expect(agentWallet).toEqual({ accountId: 'acc', agentId: 'g' });
    expect(streamOwnerOf(ev('battle-b', 'BattleCreated', { account_id: 'acc' }))).toEqual({
      accountId: 'acc',
      agentId: null,
    });
    expect(streamOwnerOf(ev('wallet-g', 'OrderFilled', { account_id: 'acc' }))).toBeUndefined();
    expect(webhookReceives({ accountId: 'acc', agentId: null }, agentWallet!)).toBe(true);
    expect(webhookReceives({ accountId: 'acc', agentId: 'g' }, agentWallet!)).toBe(true);
    expect(webhookReceives({ accountId: 'acc', agentId: 'h' }, agentWallet!)).toBe(false);
    expect(webhookReceives({ accountId: 'other', agentId: null }, agentWallet!)).toBe(false);
    expect(webhookReceives({ accountId: 'acc', agentId: 'g' }, { accountId: 'acc', agentId: null })).toBe(
      false,
    );
  });

  it('names a delivery by webhook and event, as a UUID', () => {
    const id = deliveryIdOf('w1', 'e1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryIdOf('w1', 'e1')).toBe(id);
    expect(deliveryIdOf('w2', 'e1')).not.toBe(id);
  });
});

describe('the webhook decider', () => {
  const ctx = { now: new Date('2026-11-25T12:00:00Z'), newId: () => 'id' };
  const settings = {
    url: 'https://x.example/h',
    event_types: ['order.filled' as const],
    description: null,
    active: true,
  };
  const registered = foldEvents(
    webhookDecider,
    decideWebhook(
      {
        type: 'RegisterWebhook',
        data: {
          accountId: 'acc',
          agentId: 'g',
          webhookId: 'w',
          settings,
          secretCiphertext: 'v1:x',
          secretPreview: 'whsec_...',
        },
      },
      initialWebhookState(),
      ctx,
    ),
  );

  it('lets the account and the registering agent act, nobody else', () => {
    for (const actor of [
      { accountId: 'acc', agentId: null },
      { accountId: 'acc', agentId: 'g' },
    ])
      expect(decideWebhook({ type: 'DeleteWebhook', data: actor }, registered, ctx)).toHaveLength(1);
    for (const actor of [
      { accountId: 'acc', agentId: 'h' },
      { accountId: 'other', agentId: null },
    ])
      expect(() => decideWebhook({ type: 'DeleteWebhook', data: actor }, registered, ctx)).toThrow(
        /no webhook/,
      );
  });

  it('records only changed settings, and nothing for no change', () => {
    const actor = { accountId: 'acc', agentId: null };
    expect(
      decideWebhook(
        { type: 'UpdateWebhook', data: { ...actor, changes: { active: true } } },
        registered,
        ctx,
      ),
    ).toEqual([]);
    expect(
      decideWebhook(
        { type: 'UpdateWebhook', data: { ...actor, changes: { active: false, url: settings.url } } },
        registered,
        ctx,
      ),
    ).toEqual([
      {
        type: 'WebhookUpdated',
        data: { webhook_id: 'w', changes: { active: false }, updated_at: ctx.now.toISOString() },
      },
    ]);
    const deleted = foldEvents(
      webhookDecider,
      decideWebhook({ type: 'DeleteWebhook', data: actor }, registered, ctx),
      registered,
    );
    expect(() =>
      decideWebhook({ type: 'RequestWebhookTest', data: { ...actor, testId: 't' } }, deleted, ctx),
    ).toThrow(/no webhook/);
  });
});

describe('retries and signatures', () => {
  it('doubles the wait after each failure up to the maximum, and stops after the last attempt', () => {
    const schedule = { baseMs: 400, maxMs: 1_000, maxAttempts: 4 };
    expect([1, 2, 3].map((n) => nextAttemptAt(schedule, n, 0)?.getTime())).toEqual([400, 800, 1_000]);
    expect(nextAttemptAt(schedule, 4, 0)).toBeUndefined();
  });

  it('signs t.body with HMAC-SHA256 and verifies within the tolerance only', () => {
    const body = '{"id":"d","type":"webhook.test"}';
    const header = signDelivery('whsec_k', body, 1_000_000);
    expect(header).toMatch(/^t=1000000,v1=[0-9a-f]{64}$/);
    expect(verifyDelivery('whsec_k', body, header, 1_000_000)).toBe(true);
    expect(verifyDelivery('whsec_k', `${body} `, header, 1_000_000)).toBe(false);
    expect(verifyDelivery('whsec_other', body, header, 1_000_000)).toBe(false);
    expect(verifyDelivery('whsec_k', body, header, 1_000_000 + 301_000)).toBe(false);
  });
});
