import {
  decodeSnapshot,
  eventsAfterSnapshot,
  HistoryCollector,
  type HistoryOffer,
  type LoadedSnapshot,
} from '../../commands/snapshots';
import { type WalletTimeTravel, walletSnapshotFormat } from '../../commands/wallet-time-travel';
import { dec } from '../../domain/trading/decimal';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';
import { type EventStore, type RecordedEvent, readStreamPages } from '../../ports/event-store';
import type { SnapshotStore, StoredSnapshot } from '../../ports/snapshot-store';
import type { Mark } from '../trading/present';

/** A wallet folded up to a past time: its state, the last revision folded (-1: none) and each symbol's last fill. */
export interface WalletAsOf {
  state: WalletState;
  revision: number;
  /** Per symbol, the reference price of its last fill at or before the time (`price_source: last_fill`). */
  marks: Map<string, Mark>;
}

/** Options of {@link walletAsOf}. */
export interface WalletAsOfOptions {
  /** Where the wallet's snapshot is kept: the fold starts from it when it is a valid start for the time. */
  snapshots?: SnapshotStore;
  /** Events read per page of the stream (default 1,000). */
  pageSize?: number;
  /**
   * Fills in the sparse history of older snapshots as the fold passes it: each state at the first event of a
   * history bucket (every `spacing` events) the fold goes through is handed to `offer` once the fold is done (the
   * caller writes them, off its answer's path, with `SnapshotStore.writeHistory`: a bucket already kept stays).
   * So a wallet whose history was written only going forward (older than migration 0010 or than a state version
   * bump) pays the fold from event 0 once, and a later time in that part of its history starts near it.
   */
  history?: { spacing: number; offer: (offers: HistoryOffer[]) => void };
}

/** Events read per page of the stream (the fold stops reading at the first page that reaches past the time). */
const PAGE = 1_000;

/**
 * Folds `wallet-{ownerId}` up to `asOf` (business time, `metadata.occurred_at`, inclusive) for time travel
 * (ARCHITECTURE §6 "portfolio as of T"; `GET /account/portfolio?as_of=`): the prefix of the stream before its first
 * event later than `asOf` (the order events were decided in: filtering by time could fold a cancel without its
 * order), with the ledger's own `evolve`. The stream is read a page at a time and the read stops at that first
 * later event, so the cost is that of the events before `asOf`, whatever the wallet did after it (issue 20).
 *
 * With `snapshots`, the fold starts from the wallet's snapshot instead of event 0 when that snapshot is entirely
 * at or before `asOf` — its annex's latest business time (`commands/wallet-time-travel.ts`) is at or before
 * `asOf`, so the prefix reaches past its revision — and is still the log's (its event's hash is the log's event's
 * at that revision, of the current schema, decodable); else from the newest such snapshot of the wallet's sparse
 * history of older ones (one per 10 × `SNAPSHOT_EVERY` events): a time anywhere in the history costs at most the
 * events of about one history spacing (plus the events of one business time), however long the history before
 * and after. With neither, the fold starts from event 0; all give the same answer
 * (`test/trading/wallet-as-of.int.test.ts`).
 */
export const walletAsOf = async (
  store: EventStore,
  ownerId: string,
  asOf: Date,
  options: WalletAsOfOptions = {},
): Promise<WalletAsOf> => {
  const streamId = walletStreamId(ownerId);
  const pageSize = options.pageSize ?? PAGE;
  const limit = asOf.getTime();
  const fold = walletSnapshotFormat.annex!;
  const start = options.snapshots
    ? await snapshotStart(store, options.snapshots, streamId, limit, pageSize)
    : undefined;
  let state = start?.state ?? walletDecider.initialState();
  let annex = start?.annex ?? fold.initial();
  let revision = start?.revision ?? -1;
  const collector =
    options.history && new HistoryCollector(walletSnapshotFormat, streamId, options.history.spacing);
  const result = () => {
    if (collector?.offers.length) options.history!.offer(collector.offers);
    return { state, revision, marks: marksOf(annex) };
  };
  for await (const page of readStreamPages(store, streamId, {
    fromRevision: revision + 1,
    pageSize,
    firstPage: start?.tail,
  })) {
    for (const e of page) {
      if (Date.parse(e.metadata.occurred_at) > limit) return result();
      state = walletDecider.evolve(state, { type: e.type, data: e.data } as WalletEvent);
      annex = fold.evolve(annex, e);
      revision = e.revision;
      collector?.folded(state, annex, revision, e.metadata.hash);
    }
  }
  return result();
};

const marksOf = (annex: WalletTimeTravel): Map<string, Mark> =>
  new Map(
    Object.entries(annex.lastFills).map(([symbol, price]) => [
      symbol,
      { price: dec(price), source: 'last_fill' as const },
    ]),
  );

/**
 * The latest snapshot of the wallet to start a fold up to `limit` (epoch ms) from, with the page of events after
 * it, or undefined when there is none to use: the newest snapshot if it is a valid start, else the newest
 * historical one at or before `limit` (`SnapshotStore.readHistory`) if that is. Neither is used when of another
 * schema, without an annex (written before it existed), with a latest business time after `limit`, of another
 * history than the log's (hash), or with text that cannot be decoded.
 */
const snapshotStart = async (
  store: EventStore,
  snapshots: SnapshotStore,
  streamId: string,
  limit: number,
  pageSize: number,
): Promise<Start | undefined> =>
  (await startFrom(store, await snapshots.read(streamId), streamId, limit, pageSize)) ??
  startFrom(
    store,
    await snapshots.readHistory(streamId, walletSnapshotFormat.schema, limit),
    streamId,
    limit,
    pageSize,
  );

/** A start of the fold: a snapshot's state, annex and revision, and the page of events after it. */
interface Start {
  state: WalletState;
  annex: WalletTimeTravel;
  revision: number;
  tail: RecordedEvent[];
}

/** `row` as the start of a fold up to `limit`, if it is a valid one (see {@link snapshotStart}). */
const startFrom = async (
  store: EventStore,
  row: StoredSnapshot | undefined,
  streamId: string,
  limit: number,
  pageSize: number,
): Promise<Start | undefined> => {
  let loaded: LoadedSnapshot<WalletState, WalletTimeTravel> | undefined;
  try {
    loaded = decodeSnapshot(walletSnapshotFormat, row);
  } catch {
    return undefined;
  }
  const annex = loaded?.annex;
  if (!loaded || !annex || annex.latestAt === null || annex.latestAt > limit) return undefined;
  // The snapshot's own event (to check it is still the log's) and a page after it, in one read.
  const tail = await eventsAfterSnapshot(store, streamId, loaded, pageSize + 1);
  if (!tail) return undefined;
  return { state: loaded.state, annex, revision: loaded.revision, tail };
};
