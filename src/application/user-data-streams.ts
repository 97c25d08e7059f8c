import { randomBytes } from 'node:crypto';
import { DomainError } from '../../domain/shared/errors';
import { dec, fmt } from '../../domain/trading/decimal';
import {
  type OrderCancelledData,
  type OrderFilledData,
  type OrderPlacedData,
  type OrderRejectedData,
  type SessionStartedData,
  walletStreamId,
} from '../../domain/wallet/events';
import { isExpiry } from '../../domain/wallet/expiry';
import type { RecordedEvent } from '../../ports/event-store';
import type { OrderStatus } from '../../projections/orders';
import type { CredentialWatch } from '../auth/credential-watch';
import { ownerIdOf, type Principal } from '../auth/principal';
import { apiKeyOfCredential, type Credential } from '../auth/service';
import { addToKeyedSet, deleteFromKeyedSet } from '../core/keyed-sets';
import type { Services } from '../services';
import type { WalletEvents } from '../trading/wallet-follow';
import { type BalanceLine, balances } from './account';
import type { Call } from './call';
import { getOrder, type OrderTerms } from './trading';

/**
 * User data streams (issue 19 item 3; Binance Spot "User Data Stream": `POST/PUT/DELETE /api/v3/userDataStream`):
 * a listen key names one wallet owner's live events for a socket that carries no credential of its own. A key is
 * valid for {@link LISTEN_KEY_TTL_MS} after it was opened or last kept alive, as on Binance; an owner has at most one
 * (opening again returns it, kept alive). Keys live in the memory of the process that issued them: they are
 * short-lived handles, not credentials (the API key opened them), and a socket using one must reach that process
 * (docs/binance-compatibility.md). The events themselves come from the wallet's event stream (`WalletEvents`).
 */

/** How long a listen key stays valid without a keep-alive (ms; Binance: 60 minutes). */
export const LISTEN_KEY_TTL_MS = 60 * 60_000;

/** An open user data stream. */
export interface UserDataStream {
  /** 60 alphanumeric characters (Binance's shape). */
  readonly listenKey: string;
  /** The caller that opened it: its wallet's events are the stream's (an agent key: the agent's wallet). */
  readonly principal: Principal;
  readonly ownerId: string;
  /** Epoch ms after which the key is expired unless kept alive. */
  expiresAt: number;
}

interface Registry {
  byKey: Map<string, UserDataStream>;
  byOwner: Map<string, string>;
  /** Called once when a key is closed or found expired (its sockets end). */
  onEnd: Map<string, Set<() => void>>;
  /** The watch of the credential each key was opened with (it ends the key when that credential stops working). */
  watches: Map<string, CredentialWatch>;
  /** The sweep of expired keys while any key is open (every {@link LISTEN_KEY_SWEEP_MS}). */
  sweep?: ReturnType<typeof setInterval> | undefined;
}

/**
 * How often (ms) keys past their expiry are ended though nobody looks them up: an abandoned key would otherwise keep
 * its registry entry and its credential watch (an `AuthService.onChange` listener) until the process restarts.
 */
export const LISTEN_KEY_SWEEP_MS = LISTEN_KEY_TTL_MS / 4;

const registries = new WeakMap<Services, Registry>();

const registryOf = (services: Services): Registry => {
  let r = registries.get(services);
  if (!r) {
    r = { byKey: new Map(), byOwner: new Map(), onEnd: new Map(), watches: new Map() };
    registries.set(services, r);
  }
  return r;
};

const end = (r: Registry, s: UserDataStream): void => {
  r.watches.get(s.listenKey)?.stop();
  r.watches.delete(s.listenKey);
  r.byKey.delete(s.listenKey);
  if (r.byOwner.get(s.ownerId) === s.listenKey) r.byOwner.delete(s.ownerId);
  const listeners = r.onEnd.get(s.listenKey);
  r.onEnd.delete(s.listenKey);
  for (const l of listeners ?? []) l();
};

/** Ends every key of `r` expired at `now` (its sockets get the end of a closed key, its watch stops), as a lookup would. */
const sweepRegistry = (r: Registry, now: number): void => {
  for (const s of [...r.byKey.values()]) if (s.expiresAt <= now) end(r, s);
};

