import type { WebhookCommands } from '../../commands/webhooks';
import { deliveryIdOf, testDedupeKey } from '../../domain/webhook/catalog';
import { type WebhookActor, webhookNotFound } from '../../domain/webhook/decide';
import { WEBHOOK_TEST_EVENT, type WebhookSettings } from '../../domain/webhook/events';
import {
  type DeliveryStatus,
  type DeliveryView,
  listDeliveries as findDeliveries,
  getWebhook as findWebhook,
  listWebhooks as findWebhooks,
  type WebhookView,
} from '../../queries/webhooks';
import { assertAgentActive } from '../auth/principal';
import { checkOutboundUrl } from '../net/outbound-url';
import type { Services } from '../services';
import type { Call } from './call';
import { commandMeta } from './caller';
import { awaitReadModels } from './read-your-writes';

declare module '../services' {
  interface Services {
    /** Webhooks (docs/webhooks.md): the commands; the delivery worker runs beside the projections. */
    webhooks?: WebhookServices;
  }
}

/** The webhook capability's member of {@link Services} (installed by `src/webhooks/install.ts`). */
export interface WebhookServices {
  commands: WebhookCommands;
}

/**
 * Webhook use cases (issue 17, item 11; docs/webhooks.md). Who manages which webhooks: the account's credentials
 * (JWT, or the account key, without `X-Agent-Id`) manage every webhook of the account, which receive the events of
 * the account's own wallet and of all its agents; an agent's credential (its key, or the account's credential
 * with `X-Agent-Id`) registers webhooks of that agent, which receive only that agent's events, and manages only
 * those. A webhook the caller may not use is `NOT_FOUND` 404 whether unknown, deleted or another's. Commands
 * answer after the read models include them (read your writes).
 */

const commands = (services: Services): WebhookCommands => {
  if (!services.webhooks)
    throw Object.assign(new Error('webhook services are not installed'), { statusCode: 500 });
  return services.webhooks.commands;
};

/** The caller as a webhook actor: the account, and the scoped agent if any. */
const actorOf = (call: Call): WebhookActor => ({
  accountId: call.caller.accountId,
  agentId: call.caller.agentId ?? null,
});

/** Applies the SSRF rule to a URL a client sent (`VALIDATION_ERROR` on `url`); returns it normalised. */
const checkedUrl = async (call: Call, url: string): Promise<string> =>
  (await checkOutboundUrl(url, { allowPrivate: call.services.config.WEBHOOKS_ALLOW_PRIVATE })).toString();

/** An owned webhook from the read model, or `NOT_FOUND`. */
const ownedWebhook = async (call: Call, webhookId: string): Promise<WebhookView> => {
  const webhook = await findWebhook(call.services.database.db, actorOf(call), webhookId);
  if (!webhook) throw webhookNotFound();
  return webhook;
};

/** What `createWebhook` takes: the settings, `description` and `active` optional. */
export type WebhookInput = Pick<WebhookSettings, 'url' | 'event_types'> &
  Partial<Pick<WebhookSettings, 'description' | 'active'>>;

/** Sorted, without duplicates: the order a client lists event types in carries no meaning. */
const normalizedTypes = (types: WebhookSettings['event_types']) => [...new Set(types)].sort();

/**
 * Registers a webhook for the caller (see the ownership rule above): URL checked against the SSRF rule, a fresh
 * signing secret, returned with the webhook this once (only its preview later).
 */
export const createWebhook = async (
  call: Call,
  input: WebhookInput,
): Promise<{ webhook: WebhookView; secret: string }> => {
  assertAgentActive(call.caller);
  const settings: WebhookSettings = {
    url: await checkedUrl(call, input.url),
    event_types: normalizedTypes(input.event_types),
    description: input.description ?? null,
    active: input.active ?? true,
  };
  const result = await commands(call.services).register(actorOf(call), settings, commandMeta(call));
  await awaitReadModels(call, result.position);
  return { webhook: await ownedWebhook(call, result.webhook.webhookId), secret: result.secret };
};

/** The caller's webhooks, oldest first. */
export const listWebhooks = (call: Call): Promise<WebhookView[]> =>
  findWebhooks(call.services.database.db, actorOf(call));

/** One of the caller's webhooks. */
export const getWebhook = (call: Call, webhookId: string): Promise<WebhookView> =>
  ownedWebhook(call, webhookId);

/** Changes the supplied settings (a new URL is checked like at registration); the secret stays. */
export const updateWebhook = async (
  call: Call,
  webhookId: string,
  changes: Partial<WebhookSettings>,
): Promise<WebhookView> => {
  assertAgentActive(call.caller);
  await ownedWebhook(call, webhookId);
  const checked: Partial<WebhookSettings> = {
    ...changes,
    ...(changes.url !== undefined ? { url: await checkedUrl(call, changes.url) } : {}),
    ...(changes.event_types !== undefined ? { event_types: normalizedTypes(changes.event_types) } : {}),
  };
  const result = await commands(call.services).update(actorOf(call), webhookId, checked, commandMeta(call));
  await awaitReadModels(call, result.position);
  return ownedWebhook(call, webhookId);
};

/** Deletes one of the caller's webhooks: its pending deliveries are dropped, no new ones are made. */
export const deleteWebhook = async (call: Call, webhookId: string): Promise<void> => {
  await ownedWebhook(call, webhookId);
  const result = await commands(call.services).remove(actorOf(call), webhookId, commandMeta(call));
  await awaitReadModels(call, result.position);
};

/** A test delivery asked for: its id (list it with the webhook's deliveries) and type. */
export interface TestDelivery {
  deliveryId: string;
  webhookId: string;
  eventType: typeof WEBHOOK_TEST_EVENT;
}

/**
 * Asks for a `webhook.test` delivery to one of the caller's webhooks (active or not). It is recorded in the log and
 * delivered by the worker like any event (signed, retried), so it shows in the deliveries list shortly after.
 */
export const testWebhook = async (call: Call, webhookId: string): Promise<TestDelivery> => {
  await ownedWebhook(call, webhookId);
  const result = await commands(call.services).requestTest(actorOf(call), webhookId, commandMeta(call));
  await awaitReadModels(call, result.position);
  return {
    deliveryId: deliveryIdOf(webhookId, testDedupeKey(result.testId)),
    webhookId,
    eventType: WEBHOOK_TEST_EVENT,
  };
};

/** One of the caller's webhooks' deliveries, newest first, with the total. */
export const listWebhookDeliveries = async (
  call: Call,
  webhookId: string,
  query: { limit: number; offset: number; status?: DeliveryStatus },
): Promise<{ deliveries: DeliveryView[]; total: number }> => {
  await ownedWebhook(call, webhookId);
  return findDeliveries(call.services.database.db, webhookId, query);
};
