import type { Kysely } from 'kysely';
import { dec, fmt } from '../../domain/trading/decimal';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';
import { type EventStore, type RecordedEvent, readStreamPages } from '../../ports/event-store';
import type { ReadModels } from '../../projections/read-models';
import { readSnapshot } from '../../queries/snapshot';
import {
  foldedRevision,
  getBalances,
  getPositions,
  getWallet,
  listOrders,
  OPEN_STATUSES,
} from '../../queries/trading';
import { type ChainBreak, ChainVerifier, verifyChain } from '../eventstore/hash-chain';

/** One line of a wallet's timeline: what happened, in words an auditor reads. */
export const describeWalletEvent = (e: RecordedEvent): string => {
  const event = { type: e.type, data: e.data } as WalletEvent;
  const head = `#${String(e.revision).padStart(4)}  ${e.metadata.occurred_at}  ${e.type.padEnd(16)}`;
  switch (event.type) {
    case 'WalletOpened':
      return `${head} ${event.data.owner_type} ${event.data.owner_id}`;
    case 'SessionStarted':
      return `${head} session ${event.data.session_id} (${event.data.reason}) starting balance ${event.data.starting_balance} USDT`;
    case 'TradingDayOpened':
      return `${head} ${event.data.day} opening equity ${event.data.equity} USDT`;
    case 'OrderPlaced': {
      const d = event.data;
      const level = d.price ? ` @ ${d.price}` : d.trigger_price ? ` trigger ${d.trigger_price}` : '';
      const list = d.order_list_id ? `, ${d.list_kind} ${d.list_role} of list ${d.order_list_id}` : '';
      const locks = d.lock_shared
        ? `shares its list's lock of ${d.locked_amount}`
        : `locks ${d.locked_amount}`;
      return `${head} ${d.side} ${d.type} ${d.quantity} ${d.symbol}${level}; ${locks} ${d.lock_asset} (order ${d.order_id}${list})`;
    }
    case 'OrderFilled': {
      const d = event.data;
      return (
        `${head} ${d.side} ${d.quantity} ${d.symbol} @ ${d.executed_price} (${d.trigger}; reference ${d.reference_price} ` +
        `from ${d.price_source} at ${d.reference_time}, slippage ${d.slippage_pct}%); fee ${d.fee}, total ${d.total}, ` +
        `realized ${d.realized_pnl}; released ${d.released_amount}; now holds ${d.position_after.quantity} ` +
        `(avg ${d.position_after.avg_entry_price}) (order ${d.order_id}, trade ${d.trade_id})`
      );
    }
    case 'OrderCancelled':
      return `${head} order ${event.data.order_id} (${event.data.reason}); released ${event.data.unlocked_amount} ${event.data.unlocked_asset}`;
    case 'OrderRejected':
      return `${head} ${event.data.side} ${event.data.type} ${event.data.quantity} ${event.data.symbol}: ${event.data.code} — ${event.data.message}`;
    case 'WalletReset':
      return `${head} session ${event.data.previous_session_id} ended (${event.data.reason}) at equity ${event.data.ending_equity}, PnL ${event.data.total_pnl}`;
    default:
      return `${head} ${JSON.stringify(e.data)}`;
  }
};

/** The folded state of a wallet as plain figures. */
export const stateSummary = (state: WalletState) => ({
  session_id: state.session?.id ?? null,
  starting_balance: state.session ? fmt(state.session.startingBalance) : null,
  cash: fmt(state.cash),
  locked_cash: fmt(state.lockedCash),
  realized_pnl: fmt(state.realizedPnl),
  fees_paid: fmt(state.feesPaid),
  positions: Object.values(state.holdings).map((h) => ({
    asset: h.asset,
    quantity: fmt(h.quantity),
    locked: fmt(h.locked),
    cost_basis: fmt(h.cost),
  })),
  open_orders: Object.values(state.openOrders).map((o) => ({
    order_id: o.orderId,
    symbol: o.symbol,
    side: o.side,
    type: o.type,
    quantity: fmt(o.quantity),
    locked: fmt(o.lockedAmount),
  })),
});

/** The read models of a wallet in one snapshot, with the last revision of its stream they include. */
const readModelsOf = (db: Kysely<ReadModels>, ownerId: string) =>
  readSnapshot(db, async (trx) => ({
    balances: await getBalances(trx, ownerId),
    positions: await getPositions(trx, ownerId),
    open: await listOrders(trx, ownerId, { statuses: OPEN_STATUSES, limit: 10_000, offset: 0 }),
    wallet: await getWallet(trx, ownerId),
    revision: await foldedRevision(trx, walletStreamId(ownerId)),
  }));

/**
 * The differences, in words, between `folded` (the log folded up to the revision the read models include) and
 * the read models: balances, positions, open orders, the session and its figures.
 */
