import { SingleBar } from 'cli-progress';
import type { Logger } from 'pino';
import { allGenerations } from '../../projections/generations';
import type { Projection } from '../../projections/projection';
import { rebuildProjection } from '../../projections/rebuild';
import { allProjections } from '../../projections/registry';
import { verifyWalletSnapshots } from '../audit/snapshot-audit';
import type { Config } from '../config';
import { usageError } from './errors';
import { openReadingRuntime } from './runtime';

/** Left-aligned columns, a header and a rule: readable in a terminal and in a log. */
export const formatTable = (rows: Record<string, string | number>[]): string => {
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]!);
  const width = (c: string) => Math.max(c.length, ...rows.map((r) => String(r[c]).length));
  const line = (cells: string[]) =>
    cells
      .map((v, i) => v.padEnd(width(columns[i]!)))
      .join('  ')
      .trimEnd();
  return [
    line(columns),
    line(columns.map((c) => '-'.repeat(width(c)))),
    ...rows.map((r) => line(columns.map((c) => String(r[c])))),
  ].join('\n');
};

/**
 * `projections status`: each projection's code version, live generation (and the version it was built with),
 * checkpoint and lag in events, and what needs doing: a live generation of another version is rebuilt by the
 * next `serve`/`worker` start or by `projections rebuild NAME`; a generation still `building` is a rebuild in
 * progress, or the remains of one that was interrupted.
 */
export const projectionsStatus = async (config: Config, logger: Logger): Promise<void> => {
  const runtime = await openReadingRuntime(config, logger);
  try {
    const rows = await runtime.services.projections.status();
    const generations = await allGenerations(runtime.services.database.db);
    console.log(
      formatTable(
        rows.map((r) => {
          const live = generations.find((g) => g.name === r.name && g.status === 'live');
          const building = generations.find((g) => g.name === r.name && g.status === 'building');
          const notes = [
            ...(!live ? ['no live generation: folded at the next start'] : []),
            ...(live && live.version !== r.version
              ? [`built by version ${live.version}: rebuild needed (the next start does it)`]
              : []),
            ...(building
              ? [
                  `generation ${building.generation} building (a rebuild running, or one that was interrupted)`,
                ]
              : []),
          ];
          return {
            name: r.name,
            version: r.version,
            generation: live ? live.generation : '-',
            checkpoint: r.checkpoint,
            lag_events: r.lag_events ?? '?',
            state: notes.length ? notes.join('; ') : r.lag_events ? 'behind' : 'up to date',
          };
        }),
      ),
    );
  } finally {
    await runtime.close();
  }
};

/** The projection called `name` (all without a name); an unknown name is a usage error (exit code 2). */
export const projectionsNamed = (name: string | undefined): Projection[] => {
  const targets = name ? allProjections.filter((p) => p.name === name) : allProjections;
  if (name && targets.length === 0) {
    throw usageError(`unknown projection: ${name} (known: ${allProjections.map((p) => p.name).join(', ')})`);
  }
  return targets;
};

/**
 * `projections rebuild [name] [--verify]`: rebuilds one or all projections beside the live tables and swaps
 * them in (no downtime), with a progress bar. With `--verify`, swaps only when the rebuilt tables equal the
 * live ones row by row; differences are printed and the exit code is 1. `--verify` of all projections also checks
 * every wallet snapshot against the wallet replayed from event 0 (`SNAPSHOT DIFFERS`, exit code 1). An unknown name is a usage error
 * (exit code 2).
 */
export const projectionsRebuild = async (
  config: Config,
  logger: Logger,
  name: string | undefined,
  options: { verify?: boolean },
): Promise<number> => {
  const targets = projectionsNamed(name);
  const runtime = await openReadingRuntime(config, logger);
  let exitCode = 0;
  try {
    for (const projection of targets) {
      const bar = new SingleBar({
        format: `${projection.name.padEnd(20)} [{bar}] {percentage}% | {value}/{total} events | {rate} events/s`,
        hideCursor: true,
        noTTYOutput: true,
        notTTYSchedule: 2000,
      });
      let started = false;
      let result: Awaited<ReturnType<typeof rebuildProjection>>;
      try {
        result = await rebuildProjection(
          runtime.services.eventStore,
          runtime.services.database.db,
          projection,
          {
            verify: options.verify ?? false,
            onProgress: (p) => {
              if (!started) {
                bar.start(p.total ?? p.processed, 0, { rate: 0 });
                started = true;
              }
              if (p.total === undefined || p.processed > p.total) bar.setTotal(p.processed);
              bar.update(p.processed, { rate: Math.round(p.eventsPerSecond) });
            },
          },
        );
      } finally {
        if (started) bar.stop();
      }
      const rate = Math.round(result.processed / Math.max(result.seconds, 1e-6));
      const took = `${result.processed} events in ${result.seconds.toFixed(2)} s (${rate} events/s)`;
      if (result.swapped) {
        console.log(`${projection.name}: ${took}, generation ${result.generation.generation} swapped in`);
      } else {
        console.log(
          `${projection.name}: ${took}; the rebuild DIFFERS from the live tables: not swapped (the live generation keeps serving, the rebuilt one was dropped)`,
        );
      }
      if (result.differences) {
        if (result.differences.length === 0) {
          console.log(`${projection.name}: verify: ${result.comparedTables} table(s) identical row by row`);
        } else {
          exitCode = 1;
          for (const d of result.differences) {
            console.log(
              `${projection.name}: verify: ${d.table}: ${d.onlyInRebuilt} row(s) only in the rebuild, ${d.onlyInLive} only in the live table; examples:`,
            );
            console.log(JSON.stringify(d.samples, null, 2));
          }
        }
      }
    }
    if (options.verify && name === undefined) {
      // Snapshots are a cache of the write side, checked like the read models: against the log from event 0.
      const report = await verifyWalletSnapshots(runtime.services.eventStore, runtime.services.snapshots);
      for (const d of report.differing) console.log(`SNAPSHOT DIFFERS ${d.streamId} ${d.text}`);
      const checked = report.equal + report.otherVersion + report.differing.length;
      console.log(
        `snapshots: verify: ${
          report.differing.length
            ? `${report.differing.length} of ${checked} wallet snapshot(s) differ from the replay`
            : `${checked} wallet snapshot(s) equal to the replay`
        }${report.otherVersion ? ` (${report.otherVersion} of another state version, ignored by loads)` : ''}`,
      );
      if (report.differing.length) exitCode = 1;
    }
  } finally {
    await runtime.close();
  }
  return exitCode;
};
