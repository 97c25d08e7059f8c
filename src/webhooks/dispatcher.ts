import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import type { Keyring } from '../../ports/keyring';
import { WakeableSleep } from '../core/wakeable-sleep';
import { guardedLookup } from '../net/outbound-url';
import { nextAttemptAt, type RetrySchedule } from './backoff';
import { SIGNATURE_HEADER, signDelivery } from './signature';
import type { WebhookWorkerTables } from './tables';

/** Settings of {@link createDispatcher} (the `WEBHOOKS_*` configuration). */
export interface DispatcherSettings extends RetrySchedule {
  /** How long a receiver has to answer (ms). */
  timeoutMs: number;
  /** Longest pause between two looks for due deliveries (ms). */
  pollMs: number;
  /** Deliveries in flight at once. */
  concurrency: number;
  /** `WEBHOOKS_ALLOW_PRIVATE`: connect to non-public addresses too. */
  allowPrivate: boolean;
}

/** Dependencies of {@link createDispatcher}. */
export interface DispatcherDeps {
  db: Kysely<any>;
  keyring: Keyring;
  logger: Logger;
  settings: DispatcherSettings;
  /** Wall clock (ms). */
  now?: () => number;
}

/** The delivery dispatcher: sends due deliveries and records each attempt. */
export interface Dispatcher {
  start(): void;
  /** Looks for due deliveries now (the subscriber calls it after enqueuing). */
  wake(): void;
  /** Stops looking and waits for the deliveries in flight (their outcome is recorded). */
  stop(): Promise<void>;
}

/** The longest error text kept with a delivery. */
const ERROR_LIMIT = 500;

/**
 * The `last_error` of an attempt that got no answer: `timeout: no answer within <timeoutMs> ms` when the receiver
 * took too long (the abort signal's `TimeoutError`, whose numeric DOMException code means nothing to a reader, or
 * undici's own timeouts), else the error's string code (`ECONNREFUSED`, `ESSRF`, …), its message and its cause's.
 */
const attemptError = (error: unknown, timeoutMs: number): string => {
  const e = error as Error & { code?: unknown; cause?: { message?: string } };
  if (e.name === 'TimeoutError' || (typeof e.code === 'string' && /^UND_ERR_.*TIMEOUT$/.test(e.code)))
    return `timeout: no answer within ${timeoutMs} ms`;
  const code = typeof e.code === 'string' ? `${e.code}: ` : '';
  return `${code}${e.message}${e.cause?.message ? ` (${e.cause.message})` : ''}`;
};

/**
 * The webhook dispatcher (docs/webhooks.md, "How deliveries are made"): keeps up to `concurrency` due `pending`
 * deliveries (`next_attempt_at` ≤ now, oldest first) in flight, a slot taken again as soon as a delivery ends, and
 * at most half of them to one webhook, so a receiver that answers slowly (or not, until `timeoutMs`) delays only
 * its own deliveries. It POSTs each body signed with its webhook's secret
 * (`X-PTV-Signature`, {@link signDelivery}) over undici with the SSRF rule applied at connection time
 * ({@link guardedLookup}), and records the attempt: a 2xx answer makes it `delivered`; anything else (another
 * status, a timeout, a refused connection) counts an attempt, keeps the status and error, and schedules the
 * next attempt ({@link nextAttemptAt}), or makes it `failed` after the last. The schedule lives in the table, so
 * retries survive restarts; between looks it sleeps until a delivery ends, news of work, or the next due time of a
 * delivery it could start (not of a webhook at its cap; at most `pollMs`). A delivery is recorded only after the
 * receiver answered, so a crash between the two can send it again (at least once: receivers deduplicate by
 * `X-PTV-Delivery`); a graceful stop waits for the deliveries in flight.
 */
