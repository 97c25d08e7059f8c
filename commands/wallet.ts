import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DomainError, isDomainError } from '../domain/shared/errors';
import { DEFAULT_RISK_PROFILE } from '../domain/shared/risk-profile';
import { type Dec, dec } from '../domain/trading/decimal';
import { DEFAULT_FEE_RATE } from '../domain/trading/fees';
import type { PairFilters } from '../domain/trading/quantity';
import type {
  OrderRequest,
  OwnerSnapshot,
  QuotedPrice,
  WalletCommand,
  WalletContext,
} from '../domain/wallet/commands';
import { walletDecider } from '../domain/wallet/decide';
import type { OrderCancelledData, OrderRejectedData, WalletEvent } from '../domain/wallet/events';
import { walletStreamId } from '../domain/wallet/events';
import {
  modeStreamId,
  type TradingMode,
  type TradingModeState,
  tradingModeDecider,
} from '../domain/wallet/mode';
import type { WalletState } from '../domain/wallet/state';
import type { EventStore, LogPosition, RecordedEvent } from '../ports/event-store';
import type { ReadModels } from '../projections/read-models';
import { findOrderByIdempotencyKey, getOrder, OPEN_STATUSES, type OrderRow } from '../queries/trading';
import { getTradingProfile, type TradingProfile } from '../queries/trading-profile';
import { createCommandHandler } from './handler';
import { KeyedMutex } from './keyed-mutex';
import { type CommandMeta, eventMetadata } from './metadata';

/** What market data offers the trading commands (adapted from `services.market` in `src/trading`). */
export interface MarketView {
  /** Current price with its time and source, undefined when none is known. */
  price(symbol: string): QuotedPrice | undefined;
  pair(symbol: string): PairFilters | undefined;
  /** 24h quote volume (USDT), decimal string, undefined when unknown. */
  quoteVolume24h(symbol: string): string | undefined;
}

/** Whose wallet a command acts on: an account, or one of its agents. */
export interface OwnerRef {
  accountId: string;
  agentId?: string | null;
}

/** A command's outcome. */
export interface WalletOutcome {
  ownerId: string;
  events: WalletEvent[];
  state: WalletState;
  /** `$all` position of the last new event (read your writes); absent when nothing was recorded. */
  position?: LogPosition;
}

/** The outcome of `POST /trade/order`. */
export type PlaceOrderOutcome =
  | (WalletOutcome & { kind: 'filled' | 'pending'; orderId: string })
  /** Recorded as `OrderRejected`; `error` is what the client gets. */
  | (WalletOutcome & { kind: 'rejected'; orderId: string; error: DomainError })
  /** Same `Idempotency-Key` and body as an earlier order: that order, as first answered or as recorded. */
  | { kind: 'replayed'; ownerId: string; orderId: string; original?: PlaceOrderOutcome; row?: OrderRow };

/** The idempotency of an order request (ARCHITECTURE §8): the client's key and a hash of the body. */
export interface Idempotency {
  /** The raw `Idempotency-Key` header; scoped per wallet here. */
  key: string;
  /**
   * The wallet the key is scoped to (its owner id): a retry protects the wallet whichever of its credentials
   * sends it (agent key, or JWT with `X-Agent-Id`; account key or JWT), and keys of different wallets never collide.
   */
  scope: string;
  /** SHA-256 of the canonical body. */
  requestHash: string;
}

