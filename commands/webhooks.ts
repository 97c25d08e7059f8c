import { randomBytes, randomUUID } from 'node:crypto';
import {
  type WebhookActor,
  type WebhookCommand,
  type WebhookState,
  webhookDecider,
} from '../domain/webhook/decide';
import { type WebhookSettings, webhookStreamId } from '../domain/webhook/events';
import type { EventStore, LogPosition } from '../ports/event-store';
import type { Keyring } from '../ports/keyring';
import { createCommandHandler } from './handler';
import { appendedPosition, handleLive } from './live';
import type { CommandMeta } from './metadata';

/** A webhook command's outcome. */
export interface WebhookCommandResult {
  webhook: WebhookState;
  /** Position of the new event; absent when nothing changed. */
  position?: LogPosition;
}

/** Webhook commands (the write side of webhooks, docs/webhooks.md). */
export interface WebhookCommands {
  /**
   * Registers a webhook with a fresh signing secret, returned here in plaintext for the only time (the stream
   * holds it encrypted under the server key, bound to the webhook id).
   */
  register(
    actor: WebhookActor,
    settings: WebhookSettings,
    meta: CommandMeta,
  ): Promise<WebhookCommandResult & { secret: string }>;
  /** Changes the supplied settings; `NOT_FOUND` for a webhook the actor may not use. */
  update(
    actor: WebhookActor,
    webhookId: string,
    changes: Partial<WebhookSettings>,
    meta: CommandMeta,
  ): Promise<WebhookCommandResult>;
  /** Deletes the webhook (no delivery from then on); `NOT_FOUND` as above. */
  remove(actor: WebhookActor, webhookId: string, meta: CommandMeta): Promise<WebhookCommandResult>;
  /** Asks for a test delivery; resolves to its test id. */
  requestTest(
    actor: WebhookActor,
    webhookId: string,
    meta: CommandMeta,
  ): Promise<WebhookCommandResult & { testId: string }>;
}

/** A signing secret: `whsec_` and 32 random bytes (base64url). */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** Builds the webhook commands over the event store and the server keyring. */
export const createWebhookCommands = (deps: { store: EventStore; keyring: Keyring }): WebhookCommands => {
  const handler = createCommandHandler(deps.store, webhookDecider, { cacheSize: 1_000 });
  const run = async (webhookId: string, command: WebhookCommand, meta: CommandMeta) => {
    const result = await handleLive(handler, webhookStreamId(webhookId), command, meta);
    return { webhook: result.state, ...appendedPosition(result) };
  };
  return {
    async register(actor, settings, meta) {
      const webhookId = randomUUID();
      const secret = newSecret();
      const result = await run(
        webhookId,
        {
          type: 'RegisterWebhook',
          data: {
            ...actor,
            webhookId,
            settings,
            secretCiphertext: deps.keyring.encrypt(secret, webhookId),
            secretPreview: `${secret.slice(0, 12)}...`,
          },
        },
        meta,
      );
      return { ...result, secret };
    },
    update: (actor, webhookId, changes, meta) =>
      run(webhookId, { type: 'UpdateWebhook', data: { ...actor, changes } }, meta),
    remove: (actor, webhookId, meta) => run(webhookId, { type: 'DeleteWebhook', data: actor }, meta),
    async requestTest(actor, webhookId, meta) {
      const testId = randomUUID();
      const result = await run(webhookId, { type: 'RequestWebhookTest', data: { ...actor, testId } }, meta);
      return { ...result, testId };
    },
  };
};
