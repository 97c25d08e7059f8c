import { walletSnapshotFormat } from '../../commands/wallet-time-travel';
import { encodeState } from '../../domain/shared/state-codec';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletStreamId } from '../../domain/wallet/events';
import { WALLET_SNAPSHOT_SCHEMA, walletSnapshotCodec } from '../../domain/wallet/snapshot';
import type { WalletState } from '../../domain/wallet/state';
import type { EventStore, RecordedEvent } from '../../ports/event-store';
import type { SnapshotStore, StoredSnapshot } from '../../ports/snapshot-store';

/** What {@link verifyWalletSnapshot} found. */
export type SnapshotVerdict =
  /** The snapshot is the state replayed from event 0 up to its revision. */
  | { status: 'equal' }
  /** Of another state version: loads ignore it (it is rewritten by the next cold load). */
  | { status: 'other_version'; schema: string }
  /** Not the replayed state, or not of this log: `text` says how. */
  | { status: 'differs'; text: string };

/**
 * Auditors trust only the log (docs/architecture.md, "Snapshots"): a wallet snapshot is checked against the
 * stream replayed from event 0 — the log's event at the snapshot's revision must carry the hash it was taken
 * after, the state folded up to it must encode to exactly the snapshot's text, and its annex (the latest business
 * time and last fills time travel starts from, `commands/wallet-time-travel.ts`) must be the one folded from the
 * same events. A difference names the state's fields that differ. `events` is the whole stream in revision order (as `audit verify` reads it).
 */
export const verifyWalletSnapshot = (
  snapshot: StoredSnapshot,
  events: readonly RecordedEvent[],
): SnapshotVerdict => verifyWalletSnapshotsOf([snapshot], events)[0]!;

/**
 * {@link verifyWalletSnapshot} for several snapshots of one stream (its newest and its historical ones,
 * `SnapshotStore.history`) in one replay from event 0: the verdicts in the order of `snapshots`.
 */
export const verifyWalletSnapshotsOf = (
  snapshots: readonly StoredSnapshot[],
  events: readonly RecordedEvent[],
): SnapshotVerdict[] => {
  const verdicts: SnapshotVerdict[] = new Array(snapshots.length);
  const order = snapshots.map((_, i) => i).sort((x, y) => snapshots[x]!.revision - snapshots[y]!.revision);
  let replayed = walletDecider.initialState();
  const annexFold = walletSnapshotFormat.annex!;
  let annex = annexFold.initial();
  let folded = -1;
  for (const i of order) {
    const snapshot = snapshots[i]!;
    const at = snapshot.revision;
    const event = events[at];
    if (snapshot.schema !== WALLET_SNAPSHOT_SCHEMA)
      verdicts[i] = { status: 'other_version', schema: snapshot.schema };
    else if (!event || event.revision !== at)
      verdicts[i] = {
        status: 'differs',
        text: `at revision ${at}: the log has no such event (it ends at revision ${events.at(-1)?.revision ?? -1})`,
      };
    else if (event.metadata.hash !== snapshot.eventHash)
      verdicts[i] = {
        status: 'differs',
        text: `at revision ${at}: taken after an event with hash ${snapshot.eventHash}, the log's has ${event.metadata.hash}`,
      };
    else {
      for (; folded < at; folded++) {
        const e = events[folded + 1]!;
        replayed = walletDecider.evolve(replayed, { type: e.type, data: e.data } as WalletEvent);
        annex = annexFold.evolve(annex, e);
      }
      verdicts[i] = compare(snapshot, replayed, annexFold.encode(annex));
    }
  }
  return verdicts;
};

/** A snapshot of the current schema against the state and encoded annex replayed up to its revision. */
const compare = (snapshot: StoredSnapshot, replayed: WalletState, annex: string): SnapshotVerdict => {
  const at = snapshot.revision;
  const expected = encodeState(replayed);
  if (snapshot.state === expected) {
    // The annex time travel starts from (a snapshot written before it has none: loads ignore that one).
    if (snapshot.annex === undefined || snapshot.annex === annex) return { status: 'equal' };
    return {
      status: 'differs',
      text: `at revision ${at}: its time-travel annex differs from the one folded from event 0`,
    };
  }
  let stored: WalletState;
  try {
    stored = walletSnapshotCodec.decode(snapshot.state);
  } catch (error) {
    return { status: 'differs', text: `at revision ${at}: cannot be decoded (${(error as Error).message})` };
  }
  const fields = new Set([...Object.keys(replayed), ...Object.keys(stored)]);
  const differing = [...fields].filter(
    (k) =>
      encodeState((stored as unknown as Record<string, unknown>)[k] ?? null) !==
      encodeState((replayed as unknown as Record<string, unknown>)[k] ?? null),
  );
  return {
    status: 'differs',
    text: `at revision ${at}: differs from the state replayed from event 0 (${
      differing.length ? `fields ${differing.join(', ')}` : 'in its encoding'
    })`,
  };
};

/** What {@link verifyWalletSnapshots} found over every wallet snapshot. */
export interface SnapshotsReport {
  equal: number;
  otherVersion: number;
  /** The snapshots that are not the replay, with how (`verifyWalletSnapshot`'s text). */
  differing: { streamId: string; text: string }[];
}

/**
 * Every wallet snapshot of `snapshots` — each stream's newest and its historical ones (`SnapshotStore.history`) —
 * checked against its stream read from `store` and replayed from event 0 (`projections rebuild --verify`;
 * `audit verify` checks them stream by stream). One stream in memory at a time, replayed once.
 */
export const verifyWalletSnapshots = async (
  store: Pick<EventStore, 'readStream'>,
  snapshots: SnapshotStore,
): Promise<SnapshotsReport> => {
  const report: SnapshotsReport = { equal: 0, otherVersion: 0, differing: [] };
  for await (const snapshot of snapshots.list(walletStreamId(''))) {
    const all = [snapshot, ...(await snapshots.history(snapshot.streamId))];
    const verdicts = verifyWalletSnapshotsOf(all, await store.readStream(snapshot.streamId));
    for (const [i, verdict] of verdicts.entries()) {
      if (verdict.status === 'equal') report.equal++;
      else if (verdict.status === 'other_version') report.otherVersion++;
      else
        report.differing.push({
          streamId: snapshot.streamId,
          text: i === 0 ? verdict.text : `historical snapshot ${verdict.text}`,
        });
    }
  }
  return report;
};