/** The trading write side (ARCHITECTURE §4, §8). */
export interface WalletCommands {
  placeOrder(
    owner: OwnerRef,
    order: Omit<OrderRequest, 'idempotencyKey' | 'requestHash'>,
    meta: CommandMeta,
    idempotency?: Idempotency,
  ): Promise<PlaceOrderOutcome>;
  /** Cancels one open order: `ORDER_NOT_FOUND` (unknown or foreign), `ORDER_NOT_CANCELLABLE` (finished). */
  cancelOrder(
    owner: OwnerRef,
    orderId: string,
    meta: CommandMeta,
  ): Promise<WalletOutcome & { cancelled: OrderCancelledData }>;
  /** Cancels every open order in one append. */
  cancelAll(owner: OwnerRef, meta: CommandMeta): Promise<WalletOutcome & { cancelled: OrderCancelledData[] }>;
  /** Closes at market, cancels, starts a new session (`POST /account/reset`). */
  reset(owner: OwnerRef, startingBalance: string | undefined, meta: CommandMeta): Promise<WalletOutcome>;
  /** Opens the wallet or follows the owner's new session (agent reset); nothing when already in step. */
  sync(owner: OwnerRef, meta: CommandMeta): Promise<WalletOutcome>;
  /** The matching engine: a tick reached a pending order. Idempotent. */
  fill(
    ownerId: string,
    orderId: string,
    tick: { price: string; time: string; source: string },
    meta: CommandMeta,
  ): Promise<WalletOutcome>;
  /** The wallet's state folded from its stream (through the state cache). */
  load(ownerId: string): Promise<{ state: WalletState; revision: number }>;
  /** The owner's trading profile (status, starting balance, session, risk profile); `ACCOUNT_NOT_FOUND`. */
  profile(owner: OwnerRef): Promise<TradingProfile>;
  /** Sets the owner's primary mode and strategy label (`POST /account/mode`). */
  setMode(
    owner: OwnerRef,
    mode: TradingMode,
    strategyLabel: string | null,
    meta: CommandMeta,
  ): Promise<{ state: TradingModeState; position?: LogPosition }>;
  /** The owner's mode as recorded (default `live`). */
  mode(ownerId: string): Promise<TradingModeState>;
  /** Forgets cached state of a wallet (after its stream was deleted). */
  forget(ownerId: string): void;
}

/** Dependencies of {@link createWalletCommands}. */
export interface WalletCommandDeps {
  store: EventStore;
  db: Kysely<ReadModels>;
  /** Market data; undefined (or returning undefined) when the runtime has none. */
  market: () => MarketView | undefined;
  /** Fee per fill as a fraction (default 0.001 = 0.1%). */
  feeRate?: Dec;
  /** The owner's profile (default: the accounts and agents read models). */
  profileOf?: (owner: OwnerRef) => Promise<TradingProfile | undefined>;
  /** Business clock (default: wall clock). */
  now?: () => Date;
  /** Streams cached in memory (default 10,000). */
  cacheSize?: number;
  /**
   * Checks run before an order is decided (capabilities push theirs, e.g. battles refuse an agent paused in a
   * running battle); a guard throws a `DomainError` to refuse the order (nothing is recorded).
   */
  orderGuards?: OrderGuard[];
  /**
   * Waits until the read models include this process's earlier writes of the owner (read your writes on the
   * read side; `src/http/owner-watermarks.ts`). Used where a command consults a read model about an order it may
   * have placed a moment ago; absent, the read models are taken as they are.
   */
  settled?: (ownerId: string) => Promise<unknown>;
  /** Told every wallet append of this process as recorded (the matching engine indexes them at once). */
  appended?: (events: readonly RecordedEvent[]) => void;
}

/** A check of {@link WalletCommandDeps.orderGuards}: throws to refuse the owner's new order. */
export type OrderGuard = (owner: { ownerId: string; ownerType: 'account' | 'agent' }) => void | Promise<void>;

const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
const IDEMPOTENCY_MEMORY = 10_000;

/** SHA-256 (hex) of the key's scope (the wallet) and the client's key: what events and read models keep. */
export const idempotencyKeyHash = (scope: string, key: string): string =>
  createHash('sha256').update(`${scope}\n${key}`).digest('hex');

const snapshot = (p: TradingProfile): OwnerSnapshot => ({
  ownerId: p.ownerId,
  ownerType: p.ownerType,
  accountId: p.accountId,
  status: p.status,
  accountStatus: p.accountStatus,
  sessionId: p.sessionId,
  startingBalance: p.startingBalance,
});

/** The error a recorded rejection answers with (`INVALID_SYMBOL` is 404 on order placement, spec "Errors"). */
export const rejectionError = (r: Pick<OrderRejectedData, 'code' | 'message' | 'details' | 'order_id'>) =>
  new DomainError(
    r.code,
    r.message,
    { ...r.details, order_id: r.order_id },
    r.code === 'INVALID_SYMBOL' ? 404 : undefined,
  );

/**
 * The wallet command handler: builds the decider's context (wall clock, UUIDs, live prices, pair filters, 24h
 * volumes, the owner's current risk profile and status from the read models), serialises the commands of one
 * wallet inside this process (so concurrent orders of one wallet never burn optimistic-concurrency retries; other
 * processes are still fenced by the expected revision), appends, and maps outcomes: a rejection is recorded and
 * returned with its error, an `Idempotency-Key` seen before returns the first answer.
 */