/** Starts the sweep of `r` unless it runs; it stops itself once no key is open. */
const startSweep = (r: Registry): void => {
  if (r.sweep) return;
  r.sweep = setInterval(() => {
    sweepRegistry(r, Date.now());
    if (r.byKey.size === 0) {
      clearInterval(r.sweep);
      r.sweep = undefined;
    }
  }, LISTEN_KEY_SWEEP_MS);
  // The sweep never keeps the process alive.
  r.sweep.unref?.();
};

/** Ends `stream` when `credential` stops working (replacing the watch it had). */
const watchStream = (r: Registry, call: Call, stream: UserDataStream, credential: Credential): void => {
  const { auth, credentialWatcher } = call.services;
  if (!auth || !credentialWatcher) return;
  r.watches.get(stream.listenKey)?.stop();
  const watch = credentialWatcher.watch(
    { apiKey: apiKeyOfCredential(credential), principal: call.caller },
    () => auth.resolveCredential(credential),
    () => {
      if (r.byKey.get(stream.listenKey) === stream) end(r, stream);
    },
  );
  r.watches.set(stream.listenKey, watch);
};

/** The stream of `listenKey` if it is open and not expired at `now` (an expired one is ended now). */
export const userDataStreamOf = (
  services: Services,
  listenKey: string,
  now: number = Date.now(),
): UserDataStream | undefined => {
  const r = registryOf(services);
  const s = r.byKey.get(listenKey);
  if (!s) return undefined;
  if (s.expiresAt <= now) {
    end(r, s);
    return undefined;
  }
  return s;
};

/**
 * Opens the caller's user data stream, or returns the open one kept alive for another {@link LISTEN_KEY_TTL_MS}
 * (Binance: "If the account has an active listenKey, that listenKey will be returned"). With `credential` (the
 * API key the door authenticated the caller with), a new key lasts only as long as that credential works: a
 * regenerated or deleted key, a deleted agent or a suspended account ends it (its sockets get the end of a closed
 * key) at once in this process, as a `/ws/v1` socket is closed (`watchCredential`), and within one heartbeat
 * (`WS_HEARTBEAT_MS`, the process's shared check: `CredentialWatcher`) when another process made the change.
 */
export const openUserDataStream = (
  call: Call,
  now: number = Date.now(),
  credential?: Credential,
): UserDataStream => {
  const r = registryOf(call.services);
  const ownerId = ownerIdOf(call.caller);
  const current = r.byOwner.get(ownerId);
  const open = current ? userDataStreamOf(call.services, current, now) : undefined;
  if (open) {
    open.expiresAt = now + LISTEN_KEY_TTL_MS;
    // Returned to the caller's credential now (a new key of the same owner, the old one regenerated away): the key
    // lasts as long as this one works, not as long as the one it was first opened with.
    if (credential !== undefined) watchStream(r, call, open, credential);
    return open;
  }
  // 30 random bytes as 60 hex characters: Binance's length, unguessable.
  const stream: UserDataStream = {
    listenKey: randomBytes(30).toString('hex'),
    principal: call.caller,
    ownerId,
    expiresAt: now + LISTEN_KEY_TTL_MS,
  };
  r.byKey.set(stream.listenKey, stream);
  r.byOwner.set(ownerId, stream.listenKey);
  startSweep(r);
  if (credential !== undefined) watchStream(r, call, stream, credential);
  return stream;
};

/** The caller's open stream of `listenKey`; `NOT_FOUND` when it does not exist, expired or is another owner's. */
const ownStream = (call: Call, listenKey: string, now: number): UserDataStream => {
  const s = userDataStreamOf(call.services, listenKey, now);
  if (!s || s.ownerId !== ownerIdOf(call.caller)) {
    throw new DomainError('NOT_FOUND', 'This listenKey does not exist.', { listen_key: listenKey });
  }
  return s;
};

/** Keeps `listenKey` valid for another {@link LISTEN_KEY_TTL_MS}; `NOT_FOUND` as {@link ownStream}. */
export const keepAliveUserDataStream = (call: Call, listenKey: string, now: number = Date.now()): void => {
  ownStream(call, listenKey, now).expiresAt = now + LISTEN_KEY_TTL_MS;
};

/** Closes `listenKey` (its sockets end); `NOT_FOUND` as {@link ownStream}. */
export const closeUserDataStream = (call: Call, listenKey: string, now: number = Date.now()): void => {
  end(registryOf(call.services), ownStream(call, listenKey, now));
};