export const createDispatcher = (deps: DispatcherDeps): Dispatcher => {
  const db = deps.db as Kysely<WebhookWorkerTables>;
  const { settings, logger } = deps;
  const now = deps.now ?? Date.now;
  const newAgent = () =>
    new Agent({
      connect: { lookup: guardedLookup(settings.allowPrivate) as never, timeout: settings.timeoutMs },
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
    });
  let agent = newAgent();
  let stopped = true;
  let loop: Promise<void> | undefined;
  // Latched: an event enqueued during a pass must not wait for the timer.
  const alarm = new WakeableSleep(true);

  const record = async (
    deliveryId: string,
    attempts: number,
    outcome: { status?: number; error?: string },
  ) => {
    const at = now();
    const ok = outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300;
    const next = ok ? undefined : nextAttemptAt(settings, attempts, at);
    await db
      .updateTable('webhook_deliveries')
      .set({
        status: ok ? 'delivered' : next ? 'pending' : 'failed',
        attempts,
        last_attempt_at: new Date(at),
        last_status_code: outcome.status ?? null,
        last_error: ok ? null : (outcome.error ?? `HTTP ${outcome.status}`).slice(0, ERROR_LIMIT),
        next_attempt_at: next ?? null,
        delivered_at: ok ? new Date(at) : null,
      })
      .where('delivery_id', '=', deliveryId)
      .execute();
  };

  const deliver = async (row: {
    delivery_id: string;
    webhook_id: string;
    event_type: string;
    body: string;
    attempts: number;
  }) => {
    const attempts = row.attempts + 1;
    const target = await db
      .selectFrom('webhook_targets')
      .select(['url', 'secret_ciphertext'])
      .where('webhook_id', '=', row.webhook_id)
      .executeTakeFirst();
    if (!target) {
      await record(row.delivery_id, settings.maxAttempts, { error: 'the webhook was deleted' });
      return;
    }
    let secret: string;
    try {
      secret = deps.keyring.decrypt(target.secret_ciphertext, row.webhook_id);
    } catch {
      await record(row.delivery_id, settings.maxAttempts, {
        error: 'the signing secret cannot be decrypted (ENCRYPTION_KEY changed?)',
      });
      return;
    }
    const timestamp = now();
    try {
      const res = await request(target.url, {
        method: 'POST',
        dispatcher: agent,
        body: row.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'ptv-webhooks/1',
          'x-ptv-event': row.event_type,
          'x-ptv-delivery': row.delivery_id,
          'x-ptv-attempt': String(attempts),
          [SIGNATURE_HEADER]: signDelivery(secret, row.body, timestamp),
        },
        signal: AbortSignal.timeout(settings.timeoutMs),
      });
      await res.body.dump().catch(() => {});
      await record(row.delivery_id, attempts, { status: res.statusCode });
    } catch (error) {
      await record(row.delivery_id, attempts, { error: attemptError(error, settings.timeoutMs) });
    }
  };

  const sleep = (ms: number) => alarm.sleep(ms);

  /** The deliveries in flight: delivery id → webhook id. */
  const inFlight = new Map<string, string>();
  /** Their promises, which a stop waits for. */
  const running = new Set<Promise<void>>();
  /**
   * Deliveries whose attempt could not be recorded (the database away): delivery id → ms until which it is left
   * alone. Still `pending` and due, it would else be sent again at once, over and over, while the database is away.
   */
  const cooling = new Map<string, number>();
  /** At most this many deliveries of one webhook in flight, so a slow receiver cannot take every slot. */
  const perWebhook = Math.max(1, Math.ceil(settings.concurrency / 2));

  const launch = (row: Parameters<typeof deliver>[0]) => {
    inFlight.set(row.delivery_id, row.webhook_id);
    const sent: Promise<void> = deliver(row)
      .catch((error: unknown) => {
        logger.error({ err: error, delivery_id: row.delivery_id }, 'webhook delivery could not be recorded');
        cooling.set(row.delivery_id, now() + settings.pollMs);
      })
      .finally(() => {
        inFlight.delete(row.delivery_id);
        running.delete(sent);
        // A slot is free: look for the next due delivery now.
        alarm.wake();
      });
    running.add(sent);
  };

  /** Deliveries in flight per webhook id. */
  const inFlightCounts = (): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const w of inFlight.values()) counts.set(w, (counts.get(w) ?? 0) + 1);
    return counts;
  };

  /** The webhooks with {@link perWebhook} deliveries in flight: none of theirs can start now. */
  const cappedOf = (counts: Map<string, number>): string[] =>
    [...counts].filter(([, n]) => n >= perWebhook).map(([w]) => w);

  /** The deliveries still cooling after a failure to record them ({@link cooling}); forgets those done. */
  const stillCooling = (): string[] => {
    const at = now();
    for (const [id, until] of cooling) if (until <= at) cooling.delete(id);
    return [...cooling.keys()];
  };

  /**
   * The pending deliveries that could start now or later: not in flight, not cooling, and not of a capped webhook
   * (a slot of that webhook freeing wakes the loop, `launch`).
   */
  const startable = (capped: string[]) => {
    let query = db.selectFrom('webhook_deliveries').where('status', '=', 'pending');
    const skipped = [...inFlight.keys(), ...stillCooling()];
    if (skipped.length > 0) query = query.where('delivery_id', 'not in', skipped);
    if (capped.length > 0) query = query.where('webhook_id', 'not in', capped);
    return query;
  };

  /**
   * Starts due deliveries (oldest due first) into the free slots, skipping those in flight and those of a webhook
   * with {@link perWebhook} in flight; answers how many it started. Each round either fills slots or caps one
   * more webhook, so it ends.
   */
  const fill = async (): Promise<number> => {
    let started = 0;
    for (;;) {
      const free = settings.concurrency - inFlight.size;
      if (free <= 0 || stopped) return started;
      const counts = inFlightCounts();
      const due = await startable(cappedOf(counts))
        .select(['delivery_id', 'webhook_id', 'event_type', 'body', 'attempts'])
        .where('next_attempt_at', '<=', new Date(now()))
        .orderBy('next_attempt_at')
        .orderBy('created_at')
        .limit(settings.concurrency)
        .execute();
      let picked = 0;
      for (const row of due) {
        if (picked === free) break;
        const n = counts.get(row.webhook_id) ?? 0;
        if (n >= perWebhook) continue;
        counts.set(row.webhook_id, n + 1);
        launch(row);
        picked += 1;
      }
      started += picked;
      if (picked === 0) return started;
    }
  };

  /**
   * ms until the next due delivery that could start (at most `pollMs`): not in flight, not of a webhook at its
   * cap, and not cooling (its cooling's end counts instead). A capped webhook's backlog is due already; counting
   * it would make every sleep 0 and the loop query back to back until one of its deliveries ends (up to
   * `timeoutMs`), whose end wakes the loop anyway.
   */
  const untilNextDue = async (): Promise<number> => {
    const row = await startable(cappedOf(inFlightCounts()))
      .select((eb) => eb.fn.min('next_attempt_at').as('next'))
      .executeTakeFirst();
    const times = [...cooling.values()];
    if (row?.next) times.push(new Date(row.next as Date).getTime());
    return times.length === 0 ? settings.pollMs : Math.min(settings.pollMs, Math.min(...times) - now());
  };

  const run = async () => {
    while (!stopped) {
      try {
        alarm.reset();
        await fill();
        if (stopped) break;
        // Until a delivery ends (a free slot), news of work, or the next due time.
        await sleep(inFlight.size >= settings.concurrency ? settings.pollMs : await untilNextDue());
      } catch (error) {
        if (stopped) break;
        logger.error({ err: error }, 'webhook dispatcher failed; trying again');
        await sleep(settings.pollMs);
      }
    }
    await Promise.all([...running]);
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      if (agent.closed) agent = newAgent();
      loop = run();
    },
    wake() {
      alarm.wake();
    },
    async stop() {
      stopped = true;
      alarm.wake();
      await loop;
      loop = undefined;
      await agent.close().catch(() => {});
    },
  };
};