const readModelMismatches = (
  folded: WalletState,
  models: Awaited<ReturnType<typeof readModelsOf>>,
): string[] => {
  const mismatches: string[] = [];
  const { balances, positions, open, wallet } = models;
  const eq = (what: string, fromLog: string, fromModel: string | undefined) => {
    if (fromModel === undefined || !dec(fromLog).eq(fromModel)) {
      mismatches.push(`${what}: log ${fromLog}, read model ${fromModel ?? 'missing'}`);
    }
  };
  const usdt = balances.find((b) => b.asset === 'USDT');
  eq('USDT available', folded.cash.toFixed(), usdt?.available);
  eq('USDT locked', folded.lockedCash.toFixed(), usdt?.locked);
  for (const h of Object.values(folded.holdings)) {
    const b = balances.find((x) => x.asset === h.asset);
    const p = positions.find((x) => x.asset === h.asset);
    eq(`${h.asset} available`, h.quantity.minus(h.locked).toFixed(), b?.available);
    eq(`${h.asset} locked`, h.locked.toFixed(), b?.locked);
    eq(`${h.asset} position`, h.quantity.toFixed(), p?.quantity);
    eq(`${h.asset} cost basis`, h.cost.toFixed(), p?.cost_basis);
  }
  for (const p of positions) {
    if (!folded.holdings[p.asset])
      mismatches.push(`${p.asset} position ${p.quantity} in the read model, none in the log`);
  }
  for (const b of balances) {
    if (b.asset !== 'USDT' && !folded.holdings[b.asset]) {
      mismatches.push(`${b.asset} balance in the read model, none in the log`);
    }
  }
  const logOpen = new Set(Object.keys(folded.openOrders));
  const modelOpen = new Set(open.rows.map((o) => o.order_id));
  for (const id of logOpen)
    if (!modelOpen.has(id)) mismatches.push(`order ${id} open in the log, not in the read model`);
  for (const id of modelOpen)
    if (!logOpen.has(id)) mismatches.push(`order ${id} open in the read model, not in the log`);
  if (wallet?.wallet.session_id !== folded.session?.id) {
    mismatches.push(
      `session: log ${folded.session?.id}, read model ${wallet?.wallet.session_id ?? 'missing'}`,
    );
  }
  eq('realized PnL', folded.realizedPnl.toFixed(), wallet?.session?.realized_pnl);
  eq('fees paid', folded.feesPaid.toFixed(), wallet?.session?.fees_paid);
  return mismatches;
};

/** The outcome of {@link replayWallet}. */
export interface WalletReplay {
  streamId: string;
  /** Events folded (those at or before `asOf`). */
  events: RecordedEvent[];
  timeline: string[];
  state: WalletState;
  /** The hash chain of the whole stream (null: intact). */
  chainBreak: ChainBreak | null;
  /** Differences between the folded state and the read models (only checked without `asOf`). */
  mismatches: string[];
  checkedReadModels: boolean;
  /** The last revision of the stream the read models include (-1: none yet; they may lag the log). */
  readModelsRevision: number;
}

/**
 * Replays a wallet for an auditor (issue item 7, ARCHITECTURE §1, §6): reads `wallet-{ownerId}`, folds it up to
 * `asOf` (business time, inclusive) with the same `evolve` the ledger uses, verifies the stream's hash chain, and
 * — for the present state — compares the read models (balances, positions, open orders, session figures, read
 * in one snapshot) with the fold up to the revision they include, so a server trading meanwhile causes no false
 * difference. Every difference is reported in words.
 */
export const replayWallet = async (
  store: EventStore,
  db: Kysely<ReadModels>,
  ownerId: string,
  asOf?: Date,
): Promise<WalletReplay> => {
  const streamId = walletStreamId(ownerId);
  // The read models first, in one snapshot with the revision they include; then the log, which holds at least
  // that revision. The comparison folds the log up to it, so a fill committed meanwhile is no false mismatch.
  const models = await readModelsOf(db, ownerId);
  const all = await store.readStream(streamId);
  // The prefix before the first later event (the order events were decided in), as GET /account/portfolio?as_of
  // folds it: filtering by time could fold a cancel without the order it cancels when business times interleave.
  const cut = asOf ? all.findIndex((e) => Date.parse(e.metadata.occurred_at) > asOf.getTime()) : -1;
  const events = cut < 0 ? all : all.slice(0, cut);
  // One fold gives both the state at the end and the state at the revision the read models include (the fold
  // used to run twice, doubling a long wallet's audit).
  let state = walletDecider.initialState();
  let atModels = state;
  for (const e of events) {
    state = walletDecider.evolve(state, { type: e.type, data: e.data } as WalletEvent);
    if (e.revision <= models.revision) atModels = state;
  }
  const mismatches: string[] = [];
  const checkedReadModels = !asOf || events.length === all.length;
  // Read models that include none of the stream yet (they lag a wallet opened a moment ago) hold the same
  // nothing as the fold up to revision -1; whether they should have caught up is the caller's to say.
  if (checkedReadModels && all.length > 0 && models.revision >= 0)
    mismatches.push(...readModelMismatches(atModels, models));
  return {
    streamId,
    events,
    timeline: events.map(describeWalletEvent),
    state,
    chainBreak: verifyChain(all),
    mismatches,
    checkedReadModels,
    readModelsRevision: models.revision,
  };
};

