import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { DEFAULT_PARTICIPATION_PCT, FILL_MODELS, type FillModelName } from '../domain/fill-model/model';
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
  claimOfEvent,
  IDEMPOTENCY_WINDOW_MS,
  type IdempotencyClaim,
  liveClaim,
} from '../domain/wallet/idempotency';
import {
  modeStreamId,
  type TradingMode,
  type TradingModeState,
  tradingModeDecider,
} from '../domain/wallet/mode';
import { placeAndOffer } from '../domain/wallet/place';
import type { WalletState } from '../domain/wallet/state';
import type { EventStore, LogPosition, RecordedEvent } from '../ports/event-store';
import type { SnapshotStore } from '../ports/snapshot-store';
import type { ReadModels } from '../projections/read-models';
import { getOrder, OPEN_STATUSES } from '../queries/trading';
import { getTradingProfile, type TradingProfile } from '../queries/trading-profile';
import { createCommandHandler } from './handler';
import { KeyedMutex } from './keyed-mutex';
import { appendedPosition } from './live';
import { type CommandMeta, eventMetadata } from './metadata';
import { Snapshotter } from './snapshots';
import { type WalletTimeTravel, walletSnapshotFormat } from './wallet-time-travel';

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
  /**
   * Same idempotency key and body as an earlier order of the wallet: that order as first answered, rebuilt from the
   * events of its append (`original`: its placement or rejection; never `replayed`).
   */
  | { kind: 'replayed'; ownerId: string; orderId: string; original: PlaceOrderOutcome };

/**
 * The idempotency of an order request (ARCHITECTURE §8): the client's key and a hash of the canonical request. The
 * key is scoped to the wallet (its owner id): a retry protects the wallet whichever of its credentials or doors
 * sends it (agent key, JWT with `X-Agent-Id`, MCP, the Binance door), and keys of different wallets never collide.
 */
export interface Idempotency {
  /** The client's key as sent (`Idempotency-Key`, MCP `idempotency_key`). */
  key: string;
  /** SHA-256 of the canonical request: the same key with another request is `CONFLICT` 409. */
  requestHash: string;
}

/**
 * What a previewed order would be right after its placing decision: `filled` (it fills now, wholly or in part),
 * `cancelled` (it ends now without any fill: an IOC or FOK limit the price does not reach, a FOK the book cannot
 * fill whole, a market order with no depth; docs/trading-rules.md, "Time in force") or `pending` (it rests).
 */
export type PreviewKind = 'filled' | 'cancelled' | 'pending';

/** What an order would do under one fill model: the events it would record, or the error it would get. */
export type ModelPreview =
  | { kind: PreviewKind; events: WalletEvent[] }
  | { kind: 'rejected'; error: DomainError };

/**
 * What an order would do now ({@link WalletCommands.previewOrder}), never appended: under the wallet's own fill model
 * (`fillModel`; `kind` and `events`: `OrderPlaced`, and the fills it would get at once — a market order's, or a
 * pending order's that the current price already reaches, offered it as the matching engine would) and under each
 * model (`models`), with the wallet's participation share for resting fills under `realistic`.
 */
export interface OrderPreviewOutcome {
  kind: PreviewKind;
  ownerId: string;
  events: WalletEvent[];
  fillModel: FillModelName;
  participationPct: number;
  models: Record<FillModelName, ModelPreview>;
}

/** The trading write side (ARCHITECTURE §4, §8). */
export interface WalletCommands {
  placeOrder(
    owner: OwnerRef,
    order: Omit<OrderRequest, 'idempotencyKey' | 'requestHash'>,
    meta: CommandMeta,
    idempotency?: Idempotency,
  ): Promise<PlaceOrderOutcome>;
  /**
   * Decides an order exactly as {@link placeOrder} would (the order guards, the same decider, risk chain, prices,
   * fee rate and risk profile) on the wallet's current state, offers it the current price as the matching engine
   * would, under the wallet's fill model and under each model, and appends nothing. Throws the error the order
   * would get under the wallet's model: the failing rule's (`details.rule`, `details.step`; no `order_id`, as no
   * order exists) or a validation error; another model's refusal is in its `models` entry.
   */
  previewOrder(
    owner: OwnerRef,
    order: Omit<OrderRequest, 'idempotencyKey' | 'requestHash'>,
  ): Promise<OrderPreviewOutcome>;
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
    tick: { price: string; time: string; source: string; volume?: string | undefined },
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
  /**
   * Sets the wallet's fill model and participation share (`PUT /account/fill-model`; opens the wallet first when it
   * never traded). `VALIDATION_ERROR` for an unknown model or a share outside 1–100.
   */
  setFillModel(
    owner: OwnerRef,
    fillModel: string,
    participationPct: number | undefined,
    meta: CommandMeta,
  ): Promise<WalletOutcome>;
  /** Forgets cached state of a wallet (after its stream was deleted). */
  forget(ownerId: string): void;
  /** Resolves once the snapshots scheduled so far are written (before the database closes; tests). */
  snapshotsWritten(): Promise<void>;
}

