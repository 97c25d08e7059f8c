import { sql } from 'kysely';
import type { Logger } from 'pino';
import { walletDecider } from '../../domain/wallet/decide';
import { type WalletEvent, walletOwnerOf, walletStreamId } from '../../domain/wallet/events';
import type { WalletState } from '../../domain/wallet/state';
import { DELETIONS_STREAM, type EventStore, maxPosition, type RecordedEvent } from '../../ports/event-store';
import { verifyWalletSnapshotsOf } from '../audit/snapshot-audit';
import { describeWalletEvent, replayWallet, stateSummary, streamTruncation } from '../audit/wallet-audit';
import type { Config } from '../config';
import { type ChainBreak, verifyChain } from '../eventstore/hash-chain';
import { ownerOf, parseAsOf } from './audit-options';
import { CliError, usageError } from './errors';
import { openReadingRuntime } from './runtime';

/** How long `audit replay` lets the read models catch up with the log before comparing them with the fold. */
const CATCH_UP_MS = 60_000;

const fold = (events: readonly RecordedEvent[]): WalletState =>
  events.reduce(
    (state, e) => walletDecider.evolve(state, { type: e.type, data: e.data } as WalletEvent),
    walletDecider.initialState(),
  );

const describeBreak = (b: ChainBreak): string =>
  b.reason === 'revision_gap' && b.expected.startsWith('events up to')
    ? `events missing at the end: expected ${b.expected}, ${b.actual}`
    : `${b.reason} (expected ${b.expected || "''"}, found ${b.actual || "''"})`;

/**
 * `audit replay --agent ID | --account ID [--as-of T] [--json]`: prints the wallet's timeline event by event
 * (folded up to the first event after `T`, like `GET /account/portfolio?as_of=`), the state folded from it, the
 * hash chain of the whole stream and, for the present state, whether the read models agree with the fold (after
 * letting them catch up with the log). Exit code 0 when all is well, 1 on a broken chain, a read model that
 * differs or could not be compared, or an unknown owner; usage errors throw a {@link CliError} with code 2.
 */
