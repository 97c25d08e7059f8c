import { dec } from '../../domain/trading/decimal';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';
import type { EventStore } from '../../ports/event-store';
import type { Mark } from '../trading/present';

/** A wallet folded up to a past time: its state, the last revision folded (-1: none) and each symbol's last fill. */
export interface WalletAsOf {
  state: WalletState;
  revision: number;
  /** Per symbol, the reference price of its last fill at or before the time (`price_source: last_fill`). */
  marks: Map<string, Mark>;
}

/** Events read per page of the stream (the fold stops reading at the first page that reaches past the time). */
const PAGE = 1_000;

/**
 * Folds `wallet-{ownerId}` up to `asOf` (business time, `metadata.occurred_at`, inclusive) for time travel
 * (ARCHITECTURE §6 "portfolio as of T"; `GET /account/portfolio?as_of=`): the prefix of the stream before its first
 * event later than `asOf` (the order events were decided in: filtering by time could fold a cancel without its
 * order), with the ledger's own `evolve`. The stream is read a page at a time and the read stops at that first
 * later event, so the cost is that of the events before `asOf`, whatever the wallet did after it (issue 20): a
 * time early in a long history is as cheap as in a short one. Only the log is read (no snapshot: a snapshot's
 * revision cannot tell whether an earlier event's business time lies after `asOf`).
 */
export const walletAsOf = async (
  store: EventStore,
  ownerId: string,
  asOf: Date,
  pageSize = PAGE,
): Promise<WalletAsOf> => {
  const streamId = walletStreamId(ownerId);
  const limit = asOf.getTime();
  let state = walletDecider.initialState();
  let revision = -1;
  const marks = new Map<string, Mark>();
  for (let from = 0; ; from += pageSize) {
    const page = await store.readStream(streamId, { fromRevision: from, maxCount: pageSize });
    for (const e of page) {
      if (Date.parse(e.metadata.occurred_at) > limit) return { state, revision, marks };
      const event = { type: e.type, data: e.data } as WalletEvent;
      state = walletDecider.evolve(state, event);
      revision = e.revision;
      if (event.type === 'OrderFilled')
        marks.set(event.data.symbol, { price: dec(event.data.reference_price), source: 'last_fill' });
    }
    if (page.length < pageSize) return { state, revision, marks };
  }
};
