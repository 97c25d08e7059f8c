import type { Logger } from 'pino';
import { replayWallet, stateSummary, verifyAllChains } from '../audit/wallet-audit';
import { type Config, ConfigError } from '../config';
import { createRuntime } from '../runtime';

/**
 * `audit replay --agent ID [--as-of T]` (also `--account ID`): prints the wallet's timeline event by event, the
 * state folded from it (at `T`), checks the hash chain and, for the present state, compares the fold with the read
 * models. Exit code 1 when the chain is broken or a read model differs.
 */
export const auditReplay = async (
  config: Config,
  logger: Logger,
  options: { agent?: string; account?: string; asOf?: string; json?: boolean },
): Promise<number> => {
  const ownerId = options.agent ?? options.account;
  if (!ownerId) throw new ConfigError('give --agent ID or --account ID');
  const asOf = options.asOf ? new Date(options.asOf) : undefined;
  if (asOf && Number.isNaN(asOf.getTime()))
    throw new ConfigError(`--as-of must be an ISO 8601 time, got ${options.asOf}`);
  const runtime = await createRuntime(config, logger, { runProjections: false, market: false });
  try {
    const { eventStore, database } = runtime.services;
    // Read models must include everything in the log before they are compared.
    await runtime.services.projections.start();
    await runtime.services.projections.waitFor(await eventStore.headPosition(), 60_000);
    const replay = await replayWallet(eventStore, database.db, ownerId, asOf);
    if (replay.events.length === 0) {
      console.error(`no wallet events for ${ownerId}${asOf ? ` at or before ${asOf.toISOString()}` : ''}`);
      return 1;
    }
    if (options.json) {
      console.log(
        JSON.stringify(
          {
            stream: replay.streamId,
            as_of: asOf?.toISOString() ?? null,
            events: replay.events.length,
            state: stateSummary(replay.state),
            chain: replay.chainBreak ?? 'intact',
            read_models: replay.checkedReadModels
              ? replay.mismatches.length
                ? replay.mismatches
                : 'match'
              : 'not compared (as of a past time)',
          },
          null,
          2,
        ),
      );
    } else {
      console.log(
        `${replay.streamId}${asOf ? ` as of ${asOf.toISOString()}` : ''}: ${replay.events.length} events`,
      );
      for (const line of replay.timeline) console.log(line);
      console.log('\nfolded state:');
      console.log(JSON.stringify(stateSummary(replay.state), null, 2));
      console.log(
        `\nhash chain: ${replay.chainBreak ? `BROKEN at revision ${replay.chainBreak.revision} (${replay.chainBreak.reason})` : 'intact'}`,
      );
      if (replay.checkedReadModels) {
        console.log(
          replay.mismatches.length
            ? `read models: ${replay.mismatches.length} difference(s)\n  ${replay.mismatches.join('\n  ')}`
            : 'read models: match the folded state',
        );
      } else console.log('read models: not compared (they hold the present, not the past)');
    }
    return replay.chainBreak || replay.mismatches.length ? 1 : 0;
  } finally {
    await runtime.close();
  }
};

/** `audit verify [--stream S]`: recomputes the hash chain of every stream; exit code 1 on any break. */
export const auditVerify = async (
  config: Config,
  logger: Logger,
  options: { stream?: string[] },
): Promise<number> => {
  const runtime = await createRuntime(config, logger, { runProjections: false, market: false });
  try {
    const { eventStore, database } = runtime.services;
    if (!options.stream?.length) {
      await runtime.services.projections.start();
      await runtime.services.projections.waitFor(await eventStore.headPosition(), 60_000);
    }
    const audit = await verifyAllChains(
      eventStore,
      database.db,
      options.stream?.length ? options.stream : undefined,
    );
    for (const b of audit.breaks) {
      console.log(
        `BROKEN ${b.streamId} at revision ${b.revision}: ${b.reason} (expected ${b.expected}, found ${b.actual})`,
      );
    }
    console.log(
      `${audit.streams} streams, ${audit.events} events: ${audit.breaks.length ? `${audit.breaks.length} broken chain(s)` : 'every hash chain intact'}`,
    );
    return audit.breaks.length ? 1 : 0;
  } finally {
    await runtime.close();
  }
};