export const auditReplay = async (
  config: Config,
  logger: Logger,
  options: { agent?: string; account?: string; asOf?: string; json?: boolean },
): Promise<number> => {
  const owner = ownerOf(options);
  const asOf = options.asOf === undefined ? undefined : parseAsOf(options.asOf);
  const runtime = await openReadingRuntime(config, logger);
  try {
    const { eventStore: store, database, projections } = runtime.services;
    const streamId = walletStreamId(owner.id);
    const ownerStream = `${owner.kind}-${owner.id}`;
    // The head first: a later append may add events after it, but events can only be missing below it.
    const head = await store.streamRevision(streamId);
    let all = await store.readStream(streamId);
    if (all.length === 0 && head < 0) {
      if ((await store.streamRevision(ownerStream)) < 0) {
        // No wallet yet and no such owner: the id may be the other kind's (an account that never traded itself).
        const other = owner.kind === 'agent' ? 'account' : 'agent';
        if ((await store.streamRevision(`${other}-${owner.id}`)) >= 0) {
          throw usageError(`${owner.id} is an ${other}, not an ${owner.kind}: use --${other} ${owner.id}`);
        }
        throw new CliError(
          `no ${owner.kind} ${owner.id} in the event log (no ${ownerStream} or ${streamId} stream${owner.kind === 'agent' ? '; a deleted agent leaves none' : ''})`,
        );
      }
    }
    const opened = all[0]?.type === 'WalletOpened' ? (all[0].data as { owner_type?: string }) : undefined;
    if (opened?.owner_type && opened.owner_type !== owner.kind) {
      throw usageError(
        `${owner.id} is an ${opened.owner_type}, not an ${owner.kind}: use --${opened.owner_type} ${owner.id}`,
      );
    }

    const cut = asOf ? all.findIndex((e) => Date.parse(e.metadata.occurred_at) > asOf.getTime()) : -1;
    let events: RecordedEvent[];
    let state: WalletState;
    let chainBreak: ChainBreak | null;
    let readModels:
      | { compared: true; mismatches: string[] }
      | { compared: false; why: string; failed: boolean };
    if (all.length === 0) {
      events = [];
      state = walletDecider.initialState();
      chainBreak = null;
      readModels = { compared: false, why: `the ${owner.kind} has not traded yet`, failed: false };
    } else if (cut >= 0) {
      // The past: the prefix of the stream before the first later event (the order it was decided in).
      events = all.slice(0, cut);
      state = fold(events);
      chainBreak = verifyChain(all);
      readModels = { compared: false, why: 'they hold the present, not the past', failed: false };
    } else {
      // The present: let the read models fold everything in the log, then compare.
      await projections.start();
      // Through the log's readable head and the stream's own last event: a stream read sees every committed event,
      // `$all` (what the read models fold) only those below every older open transaction on the server.
      const foldedThrough = async (stream: readonly RecordedEvent[]) => {
        const head = await store.headPosition();
        const last = stream.at(-1)?.position;
        return projections.waitFor(last ? maxPosition(last, head) : head, CATCH_UP_MS);
      };
      let caughtUp = await foldedThrough(all);
      let replay = await replayWallet(store, database.db, owner.id, asOf);
      // A wallet trading meanwhile (a server beside us on PostgreSQL) can move between reading its stream and
      // its read models: when they differ and the stream moved on, compare again (a few times).
      for (let attempt = 0; caughtUp && replay.mismatches.length && attempt < 3; attempt++) {
        const revision = await store.streamRevision(streamId);
        if (revision === (replay.events.at(-1)?.revision ?? -1)) break;
        caughtUp = await foldedThrough(
          await store.readStream(streamId, { fromRevision: revision, maxCount: 1 }),
        );
        replay = await replayWallet(store, database.db, owner.id, asOf);
      }
      events = replay.events;
      // Without --as-of the replay read the whole stream, including anything appended since our first read.
      if (!asOf && events.length > all.length) all = events;
      state = replay.state;
      chainBreak = replay.chainBreak;
      readModels = !caughtUp
        ? {
            compared: false,
            why: `they did not catch up with the log within ${CATCH_UP_MS / 1000} s (see projections status)`,
            failed: true,
          }
        : replay.checkedReadModels
          ? {
              compared: true,
              // Caught up with the head, the read models must include the whole stream.
              mismatches:
                replay.readModelsRevision < (replay.events.at(-1)?.revision ?? -1)
                  ? [
                      `the read models include revision ${replay.readModelsRevision} of the stream, the log ends at ${replay.events.at(-1)?.revision}`,
                      ...replay.mismatches,
                    ]
                  : replay.mismatches,
            }
          : { compared: false, why: 'events were appended after --as-of meanwhile', failed: false };
    }
    chainBreak ??= streamTruncation(streamId, head, all);

    const lastHash = all.at(-1)?.metadata.hash;
    if (options.json) {
      console.log(
        JSON.stringify(
          {
            stream: streamId,
            owner: { type: owner.kind, id: owner.id },
            as_of: asOf?.toISOString() ?? null,
            events: events.length,
            events_total: all.length,
            revision: events.at(-1)?.revision ?? -1,
            state: stateSummary(state),
            chain: chainBreak ?? 'intact',
            head_hash: lastHash ?? null,
            read_models: readModels.compared
              ? readModels.mismatches.length
                ? readModels.mismatches
                : 'match'
              : `not compared: ${readModels.why}`,
          },
          null,
          2,
        ),
      );
    } else {
      const counted = asOf ? `${events.length} of ${all.length} events` : `${all.length} events`;
      console.log(
        `${streamId} (${owner.kind} ${owner.id})${asOf ? ` as of ${asOf.toISOString()}` : ''}: ${counted}`,
      );
      for (const e of events) console.log(describeWalletEvent(e));
      if (asOf && events.length === 0 && all.length > 0)
        console.log(`(nothing yet: the wallet's first event is at ${all[0]!.metadata.occurred_at})`);
      console.log('\nfolded state:');
      console.log(JSON.stringify(stateSummary(state), null, 2));
      console.log(
        `\nhash chain: ${
          chainBreak
            ? `BROKEN at revision ${chainBreak.revision}: ${describeBreak(chainBreak)}`
            : all.length
              ? `intact (${all.length} events, head ${lastHash})`
              : 'no events'
        }`,
      );
      if (readModels.compared) {
        console.log(
          readModels.mismatches.length
            ? `read models: ${readModels.mismatches.length} difference(s)\n  ${readModels.mismatches.join('\n  ')}`
            : 'read models: match the folded state',
        );
      } else console.log(`read models: not compared (${readModels.why})`);
    }
    const failed = readModels.compared ? readModels.mismatches.length > 0 : readModels.failed;
    return chainBreak || failed ? 1 : 0;
  } finally {
    await runtime.close();
  }
};