export const createWalletCommands = (deps: WalletCommandDeps): WalletCommands => {
  const handler = createCommandHandler(deps.store, walletDecider, { cacheSize: deps.cacheSize ?? 10_000 });
  const modes = createCommandHandler(deps.store, tradingModeDecider, { cacheSize: 1_000 });
  const perWallet = new KeyedMutex();
  const feeRate = deps.feeRate ?? dec(DEFAULT_FEE_RATE);
  const now = deps.now ?? (() => new Date());
  const profileOf = deps.profileOf ?? ((owner: OwnerRef) => getTradingProfile(deps.db, owner));
  const recentKeys = new Map<string, { requestHash: string; at: number; outcome: PlaceOrderOutcome }>();

  const requireProfile = async (owner: OwnerRef): Promise<TradingProfile> => {
    const profile = await profileOf(owner);
    if (!profile) throw new DomainError('ACCOUNT_NOT_FOUND', 'no account or agent for these credentials');
    return profile;
  };

  const context = (profile: TradingProfile | undefined, at: Date): WalletContext => {
    const market = deps.market();
    return {
      now: at,
      newId: () => crypto.randomUUID(),
      prices: (symbol) => market?.price(symbol),
      pairs: (symbol) => market?.pair(symbol),
      quoteVolume24h: (symbol) => {
        const v = market?.quoteVolume24h(symbol);
        return v === undefined ? undefined : dec(v);
      },
      riskProfile: profile?.riskProfile ?? DEFAULT_RISK_PROFILE,
      feeRate,
    };
  };

  const run = async (
    ownerId: string,
    command: WalletCommand,
    profile: TradingProfile | undefined,
    meta: CommandMeta,
  ): Promise<WalletOutcome> => {
    let at = now();
    const result = await handler.handle(
      walletStreamId(ownerId),
      command,
      () => {
        at = now();
        return context(profile, at);
      },
      { metadata: eventMetadata(meta, at) },
    );
    if (result.append) deps.appended?.(result.append.events);
    return {
      ownerId,
      events: result.events,
      state: result.state,
      ...(result.append ? { position: result.append.position } : {}),
    };
  };

  const remember = (slot: string, requestHash: string, outcome: PlaceOrderOutcome) => {
    recentKeys.set(slot, { requestHash, at: Date.now(), outcome });
    if (recentKeys.size > IDEMPOTENCY_MEMORY) {
      const oldest = recentKeys.keys().next().value;
      if (oldest !== undefined) recentKeys.delete(oldest);
    }
  };

  const conflict = () =>
    new DomainError('CONFLICT', 'this Idempotency-Key was already used with a different request body', {
      reason: 'idempotency_key_reused',
    });

  return {
    async placeOrder(owner, order, meta, idempotency) {
      const profile = await requireProfile(owner);
      const ownerId = profile.ownerId;
      for (const guard of deps.orderGuards ?? []) await guard({ ownerId, ownerType: profile.ownerType });
      const keyHash = idempotency ? idempotencyKeyHash(idempotency.scope, idempotency.key) : null;
      const slot = keyHash ? `${ownerId}:${keyHash}` : undefined;
      return perWallet.run(ownerId, async (): Promise<PlaceOrderOutcome> => {
        if (idempotency && keyHash && slot) {
          const seen = recentKeys.get(slot);
          if (seen && Date.now() - seen.at < IDEMPOTENCY_WINDOW_MS) {
            if (seen.requestHash !== idempotency.requestHash) throw conflict();
            return { kind: 'replayed', ownerId, orderId: seen.outcome.orderId, original: seen.outcome };
          }
          // No `settled` wait here: an order this process placed is in `recentKeys` until 10,000 newer keyed
          // orders push it out, long after its fold; the read model answers for other processes and restarts.
          const row = await findOrderByIdempotencyKey(
            deps.db,
            ownerId,
            keyHash,
            new Date(Date.now() - IDEMPOTENCY_WINDOW_MS),
          );
          if (row) {
            if (row.request_hash !== idempotency.requestHash) throw conflict();
            return { kind: 'replayed', ownerId, orderId: row.order_id, row };
          }
        }
        const outcome = await run(
          ownerId,
          {
            type: 'PlaceOrder',
            data: {
              owner: snapshot(profile),
              order: { ...order, idempotencyKey: keyHash, requestHash: idempotency?.requestHash ?? null },
            },
          },
          profile,
          meta,
        );
        const rejected = outcome.events.find((e) => e.type === 'OrderRejected');
        let result: PlaceOrderOutcome;
        if (rejected) {
          result = {
            ...outcome,
            kind: 'rejected',
            orderId: rejected.data.order_id,
            error: rejectionError(rejected.data),
          };
        } else {
          const placed = outcome.events.find((e) => e.type === 'OrderPlaced');
          if (!placed) throw new DomainError('INTERNAL_ERROR', 'the order was neither placed nor rejected');
          const filled = outcome.events.some(
            (e) => e.type === 'OrderFilled' && e.data.order_id === placed.data.order_id,
          );
          result = { ...outcome, kind: filled ? 'filled' : 'pending', orderId: placed.data.order_id };
        }
        if (slot && idempotency) remember(slot, idempotency.requestHash, result);
        return result;
      });
    },

    async cancelOrder(owner, orderId, meta) {
      const profile = await requireProfile(owner);
      const ownerId = profile.ownerId;
      const row = await getOrder(deps.db, ownerId, orderId);
      const notCancellable = (status: string) =>
        new DomainError('ORDER_NOT_CANCELLABLE', `the order is ${status} and can no longer be cancelled`, {
          order_id: orderId,
          status,
        });
      if (row && !OPEN_STATUSES.includes(row.status)) throw notCancellable(row.status);
      return perWallet.run(ownerId, async () => {
        try {
          const outcome = await run(ownerId, { type: 'CancelOrder', data: { orderId } }, profile, meta);
          const cancelled = outcome.events.find((e) => e.type === 'OrderCancelled')!
            .data as OrderCancelledData;
          return { ...outcome, cancelled };
        } catch (error) {
          if (isDomainError(error) && error.code === 'ORDER_NOT_FOUND') {
            // Open in the read model but not in the stream: it was filled or cancelled a moment ago.
            if (row) throw notCancellable('filled or cancelled');
            // Not in the read model yet either: an order placed a moment ago whose response did not wait for
            // the read models (READ_YOUR_WRITES=on-read) and that is no longer open. Ask them again once they
            // include this owner's writes, so a just-filled order is 409, not 404.
            if (deps.settled) {
              await deps.settled(ownerId);
              const settled = await getOrder(deps.db, ownerId, orderId);
              if (settled) throw notCancellable(settled.status);
            }
            throw new DomainError('ORDER_NOT_FOUND', 'order not found', { order_id: orderId });
          }
          throw error;
        }
      });
    },

    async cancelAll(owner, meta) {
      const profile = await requireProfile(owner);
      return perWallet.run(profile.ownerId, async () => {
        const outcome = await run(profile.ownerId, { type: 'CancelAllOrders', data: {} }, profile, meta);
        const cancelled = outcome.events.flatMap((e) => (e.type === 'OrderCancelled' ? [e.data] : []));
        return { ...outcome, cancelled };
      });
    },

    async reset(owner, startingBalance, meta) {
      const profile = await requireProfile(owner);
      if (profile.accountStatus !== 'active') {
        throw new DomainError('ACCOUNT_SUSPENDED', `the account is ${profile.accountStatus}`);
      }
      return perWallet.run(profile.ownerId, () =>
        run(
          profile.ownerId,
          {
            type: 'ResetWallet',
            data: {
              owner: snapshot(profile),
              ...(startingBalance !== undefined ? { startingBalance } : {}),
            },
          },
          profile,
          meta,
        ),
      );
    },

    async sync(owner, meta) {
      const profile = await requireProfile(owner);
      return perWallet.run(profile.ownerId, () =>
        run(profile.ownerId, { type: 'OpenWallet', data: { owner: snapshot(profile) } }, profile, meta),
      );
    },

    fill(ownerId, orderId, tick, meta) {
      return perWallet.run(ownerId, () =>
        run(ownerId, { type: 'FillOrder', data: { orderId, ...tick } }, undefined, meta),
      );
    },

    async setMode(owner, mode, strategyLabel, meta) {
      const profile = await requireProfile(owner);
      const at = now();
      const result = await modes.handle(
        modeStreamId(profile.ownerId),
        { type: 'SetTradingMode', data: { ownerId: profile.ownerId, mode, strategyLabel } },
        { now: at, newId: () => crypto.randomUUID() },
        { metadata: eventMetadata(meta, at) },
      );
      return { state: result.state, ...(result.append ? { position: result.append.position } : {}) };
    },

    mode: async (ownerId) => (await modes.load(modeStreamId(ownerId))).state,
    load: (ownerId) => handler.load(walletStreamId(ownerId)),
    profile: requireProfile,
    forget: (ownerId) => handler.forget(walletStreamId(ownerId)),
  };
};