/** Dependencies of {@link createWalletCommands}. */
export interface WalletCommandDeps {
  store: EventStore;
  db: Kysely<ReadModels>;
  /** Market data; undefined (or returning undefined) when the runtime has none. */
  market: () => MarketView | undefined;
  /** Fee per fill as a fraction (default 0.001 = 0.1%): the taker rate, which locks are sized with. */
  feeRate?: Dec;
  /** The maker rate (resting limit fills); absent: {@link feeRate}. */
  makerFeeRate?: Dec;
  /** The fill model new wallets open with (`FILL_MODEL`; default `realistic`). */
  fillModel?: FillModelName;
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
  /**
   * Wallet snapshots (docs/architecture.md, "Snapshots"): where they are kept and every how many events one is
   * taken; absent (or `every` 0), a cold load replays the whole stream.
   */
  snapshots?: { store: SnapshotStore; every: number; onError?: (error: unknown, streamId: string) => void };
}

/** A check of {@link WalletCommandDeps.orderGuards}: throws to refuse the owner's new order. */
export type OrderGuard = (owner: { ownerId: string; ownerType: 'account' | 'agent' }) => void | Promise<void>;

/** Events read to rebuild a replayed order's first answer: its append (an order and its fills) fits easily. */
const REPLAY_READ = 64;

/** The command that appended an event (`eventMetadata`'s `command_id`; older events fall back to the request id). */
const commandIdOf = (e: RecordedEvent): unknown => e.metadata['command_id'] ?? e.metadata.causation_id;

/** SHA-256 (hex) of the key's scope (the wallet) and the client's key: what events and read models keep. */
export const idempotencyKeyHash = (scope: string, key: string): string =>
  createHash('sha256').update(`${scope}\n${key}`).digest('hex');