/** A problem `audit verify` found in one stream. */
interface StreamProblem {
  streamId: string;
  text: string;
}

/** The streams of the log: every stream with events, and (PostgreSQL) every stream head. */
const logStreams = async (
  config: Config,
  store: EventStore,
  db: Parameters<typeof replayWallet>[1],
): Promise<string[]> => {
  if (config.EVENT_STORE === 'postgres') {
    const { rows } = await sql<{ stream_id: string }>`
      select stream_id from events union select stream_id from streams`.execute(db);
    return rows.map((r) => r.stream_id);
  }
  const ids = new Set<string>();
  let after: RecordedEvent['position'] | undefined;
  for (;;) {
    const page = await store.readAll({ ...(after ? { after } : {}), maxCount: 5_000 });
    for (const e of page.events) if (!e.streamId.startsWith('$')) ids.add(e.streamId);
    if (page.events.length < 5_000) break;
    after = page.next;
  }
  return [...ids];
};

/**
 * `audit verify [--stream S ...]`: recomputes the SHA-256 hash chain of every stream of the log (or of the
 * given ones) and checks each stream's end against what else recorded it: the stream head (PostgreSQL `streams`
 * row: its revision and last hash) and the `stream_summaries` read model (the last revision and hash it folded),
 * so an edited, removed or re-chained event is reported with its stream and revision. Each wallet's snapshots
 * (a cache, docs/architecture.md "Snapshots": the newest and the sparse history of older ones) are compared with
 * the wallet replayed from event 0, once; one that differs is reported (`SNAPSHOT DIFFERS`). Prints one line per problem and a summary; exit code 1 on any problem or an
 * unknown `--stream`. Reads only: the read models are
 * not caught up first (a read model behind the log is not a problem; one ahead of it is).
 */