/** Outcome of {@link verifyAllChains}. */
export interface ChainAudit {
  streams: number;
  events: number;
  breaks: ChainBreak[];
}

/**
 * Recomputes the SHA-256 chain of every stream (or of `streams`), listing each break (tampered data or metadata,
 * a removed or reordered event inside a stream). Streams come from the `stream_summaries` read model unless
 * given, and a stream's end is not compared with its head: a removed last event or a whole removed stream goes
 * unseen here. `audit verify` (src/cli/audit.ts) lists streams from the log itself and checks their ends; this
 * is the quick in-process check of the chains the tests use.
 */
export const verifyAllChains = async (
  store: EventStore,
  db: Kysely<ReadModels>,
  streams?: string[],
): Promise<ChainAudit> => {
  const ids =
    streams ??
    (await db.selectFrom('stream_summaries').select('stream_id').orderBy('stream_id').execute()).map(
      (r) => r.stream_id,
    );
  const breaks: ChainBreak[] = [];
  let events = 0;
  for (const id of ids) {
    const stream = await store.readStream(id);
    events += stream.length;
    const b = verifyChain(stream);
    if (b) breaks.push(b);
  }
  return { streams: ids.length, events, breaks };
};

/**
 * The end of a stream against its head: events removed at the end leave the head ahead of the last event, which
 * {@link verifyChain} (links between events present) cannot see. `null` when the events reach the head.
 */
export const streamTruncation = (
  streamId: string,
  head: number,
  events: readonly RecordedEvent[],
): ChainBreak | null => {
  const last = events.at(-1)?.revision ?? -1;
  if (head <= last) return null;
  return {
    streamId,
    revision: last + 1,
    reason: 'revision_gap',
    expected: `events up to revision ${head} (the stream head)`,
    actual: last < 0 ? 'no events' : `the last event is revision ${last}`,
  };
};

/** Outcome of {@link auditWalletNow}. */
export interface WalletAuditReport {
  streamId: string;
  /** Events in the stream (all of them were verified). */
  events: number;
  /** Revision of the last event (-1: the wallet has no events yet). */
  headRevision: number;
  /** `hash` of the last event, the value an auditor keeps to notice a rewritten history later. */
  lastHash: string | null;
  /** The first break of the hash chain or of the stream's end, or null when intact. */
  chainBreak: ChainBreak | null;
  /** The read models against the fold of the log up to the revision they include. */
  readModels: { revision: number; mismatches: string[] };
}

/**
 * The present state of a wallet's audit (ARCHITECTURE §4, §17; `GET /account/audit`, the dashboard's Audit
 * page): the SHA-256 chain of every event of `wallet-{ownerId}` recomputed, the stream's end compared with its
 * head, and the read models compared with the fold of the log (as {@link replayWallet}). The head is read first: a
 * later append can add events after it, but events can only be missing below it. Reads the whole stream, a page
 * (`pageSize`, default 5,000 events) at a time.
 */
export const auditWalletNow = async (
  store: EventStore,
  db: Kysely<ReadModels>,
  ownerId: string,
  options: { pageSize?: number } = {},
): Promise<WalletAuditReport> => {
  const streamId = walletStreamId(ownerId);
  const pageSize = options.pageSize ?? AUDIT_PAGE;
  const head = await store.streamRevision(streamId);
  // As `replayWallet`: the read models first, then the log, folded up to the revision they include — here a page
  // at a time, so the memory is one page whatever the wallet's history (a whole stream of millions of events in
  // one read would run the process out of memory on one request).
  const models = await readModelsOf(db, ownerId);
  const chain = new ChainVerifier();
  let state = walletDecider.initialState();
  let atModels = state;
  let last: RecordedEvent | undefined;
  let events = 0;
  for await (const page of readStreamPages(store, streamId, { pageSize })) {
    for (const e of page) {
      chain.next(e);
      state = walletDecider.evolve(state, { type: e.type, data: e.data } as WalletEvent);
      if (e.revision <= models.revision) atModels = state;
      last = e;
    }
    events += page.length;
  }
  const mismatches = last && models.revision >= 0 ? readModelMismatches(atModels, models) : [];
  return {
    streamId,
    events,
    headRevision: last?.revision ?? -1,
    lastHash: last?.metadata.hash ?? null,
    chainBreak: chain.chainBreak ?? streamTruncation(streamId, head, last ? [last] : []),
    readModels: { revision: models.revision, mismatches },
  };
};

/** Events read per page by {@link auditWalletNow}. */
const AUDIT_PAGE = 5_000;
