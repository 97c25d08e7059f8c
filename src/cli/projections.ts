import { SingleBar } from 'cli-progress';
import type { Logger } from 'pino';
import { rebuildProjection } from '../../projections/rebuild';
import { allProjections } from '../../projections/registry';
import type { Config } from '../config';
import { createRuntime } from '../runtime';

/** `projections status`: each projection's generation, state, checkpoint and lag, as a table. */
export const projectionsStatus = async (config: Config, logger: Logger): Promise<void> => {
  const runtime = await createRuntime(config, logger, { runProjections: false });
  try {
    const rows = await runtime.services.projections.status();
    console.table(
      rows.map((r) => ({
        name: r.name,
        version: r.version,
        generation: r.generation,
        checkpoint: r.checkpoint,
        lag_events: r.lag_events,
      })),
    );
  } finally {
    await runtime.close();
  }
};

/**
 * `projections rebuild [name] [--verify]`: rebuilds one or all projections beside the live tables and swaps
 * them in (no downtime), with a progress bar. With `--verify`, swaps only when the rebuilt tables equal the
 * live ones row by row; differences are printed and the exit code is 1.
 */
export const projectionsRebuild = async (
  config: Config,
  logger: Logger,
  name: string | undefined,
  options: { verify?: boolean },
): Promise<number> => {
  const targets = name ? allProjections.filter((p) => p.name === name) : allProjections;
  if (name && targets.length === 0) {
    console.error(`unknown projection: ${name} (known: ${allProjections.map((p) => p.name).join(', ')})`);
    return 2;
  }
  const runtime = await createRuntime(config, logger, { runProjections: false });
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
      const result = await rebuildProjection(
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
      if (started) bar.stop();
      const rate = Math.round(result.processed / Math.max(result.seconds, 1e-6));
      console.log(
        `${projection.name}: ${result.processed} events in ${result.seconds.toFixed(2)} s (${rate} events/s), generation ${result.generation.generation}, ${result.swapped ? 'swapped in' : 'NOT swapped'}`,
      );
      if (result.differences) {
        if (result.differences.length === 0) {
          console.log(`${projection.name}: verify: ${result.comparedTables} table(s) identical row by row`);
        } else {
          exitCode = 1;
          for (const d of result.differences) {
            console.log(
              `${projection.name}: verify: ${d.table}: ${d.onlyInRebuilt} row(s) only in the rebuild, ${d.onlyInLive} only in the live table`,
            );
            console.log(JSON.stringify(d.samples, null, 2));
          }
        }
      }
    }
  } finally {
    await runtime.close();
  }
  return exitCode;
};