export const auditVerify = async (
  config: Config,
  logger: Logger,
  options: { stream?: string[] },
): Promise<number> => {
  const runtime = await openReadingRuntime(config, logger);
  try {
    const { eventStore: store, database } = runtime.services;
    const db = database.db;
    const requested = options.stream?.length ? [...new Set(options.stream)] : undefined;
    const heads = new Map<string, { revision: number; lastHash: string }>();
    if (config.EVENT_STORE === 'postgres') {
      const { rows } = await sql<{ stream_id: string; revision: string; last_hash: string }>`
        select stream_id, revision::text as revision, last_hash from streams`.execute(db);
      for (const r of rows) heads.set(r.stream_id, { revision: Number(r.revision), lastHash: r.last_hash });
    }
    const summaries = new Map<string, { revision: number; lastHash: string }>();
    try {
      const rows = await db
        .selectFrom('stream_summaries')
        .select(['stream_id', 'last_revision', 'last_hash'])
        .execute();
      for (const r of rows)
        summaries.set(r.stream_id, { revision: Number(r.last_revision), lastHash: r.last_hash });
    } catch {
      // No read model yet (a database the projections never ran on): nothing to compare with.
    }
    const deleted = new Set(
      (await store.readStream(DELETIONS_STREAM)).map((e) => (e.data as { stream_id: string }).stream_id),
    );
    const ids = requested ?? [
      ...new Set([
        ...(await logStreams(config, store, db)),
        ...[...summaries.keys()].filter((id) => !deleted.has(id)),
      ]),
    ];
    ids.sort();

    const problems: StreamProblem[] = [];
    const missing: string[] = [];
    /** Wallet snapshots that are not the state replayed from event 0 (auditors trust only the log). */
    const snapshotProblems: StreamProblem[] = [];
    let snapshotsEqual = 0;
    let snapshotsOtherVersion = 0;
    let events = 0;
    let streams = 0;
    for (const id of ids) {
      const head = heads.get(id) ?? (config.EVENT_STORE === 'postgres' ? undefined : null);
      const revision = head === null ? await store.streamRevision(id) : (head?.revision ?? -1);
      const stream = await store.readStream(id);
      const summary = deleted.has(id) ? undefined : summaries.get(id);
      if (stream.length === 0 && revision < 0 && !summary) {
        if (requested) missing.push(id);
        continue;
      }
      streams++;
      events += stream.length;
      const last = stream.at(-1);
      const lastRevision = last?.revision ?? -1;
      const chainBreak = verifyChain(stream) ?? streamTruncation(id, revision, stream);
      if (chainBreak) {
        problems.push({
          streamId: id,
          text: `at revision ${chainBreak.revision}: ${describeBreak(chainBreak)}`,
        });
        continue;
      }
      if (config.EVENT_STORE === 'postgres' && last && !head) {
        problems.push({ streamId: id, text: 'has events but no stream head (its streams row was removed)' });
        continue;
      }
      if (head && last && head.revision === lastRevision && head.lastHash !== last.metadata.hash) {
        problems.push({
          streamId: id,
          text: `at revision ${lastRevision}: the chain was rewritten (the stream head records hash ${head.lastHash}, the last event has ${last.metadata.hash})`,
        });
        continue;
      }
      if (summary && summary.revision > lastRevision) {
        problems.push({
          streamId: id,
          text: `events missing: the read model folded up to revision ${summary.revision}, the log ends ${last ? `at revision ${lastRevision}` : 'with no events'}`,
        });
      } else if (summary && last && summary.revision >= 0) {
        const folded = stream.find((e) => e.revision === summary.revision);
        if (folded && folded.metadata.hash !== summary.lastHash) {
          problems.push({
            streamId: id,
            text: `at revision ${summary.revision}: the chain was rewritten (the read model folded hash ${summary.lastHash}, the log now has ${folded.metadata.hash})`,
          });
        }
      }
      // The wallet's snapshots (a cache: the newest and the historical ones) against the stream replayed from
      // event 0, in one replay.
      if (walletOwnerOf(id)) {
        const newest = await runtime.services.snapshots.read(id);
        const all = [...(newest ? [newest] : []), ...(await runtime.services.snapshots.history(id))];
        for (const [i, verdict] of verifyWalletSnapshotsOf(all, stream).entries()) {
          if (verdict.status === 'equal') snapshotsEqual++;
          else if (verdict.status === 'other_version') snapshotsOtherVersion++;
          else
            snapshotProblems.push({
              streamId: id,
              text: i === 0 && newest ? verdict.text : `historical snapshot ${verdict.text}`,
            });
        }
      }
    }
    for (const p of problems) console.log(`BROKEN ${p.streamId} ${p.text}`);
    for (const id of missing) console.log(`NOT FOUND ${id}: no such stream in the event log`);
    for (const p of snapshotProblems) console.log(`SNAPSHOT DIFFERS ${p.streamId} ${p.text}`);
    const checked = snapshotsEqual + snapshotsOtherVersion + snapshotProblems.length;
    const found = [
      problems.length ? `${problems.length} broken stream(s)` : 'every hash chain intact',
      ...(missing.length ? [`${missing.length} stream(s) not found`] : []),
      ...(checked
        ? [
            snapshotProblems.length
              ? `${snapshotProblems.length} of ${checked} snapshot(s) differ from the replay`
              : `${checked} snapshot(s) equal to the replay`,
          ]
        : []),
      ...(snapshotsOtherVersion
        ? [`${snapshotsOtherVersion} of another state version (ignored by loads)`]
        : []),
    ];
    console.log(`${streams} streams, ${events} events: ${found.join(', ')}`);
    return problems.length || missing.length || snapshotProblems.length ? 1 : 0;
  } finally {
    await runtime.close();
  }
};