const ownerSnapshot = (p: TradingProfile, fillModel: FillModelName): OwnerSnapshot => ({
  ownerId: p.ownerId,
  ownerType: p.ownerType,
  accountId: p.accountId,
  status: p.status,
  accountStatus: p.accountStatus,
  sessionId: p.sessionId,
  startingBalance: p.startingBalance,
  fillModel,
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
  const snapshotter =
    deps.snapshots && deps.snapshots.every > 0
      ? new Snapshotter<WalletState, WalletTimeTravel>({ ...deps.snapshots, codec: walletSnapshotFormat })
      : undefined;
  const handler = createCommandHandler(deps.store, walletDecider, {
    cacheSize: deps.cacheSize ?? 10_000,
    ...(snapshotter ? { snapshots: snapshotter } : {}),
  });
  const modes = createCommandHandler(deps.store, tradingModeDecider, { cacheSize: 1_000 });
  const perWallet = new KeyedMutex();
  const feeRate = deps.feeRate ?? dec(DEFAULT_FEE_RATE);
  const snapshot = (p: TradingProfile) => ownerSnapshot(p, deps.fillModel ?? 'realistic');
  const now = deps.now ?? (() => new Date());
  const profileOf = deps.profileOf ?? ((owner: OwnerRef) => getTradingProfile(deps.db, owner));

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
      ...(deps.makerFeeRate ? { makerFeeRate: deps.makerFeeRate } : {}),
    };
  };

  const run = async (
    ownerId: string,
    command: WalletCommand,
    profile: TradingProfile | undefined,
    meta: CommandMeta,
    /** A keyed order's key hash: its newest claim is looked up on every attempt, after the state's load. */
    keyHash?: string,
  ): Promise<WalletOutcome & { claim?: IdempotencyClaim }> => {
    const stream = walletStreamId(ownerId);
    let at = now();
    let claim: IdempotencyClaim | undefined;
    const result = await handler.handle(
      stream,
      command,
      async () => {
        at = now();
        const ctx = context(profile, at);
        if (!keyHash) return ctx;
        // Looked up after the state was loaded, so every claim at or below the state's revision is seen: an append
        // that raced another claim of the key conflicts on the revision, and its retry finds that claim.
        claim = liveClaim(claim, at.getTime());
        if (!claim) {
          const found = await deps.store.findByIdempotencyKey(stream, keyHash, {
            notBefore: new Date(at.getTime() - IDEMPOTENCY_WINDOW_MS),
          });
          claim = found && claimOfEvent(found);
        }
        return claim ? { ...ctx, idempotencyClaim: claim } : ctx;
      },
      { metadata: eventMetadata(meta, at) },
    );
    if (result.append) deps.appended?.(result.append.events);
    return {
      ownerId,
      events: result.events,
      state: result.state,
      ...(result.append ? { position: result.append.position } : {}),
      ...(claim ? { claim } : {}),
    };
  };

  /** The outcome of a decided `PlaceOrder`: its rejection, or the order placed (filled at once or pending). */
  const placementOutcome = (outcome: WalletOutcome): PlaceOrderOutcome => {
    const rejected = outcome.events.find((e) => e.type === 'OrderRejected');
    if (rejected) {
      return {
        ...outcome,
        kind: 'rejected',
        orderId: rejected.data.order_id,
        error: rejectionError(rejected.data),
      };
    }
    const placed = outcome.events.find((e) => e.type === 'OrderPlaced');
    if (!placed) throw new DomainError('INTERNAL_ERROR', 'the order was neither placed nor rejected');
    const filled = outcome.events.some(
      (e) => e.type === 'OrderFilled' && e.data.order_id === placed.data.order_id,
    );
    return { ...outcome, kind: filled ? 'filled' : 'pending', orderId: placed.data.order_id };
  };

  /**
   * The first answer to a keyed order, rebuilt from the log in any process: the events of the append that recorded
   * the claim's order (read from the claim's revision while they carry the same `command_id`).
   */
  const replayClaim = async (ownerId: string, claim: IdempotencyClaim): Promise<PlaceOrderOutcome> => {
    const recorded = await deps.store.readStream(walletStreamId(ownerId), {
      fromRevision: claim.revision,
      maxCount: REPLAY_READ,
    });
    const first = recorded[0];
    if (!first) throw new DomainError('INTERNAL_ERROR', 'an idempotency claim points past the wallet stream');
    const command = commandIdOf(first);
    const events = recorded
      .filter((e, i) => i === 0 || (command !== undefined && commandIdOf(e) === command))
      .map((e) => ({ type: e.type, data: e.data }) as WalletEvent);
    const original = placementOutcome({ ownerId, events, state: walletDecider.initialState() });
    return { kind: 'replayed', ownerId, orderId: claim.orderId, original };
  };

  return {
    async placeOrder(owner, order, meta, idempotency) {
      const profile = await requireProfile(owner);
      const ownerId = profile.ownerId;
      for (const guard of deps.orderGuards ?? []) await guard({ ownerId, ownerType: profile.ownerType });
      const keyHash = idempotency ? idempotencyKeyHash(`wallet:${ownerId}`, idempotency.key) : null;
      return perWallet.run(ownerId, async (): Promise<PlaceOrderOutcome> => {
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
          keyHash ?? undefined,
        );
        // Nothing decided for a keyed order: the log holds a live claim of the key for this very request (the
        // decider refused another body with CONFLICT), so answer with what the claim's order recorded.
        if (keyHash && outcome.events.length === 0 && outcome.claim)
          return replayClaim(ownerId, outcome.claim);
        return placementOutcome(outcome);
      });
    },

    async previewOrder(owner, order) {
      const profile = await requireProfile(owner);
      const ownerId = profile.ownerId;
      for (const guard of deps.orderGuards ?? []) await guard({ ownerId, ownerType: profile.ownerType });
      const { state } = await handler.load(walletStreamId(ownerId));
      const own: FillModelName = state.opened ? state.fillModel : (deps.fillModel ?? 'realistic');
      const ctx = context(profile, now());
      const command = {
        type: 'PlaceOrder' as const,
        data: { owner: snapshot(profile), order: { ...order, idempotencyKey: null, requestHash: null } },
      };
      const models = {} as Record<FillModelName, ModelPreview>;
      for (const model of FILL_MODELS) {
        let events: WalletEvent[];
        try {
          events = placeAndOffer(command, state, { ...ctx, fillModel: model });
        } catch (error) {
          // Refused before any rule ran (a malformed field, no price): the same under every model.
          if (model === own || !isDomainError(error)) throw error;
          models[model] = { kind: 'rejected', error };
          continue;
        }
        const rejected = events.find((e) => e.type === 'OrderRejected');
        if (rejected) {
          const error = rejectionError(rejected.data);
          const { order_id: _none, ...details } = error.details ?? {};
          models[model] = {
            kind: 'rejected',
            error: new DomainError(error.code, error.message, details, error.status),
          };
          continue;
        }
        const placed = events.find((e) => e.type === 'OrderPlaced');
        if (!placed) throw new DomainError('INTERNAL_ERROR', 'the order was neither placed nor rejected');
        const filled = events.some(
          (e) => e.type === 'OrderFilled' && e.data.order_id === placed.data.order_id,
        );
        const ended = events.some(
          (e) => e.type === 'OrderCancelled' && e.data.order_id === placed.data.order_id,
        );
        models[model] = { kind: filled ? 'filled' : ended ? 'cancelled' : 'pending', events };
      }
      const mine = models[own];
      if (mine.kind === 'rejected') throw mine.error;
      return {
        kind: mine.kind,
        ownerId,
        events: mine.events,
        fillModel: own,
        participationPct: state.opened ? state.participationPct : DEFAULT_PARTICIPATION_PCT,
        models,
      };
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

    async setFillModel(owner, fillModel, participationPct, meta) {
      const profile = await requireProfile(owner);
      return perWallet.run(profile.ownerId, () =>
        run(
          profile.ownerId,
          { type: 'SetFillModel', data: { owner: snapshot(profile), fillModel, participationPct } },
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
      return { state: result.state, ...appendedPosition(result) };
    },

    mode: async (ownerId) => (await modes.load(modeStreamId(ownerId))).state,
    load: (ownerId) => handler.load(walletStreamId(ownerId)),
    profile: requireProfile,
    forget: (ownerId) => handler.forget(walletStreamId(ownerId)),
    snapshotsWritten: async () => {
      await snapshotter?.idle();
    },
  };
};