/** Calls `listener` once when `listenKey` is closed or found expired; returns the function that stops listening. */
export const onUserDataStreamEnd = (
  services: Services,
  listenKey: string,
  listener: () => void,
): (() => void) => {
  const r = registryOf(services);
  addToKeyedSet(r.onEnd, listenKey, listener);
  return () => deleteFromKeyedSet(r.onEnd, listenKey, listener);
};

// --- What a user data stream delivers: each wallet event as order and balance updates ---

/** What an order update says of its order (from its placement, or its row when placed before the stream). */
export interface OrderFacts extends OrderTerms {
  orderId: string;
  /** Epoch ms the order was placed. */
  placedAt: number;
  /** `GTC`, `IOC` or `FOK`. */
  timeInForce: string;
  /** The client's own id of the order (`client_order_id`), null when none. */
  clientOrderId: string | null;
  /** Its order list (an OCO leg, a bracket's entry or exit; docs/trading-rules.md "Order lists"), null when none. */
  orderListId: string | null;
  /** Base quantity and quote (USDT) amount filled so far, decimal strings. */
  executedQty: string;
  executedQuote: string;
}

/** An order's change (Binance: an `executionReport`): what happened and the status after it. */
export interface OrderUpdate {
  kind: 'order';
  order: OrderFacts;
  /** `EXPIRED`: a cancel the order's time in force made (`domain/wallet/expiry.ts`), not its owner. */
  execution: 'NEW' | 'TRADE' | 'CANCELED' | 'EXPIRED' | 'REJECTED';
  status: OrderStatus;
  /** Epoch ms of the change. */
  at: number;
  /** Why a rejection or cancel happened (the risk rule, the cancel reason). */
  reason?: string;
  fill?: OrderFilledData;
}

/** The balances of the assets an event may have changed (Binance: an `outboundAccountPosition`), as of the event. */
export interface BalancesUpdate {
  kind: 'balances';
  lines: BalanceLine[];
  /** Epoch ms of the change. */
  at: number;
}

/** One update of a user data stream. */
export type UserDataUpdate = OrderUpdate | BalancesUpdate;

const ms = (iso: string): number => new Date(iso).getTime();

/**
 * Follows the wallet of `call`'s caller from now on through the venue's one wallet event subscription, and hands
 * `deliver` each event as updates, in stream order, each event once: `deliver` returns false when it cannot take
 * them now (the socket's buffer is full), and the event is offered again later (nothing half-sent). Balances are
 * read through the `balances` use case once the read models include the event, so they are the balances right
 * after it (the same figures `GET /account/balance` shows then). Returns the function that stops.
 */
