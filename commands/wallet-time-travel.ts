import { walletSnapshotCodec } from '../domain/wallet/snapshot';
import type { WalletState } from '../domain/wallet/state';
import type { RecordedEvent } from '../ports/event-store';
import type { SnapshotAnnex, SnapshotCodec } from './snapshots';

/**
 * What time travel (`GET /account/portfolio?as_of=`, `src/audit/wallet-as-of.ts`) needs of a wallet's events
 * beyond the decider's state, folded over them and kept with each wallet snapshot (its annex, issue 20).
 */
export interface WalletTimeTravel {
  /**
   * The latest business time (`metadata.occurred_at`, epoch ms) of the events folded, null before any (or when
   * none has a readable time). A snapshot is a valid start for a fold up to `T` exactly when this is at or before
   * `T`: the fold up to `T` stops at the first event later than `T`, and business times may go back a little, so
   * the last event's own time would not do.
   */
  latestAt: number | null;
  /** Per symbol, the `reference_price` of its last `OrderFilled` (symbols in the order of their first fill). */
  lastFills: Readonly<Record<string, string>>;
}

/** The wallet's time-travel fold (immutable values: a new one only when an event changes it). */
export const walletTimeTravelAnnex: SnapshotAnnex<WalletTimeTravel> = {
  initial: () => ({ latestAt: null, lastFills: {} }),
  evolve: (annex, event: RecordedEvent) => {
    let next = annex;
    const at = Date.parse(event.metadata.occurred_at);
    // An unreadable time never stops the fold up to a time (`>` is false for NaN), so it cannot make a start invalid.
    if (!Number.isNaN(at) && (next.latestAt === null || at > next.latestAt)) next = { ...next, latestAt: at };
    if (event.type === 'OrderFilled') {
      const { symbol, reference_price: price } = event.data as { symbol: string; reference_price: string };
      if (next.lastFills[symbol] !== price)
        next = { ...next, lastFills: { ...next.lastFills, [symbol]: price } };
    }
    return next;
  },
  encode: (annex) => JSON.stringify(annex),
  timeOf: (annex) => annex.latestAt,
  decode: (text) => {
    const value = JSON.parse(text) as WalletTimeTravel;
    if (
      (value.latestAt !== null && typeof value.latestAt !== 'number') ||
      typeof value.lastFills !== 'object' ||
      value.lastFills === null
    )
      throw new TypeError('not a wallet time-travel annex');
    return value;
  },
};

/** Wallet snapshots as the wallet commands write them: the state (`walletSnapshotCodec`) and the time-travel annex. */
export const walletSnapshotFormat: SnapshotCodec<WalletState, WalletTimeTravel> = {
  ...walletSnapshotCodec,
  annex: walletTimeTravelAnnex,
};
