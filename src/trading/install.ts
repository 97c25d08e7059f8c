import {
  createWalletCommands,
  type MarketView,
  type OrderGuard,
  type OwnerRef,
  type WalletCommands,
} from '../../commands/wallet';
import { toUnitsNumber } from '../../domain/market/decimal';
import { normalizeSymbol } from '../../domain/market/pair';
import { DEFAULT_RISK_PROFILE, type RiskProfile } from '../../domain/shared/risk-profile';
import type { Dec } from '../../domain/trading/decimal';
import { feeRatesOf } from '../../domain/trading/fees';
import { walletOwnerOf } from '../../domain/wallet/events';
import { DELETIONS_STREAM, type RecordedEvent } from '../../ports/event-store';
import { ReadThroughCache } from '../../projections/read-through-cache';
import type { FoldListener } from '../../projections/runner';
import { decimal8, iso } from '../../queries/format';
import {
  getTradingProfile,
  type ProfileSource,
  type TradingProfile,
  tradingProfileOf,
} from '../../queries/trading-profile';
import { OwnerWatermarks } from '../application/owner-watermarks';
import type { MarketServices } from '../market/services';
import { MatchingEngine } from '../matching/engine';
import { createLeadership } from '../matching/leader';
import { readIndexSeed } from '../matching/seed';
import { installed, type Services } from '../services';

declare module '../services' {
  interface Services {
    /** Trading: wallet commands and the matching engine (ARCHITECTURE §8; `src/trading`, `src/matching`). */
    trading?: TradingServices;
  }
}