export const followUserData = (
  call: Call,
  events: WalletEvents,
  deliver: (updates: UserDataUpdate[]) => boolean,
): (() => void) => {
  const { services } = call;
  const orders = new Map<string, OrderFacts>();
  /**
   * The facts of an order this stream has not seen placed (placed before it was followed), from its row once the
   * read models include event `e`: the figures filled before `e` are the row's less `e`'s own fill.
   */
  const factsOf = async (
    orderId: string,
    e: RecordedEvent,
    fill?: OrderFilledData,
  ): Promise<OrderFacts | undefined> => {
    const known = orders.get(orderId);
    if (known) return known;
    try {
      await services.projections.waitFor(e.position, services.config.READ_MODEL_WAIT_MS);
      const row = await getOrder(call, orderId);
      const executed = dec(row.executed_qty ?? '0');
      const quote = row.executed_price ? executed.times(row.executed_price) : dec(0);
      const before = (v: ReturnType<typeof dec>, own: string | undefined) =>
        fmt(own === undefined ? v : v.minus(own).isNegative() ? dec(0) : v.minus(own));
      const facts: OrderFacts = {
        orderId: row.order_id,
        symbol: row.symbol,
        side: row.side,
        type: row.type,
        quantity: row.quantity,
        price: row.price,
        triggerPrice: row.trigger_price,
        placedAt: new Date(row.created_at).getTime(),
        timeInForce: row.time_in_force ?? 'GTC',
        clientOrderId: row.client_order_id,
        orderListId: row.order_list_id,
        executedQty: before(executed, fill?.quantity),
        executedQuote: before(quote, fill?.notional),
      };
      orders.set(orderId, facts);
      return facts;
    } catch {
      return undefined;
    }
  };
  const balancesAfter = async (e: RecordedEvent, baseAsset: string | undefined, at: number) => {
    await services.projections.waitFor(e.position, services.config.READ_MODEL_WAIT_MS);
    const all = (await balances(call)).balances;
    const touched = new Set(['USDT', ...(baseAsset ? [baseAsset] : [])]);
    const lines = all.filter((b) => touched.has(b.asset));
    // An asset sold to zero is no longer listed: its line says so.
    for (const asset of touched) {
      if (!lines.some((b) => b.asset === asset)) {
        lines.push({ asset, available: '0', locked: '0', total: '0' });
      }
    }
    return { kind: 'balances' as const, lines, at };
  };
  const updatesOf = async (e: RecordedEvent): Promise<UserDataUpdate[]> => {
    switch (e.type) {
      case 'OrderPlaced': {
        const p = e.data as OrderPlacedData;
        const order: OrderFacts = {
          orderId: p.order_id,
          symbol: p.symbol,
          side: p.side,
          type: p.type,
          quantity: p.quantity,
          price: p.price,
          triggerPrice: p.trigger_price,
          placedAt: ms(p.placed_at),
          timeInForce: p.time_in_force ?? 'GTC',
          clientOrderId: p.client_order_id ?? null,
          orderListId: p.order_list_id ?? null,
          executedQty: '0',
          executedQuote: '0',
        };
        orders.set(p.order_id, order);
        const at = ms(p.placed_at);
        return [
          { kind: 'order', order: { ...order }, execution: 'NEW', status: 'pending', at },
          await balancesAfter(e, p.base_asset, at),
        ];
      }
      case 'OrderFilled': {
        const f = e.data as OrderFilledData;
        const order = await factsOf(f.order_id, e, f);
        const at = ms(f.filled_at);
        const out: UserDataUpdate[] = [];
        if (order) {
          order.executedQty = fmt(dec(order.executedQty).plus(f.quantity));
          order.executedQuote = fmt(dec(order.executedQuote).plus(f.notional));
          const done = dec(order.executedQty).gte(order.quantity);
          out.push({
            kind: 'order',
            order: { ...order },
            execution: 'TRADE',
            status: done ? 'filled' : 'partially_filled',
            at,
            fill: f,
          });
          if (done) orders.delete(f.order_id);
        }
        out.push(await balancesAfter(e, f.base_asset, at));
        return out;
      }
      case 'OrderCancelled': {
        const c = e.data as OrderCancelledData;
        const order = await factsOf(c.order_id, e);
        orders.delete(c.order_id);
        const at = ms(c.cancelled_at);
        const out: UserDataUpdate[] = [];
        if (order) {
          out.push({
            kind: 'order',
            order,
            execution: isExpiry(c.reason) ? 'EXPIRED' : 'CANCELED',
            status: 'cancelled',
            at,
            reason: c.reason,
          });
        }
        out.push(await balancesAfter(e, order && services.market?.pair(order.symbol)?.baseAsset, at));
        return out;
      }
      case 'OrderRejected': {
        const r = e.data as OrderRejectedData;
        const at = ms(r.rejected_at);
        const order: OrderFacts = {
          orderId: r.order_id,
          symbol: r.symbol,
          side: r.side,
          type: r.type,
          quantity: r.quantity,
          price: r.price,
          triggerPrice: r.trigger_price,
          placedAt: at,
          timeInForce: 'GTC',
          clientOrderId: r.client_order_id ?? null,
          orderListId: r.order_list_id ?? null,
          executedQty: '0',
          executedQuote: '0',
        };
        // A refusal moves no balance (docs/binance-compatibility.md): no balance update.
        return [{ kind: 'order', order, execution: 'REJECTED', status: 'rejected', at, reason: r.rule }];
      }
      case 'SessionStarted':
        // The wallet's first session (reason `opened`) changes no balance anyone saw: every door showed the starting
        // balance before the wallet opened, and it opens in the same append as the owner's first order, so its
        // balances read now would already hold that order's lock, ahead of the order's own NEW. A new session of a
        // reset sets every balance anew.
        if ((e.data as SessionStartedData).reason === 'opened') return [];
        return [await balancesAfter(e, undefined, e.recordedAt.getTime())];
      default:
        return [];
    }
  };
  // Each event's updates are built once (its balances read once), then offered until the socket takes them.
  let pending: { revision: number; updates: UserDataUpdate[] } | undefined;
  return events.follow(walletStreamId(ownerIdOf(call.caller)), undefined, async (e) => {
    if (pending?.revision !== e.revision) pending = { revision: e.revision, updates: await updatesOf(e) };
    if (pending.updates.length > 0 && !deliver(pending.updates)) return false;
    pending = undefined;
    return true;
  });
};
