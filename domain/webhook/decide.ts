import type { BaseContext, Decider } from '../shared/decider';
import { DomainError } from '../shared/errors';
import type { WebhookEvent, WebhookSettings } from './events';

/** Who acts on a webhook: the account, and the agent when an agent key (or `X-Agent-Id`) calls. */
export interface WebhookActor {
  accountId: string;
  agentId: string | null;
}

/** Commands of the webhook aggregate (`webhook-{id}`). */
export type WebhookCommand =
  | {
      type: 'RegisterWebhook';
      data: WebhookActor & {
        webhookId: string;
        settings: WebhookSettings;
        secretCiphertext: string;
        secretPreview: string;
      };
    }
  | { type: 'UpdateWebhook'; data: WebhookActor & { changes: Partial<WebhookSettings> } }
  | { type: 'DeleteWebhook'; data: WebhookActor }
  | { type: 'RequestWebhookTest'; data: WebhookActor & { testId: string } };

/** The state of one webhook stream. */
export interface WebhookState {
  status: 'none' | 'registered' | 'deleted';
  webhookId: string;
  accountId: string;
  agentId: string | null;
  settings: WebhookSettings;
  secretCiphertext: string;
}

/** The state before `WebhookRegistered`. */
export const initialWebhookState = (): WebhookState => ({
  status: 'none',
  webhookId: '',
  accountId: '',
  agentId: null,
  settings: { url: '', event_types: [], description: null, active: true },
  secretCiphertext: '',
});

/** Folds one webhook event. */
export const evolveWebhook = (state: WebhookState, event: WebhookEvent): WebhookState => {
  switch (event.type) {
    case 'WebhookRegistered': {
      const d = event.data;
      return {
        status: 'registered',
        webhookId: d.webhook_id,
        accountId: d.account_id,
        agentId: d.agent_id,
        settings: { url: d.url, event_types: d.event_types, description: d.description, active: d.active },
        secretCiphertext: d.secret_ciphertext,
      };
    }
    case 'WebhookUpdated':
      return { ...state, settings: { ...state.settings, ...event.data.changes } };
    case 'WebhookDeleted':
      return { ...state, status: 'deleted' };
    case 'WebhookTestRequested':
      return state;
  }
};

/**
 * The error for a webhook id the caller may not use: `NOT_FOUND` 404 whether it never existed, was deleted, or
 * belongs to another account or agent (ARCHITECTURE §12: a foreign id cannot be told from an unknown one).
 */
export const webhookNotFound = (): DomainError => new DomainError('NOT_FOUND', 'no webhook with this id');

/**
 * Ownership of webhooks (docs/webhooks.md, "Who manages which webhooks"): the account's credentials (JWT or
 * account key without `X-Agent-Id`) manage every webhook of the account; an agent's credential only the webhooks
 * registered with it. Throws {@link webhookNotFound} otherwise.
 */
export const requireWebhookOwner = (
  state: Pick<WebhookState, 'status' | 'accountId' | 'agentId'>,
  actor: WebhookActor,
): void => {
  if (state.status !== 'registered' || state.accountId !== actor.accountId) throw webhookNotFound();
  if (actor.agentId !== null && state.agentId !== actor.agentId) throw webhookNotFound();
};

/**
 * Decides a webhook command. Register only on an empty stream (`CONFLICT`); every other command needs an owned,
 * not deleted webhook ({@link requireWebhookOwner}); an update records only changed fields (nothing when none
 * does); delete records `WebhookDeleted` once; a test request always records one `WebhookTestRequested`. The
 * URL's SSRF check and the input's shape are the application's (they need DNS), before the command.
 */
export const decideWebhook = (
  command: WebhookCommand,
  state: WebhookState,
  context: BaseContext,
): WebhookEvent[] => {
  const now = context.now.toISOString();
  if (command.type === 'RegisterWebhook') {
    if (state.status !== 'none') throw new DomainError('CONFLICT', 'webhook already exists');
    const d = command.data;
    return [
      {
        type: 'WebhookRegistered',
        data: {
          webhook_id: d.webhookId,
          account_id: d.accountId,
          agent_id: d.agentId,
          ...d.settings,
          secret_ciphertext: d.secretCiphertext,
          secret_preview: d.secretPreview,
          registered_at: now,
        },
      },
    ];
  }
  requireWebhookOwner(state, command.data);
  switch (command.type) {
    case 'UpdateWebhook': {
      const changes: Record<string, unknown> = {};
      for (const [field, value] of Object.entries(command.data.changes)) {
        if (value === undefined) continue;
        const before = state.settings[field as keyof WebhookSettings];
        if (JSON.stringify(before) !== JSON.stringify(value)) changes[field] = value;
      }
      if (Object.keys(changes).length === 0) return [];
      return [
        {
          type: 'WebhookUpdated',
          data: {
            webhook_id: state.webhookId,
            changes: changes as Partial<WebhookSettings>,
            updated_at: now,
          },
        },
      ];
    }
    case 'DeleteWebhook':
      return [{ type: 'WebhookDeleted', data: { webhook_id: state.webhookId, deleted_at: now } }];
    case 'RequestWebhookTest':
      return [
        {
          type: 'WebhookTestRequested',
          data: { webhook_id: state.webhookId, test_id: command.data.testId, requested_at: now },
        },
      ];
  }
};

/** The webhook decider (`webhook-{webhook_id}` streams). */
export const webhookDecider: Decider<WebhookState, WebhookCommand, WebhookEvent, BaseContext> = {
  initialState: initialWebhookState,
  evolve: evolveWebhook,
  decide: decideWebhook,
};