/** The trading capability's members of {@link Services}. */
export interface TradingServices {
  wallets: WalletCommands;
  /** Checks before every new order (`OrderGuard`); capabilities push theirs (battles: paused agents). */
  orderGuards: OrderGuard[];
  /**
   * This process's wallet appends the read models may not include yet — every one, under its owner, and the
   * `/trade` commands' under the account too (they answer before their fold with `READ_YOUR_WRITES=on-read`):
   * the owner's next request waits for them (docs/architecture.md, "Read your writes").
   */
  ownWrites: OwnerWatermarks;
  /**
   * Tells `listener` every wallet append of this process as recorded, right after it is durable (before the
   * read models fold it); returns the unsubscribe. The `orders` WebSocket channel pushes from it.
   */
  onAppended(listener: (events: readonly RecordedEvent[]) => void): () => void;
  /** The matching engine, when this runtime matches (it needs market data). */
  engine?: MatchingEngine;
  /** The taker fee rate (`TAKER_FEE_RATE`, else `FEE_RATE`): fills that take liquidity, and locks. */
  feeRate: Dec;
  /** The maker fee rate (`MAKER_FEE_RATE`, else the taker rate): resting limit fills. */
  makerFeeRate: Dec;
  /** Starts the matching engine (if any). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Market data as the trading commands read it: the price cache (never the database), filters, 24h volume. */
export const marketView = (market: MarketServices): MarketView => ({
  price(symbol) {
    const p = market.feed.prices.get(normalizeSymbol(symbol));
    if (!p) return undefined;
    const stale = market.staleness();
    return {
      price: p.price,
      timestamp: new Date(p.time).toISOString(),
      source: p.source,
      ...(stale ? { stale } : {}),
    };
  },
  pair: (symbol) => market.pair(symbol),
  quoteVolume24h: (symbol) => market.quoteVolume24h(symbol),
});

/**
 * The owners' trading profiles through a cache that this process's projection runner keeps exact: an order then
 * costs no read-model query for its owner's status, session and risk profile, and a change to an account or an
 * agent (risk profile, archive, reset, delete) empties the cache as soon as its read models commit it.
 */
const cachedProfiles = (services: Services) => {
  const cache = new ReadThroughCache<TradingProfile>(
    10_000,
    (e) =>
      e.streamId.startsWith('account-') || e.streamId.startsWith('agent-') || e.streamId === DELETIONS_STREAM,
  );
  services.projections.onFolded((change) => (change === 'swapped' ? cache.clear() : cache.observe(change)));
  return (owner: OwnerRef) =>
    cache.get(`${owner.accountId}/${owner.agentId ?? ''}`, () =>
      getTradingProfile(services.database.db, owner),
    );
};

/**
 * An owner's trading profile from its own streams (`account-{id}`, `agent-{id}`: the write side), as
 * {@link getTradingProfile} gives it from the read models; undefined when the account or the agent has none (never
 * created, or deleted) or the agent is another account's. Two stream reads: only for an owner the read models
 * lack or are known to be behind on.
 */
const profileOnWriteSide = async (
  services: Services,
  owner: OwnerRef,
): Promise<TradingProfile | undefined> => {
  const { accounts, agents } = services;
  if (!accounts || !agents) return undefined;
  const [account, agent] = await Promise.all([
    accounts.load(owner.accountId),
    owner.agentId ? agents.load(owner.agentId) : undefined,
  ]);
  if (account.status === 'none') return undefined;
  const source = <S extends Omit<ProfileSource, 'status' | 'riskProfile'>>(
    s: S & { riskProfile: RiskProfile | null },
  ) => ({
    ...s,
    startingBalance: decimal8(s.startingBalance),
    sessionStartedAt: iso(s.sessionStartedAt),
    riskProfile: s.riskProfile ?? { ...DEFAULT_RISK_PROFILE },
  });
  if (!agent) return tradingProfileOf({ ...source(account), status: account.status });
  return agent.status === 'none'
    ? undefined
    : tradingProfileOf(
        { ...source(account), status: account.status },
        { ...source(agent), status: agent.status },
      );
};

/**
 * The trading profile every order (every door: REST, MCP, the Binance door) is decided with: the read models'
 * (`readModel`), except while they are behind the owner's own stream as far as this process knows. That is, the
 * owner (or its account) has a change made here that they have not folded (`services.ownerChanges`: an agent
 * archived or its risk limits replaced a moment ago), or they do not have the owner at all (an agent or account
 * whose creation answered before its fold: its key works at once, `KeyIndex.inForce`). Then the owner's streams
 * are read ({@link profileOnWriteSide}), so an archived agent is refused and new limits apply at once, however far
 * the read models lag. The normal case costs what it did: one `Map.has` per id more, no stream read.
 */
const ownerProfiles =
  (services: Services, readModel: (owner: OwnerRef) => Promise<TradingProfile | undefined>) =>
  async (owner: OwnerRef): Promise<TradingProfile | undefined> => {
    const changes = services.ownerChanges;
    if (changes && (changes.has(owner.accountId) || (owner.agentId && changes.has(owner.agentId)))) {
      const [account, agent] = await Promise.all([
        changes.unfolded(owner.accountId),
        owner.agentId ? changes.unfolded(owner.agentId) : false,
      ]);
      if (account || agent) return profileOnWriteSide(services, owner);
    }
    return (await readModel(owner)) ?? profileOnWriteSide(services, owner);
  };

/**
 * Wires trading into the runtime's services (ARCHITECTURE §3, §8): the wallet commands over the event store,
 * the read models (risk profile, status, starting balance of the owner from the accounts capability) and the
 * market data; and, with `matching`, the matching engine driven by the market's tick stream, with leader
 * election on PostgreSQL. The fee rates come from `TAKER_FEE_RATE`/`MAKER_FEE_RATE`, else `FEE_RATE` (default 0.001
 * = 0.1 %; `feeRatesOf`).
 */
export const installTrading = (services: Services, options: { matching: boolean }): TradingServices => {
  const { taker: feeRate, maker: makerFeeRate } = feeRatesOf(services.config);
  let view: MarketView | undefined;
  const orderGuards: OrderGuard[] = [];
  const ownWrites = new OwnerWatermarks(services.projections, services.config.READ_MODEL_WAIT_MS);
  let engine: MatchingEngine | undefined;
  const appendListeners = new Set<(events: readonly RecordedEvent[]) => void>();
  const appended = (events: readonly RecordedEvent[]) => {
    const last = events[events.length - 1];
    const owner = last && walletOwnerOf(last.streamId);
    // Every wallet append of this process (a matching-engine fill too) is a watermark of its owner: a client
    // told of it on the `orders` channel before its fold and then reading it waits for the fold.
    if (owner) ownWrites.record([owner], last.position);
    engine?.observeAppended(events);
    services.metrics.observeWalletAppend(events);
    for (const listener of appendListeners) listener(events);
  };
  const wallets = createWalletCommands({
    orderGuards,
    settled: (ownerId) => ownWrites.settle(ownerId),
    appended,
    store: services.eventStore,
    db: services.database.db,
    feeRate,
    makerFeeRate,
    fillModel: services.config.FILL_MODEL ?? 'realistic',
    snapshots: {
      store: services.snapshots,
      every: services.config.SNAPSHOT_EVERY,
      onError: (err, streamId) => services.logger.warn({ err, streamId }, 'wallet snapshot skipped'),
    },
    profileOf: ownerProfiles(
      services,
      services.projections.folding
        ? cachedProfiles(services)
        : (owner) => getTradingProfile(services.database.db, owner),
    ),
    market: () => {
      if (!services.market) return undefined;
      view ??= marketView(services.market);
      return view;
    },
  });
  const market = services.market;
  const leadership = createLeadership(services.database, { logger: services.logger });
  engine =
    options.matching && market
      ? new MatchingEngine({
          store: services.eventStore,
          wallets,
          ticks$: market.ticks$,
          lastTick: (symbol) => {
            const p = market.feed.prices.get(symbol);
            // A resting order placed while the feed is stale waits for a fresh tick instead of filling at the old price.
            return p && !market.staleness()
              ? { price: p.price, priceUnits: toUnitsNumber(p.price), time: p.time, source: p.source }
              : undefined;
          },
          leadership,
          // The index from the orders read model at its checkpoint, then the log after it (not the whole log).
          seed: () => readIndexSeed(services.database.db),
          ...(services.projections.folding
            ? { folded: (listener: FoldListener) => services.projections.onFolded(listener) }
            : {}),
          logger: services.logger,
        })
      : undefined;
  const trading: TradingServices = {
    wallets,
    orderGuards,
    ownWrites,
    onAppended: (listener) => {
      appendListeners.add(listener);
      return () => appendListeners.delete(listener);
    },
    ...(engine ? { engine } : {}),
    feeRate,
    makerFeeRate,
    start: async () => {
      await engine?.start();
    },
    stop: async () => {
      await engine?.stop();
      // Snapshots being written finish before the database closes.
      await wallets.snapshotsWritten();
    },
  };
  if (engine) {
    services.leaderships.push(leadership);
    services.healthChecks.push({ name: 'matching_engine', check: async () => ({ ...engine.status() }) });
  }
  services.trading = trading;
  return trading;
};

/** The trading services, or an error when the runtime was built without them. */
export const trading = (services: Services): TradingServices => installed(services, 'trading');
