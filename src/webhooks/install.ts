import { createWebhookCommands } from '../../commands/webhooks';
import type { WebhookServices } from '../application/webhooks';
import { createLeadership } from '../matching/leader';
import type { Services } from '../services';
import { createDispatcher, type Dispatcher } from './dispatcher';
import { createWebhookSubscriber, type WebhookSubscriber } from './subscriber';

/** The advisory lock key of the webhook delivery worker (one delivering process at a time). */
export const WEBHOOK_WORKER_LOCK_KEY = 7_208_114_305_551_011n;

/** Deliveries in flight at once. */
const CONCURRENCY = 8;

/** What {@link installWebhooks} returns to the runtime. */
export interface WebhookWorker {
  /** Starts competing for the delivery role (when `deliver` was asked for). */
  start(): Promise<void>;
  /** Stops the subscriber after its page and waits for the deliveries in flight. */
  stop(): Promise<void>;
}

/**
 * Wires webhooks into the runtime (docs/webhooks.md): the commands for the use cases (every API process), and,
 * with `deliver` (the processes that run projections), the delivery worker: the subscriber that enqueues from the
 * log and the dispatcher that sends, run by one process at a time (a PostgreSQL advisory-lock leadership; always
 * on PGlite). Needs the identity capability's keyring (the server key).
 */
export const installWebhooks = (services: Services, options: { deliver: boolean }): WebhookWorker => {
  const keyring = services.keyring;
  if (!keyring) throw new Error('webhooks need the keyring: install identity first');
  const webhooks: WebhookServices = {
    commands: createWebhookCommands({ store: services.eventStore, keyring }),
  };
  services.webhooks = webhooks;
  if (!options.deliver) return { start: async () => {}, stop: async () => {} };

  const { config, logger } = services;
  const dispatcher: Dispatcher = createDispatcher({
    db: services.database.db,
    keyring,
    logger,
    settings: {
      baseMs: config.WEBHOOKS_RETRY_BASE_MS,
      maxMs: config.WEBHOOKS_RETRY_MAX_MS,
      maxAttempts: config.WEBHOOKS_MAX_ATTEMPTS,
      timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
      pollMs: config.WEBHOOKS_POLL_MS,
      concurrency: CONCURRENCY,
      allowPrivate: config.WEBHOOKS_ALLOW_PRIVATE,
    },
  });
  const subscriber: WebhookSubscriber = createWebhookSubscriber({
    store: services.eventStore,
    db: services.database.db,
    logger,
    onEnqueued: () => dispatcher.wake(),
  });
  const leadership = createLeadership(services.database, {
    name: 'webhook_deliveries',
    key: WEBHOOK_WORKER_LOCK_KEY,
    logger,
  });
  // Role changes are serialised so a quick lose-and-win never runs two workers in this process.
  let change: Promise<void> = Promise.resolve();
  const follow = (leader: boolean) => {
    change = change.then(async () => {
      if (leader) {
        await subscriber.start();
        dispatcher.start();
      } else {
        await subscriber.stop();
        await dispatcher.stop();
      }
    });
  };
  let unfollow: (() => void) | undefined;
  return {
    async start() {
      services.leaderships.push(leadership);
      unfollow = leadership.onChange(follow);
      await leadership.start();
      if (leadership.isLeader()) follow(true);
    },
    async stop() {
      unfollow?.();
      await leadership.stop();
      follow(false);
      await change;
    },
  };
};
