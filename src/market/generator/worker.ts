import { type FilePlan, type GeneratorSource, type PairPlan, planPairs, readGeneratorSource } from './plan';
import { type RenderOptions, renderFile } from './render';
import { writeZippedCsv } from './write-file';

/** One file for a generator worker thread: what to render and where to write it. */
export interface GenerateTask {
  anchorDir: string;
  pairs: number;
  file: FilePlan;
  render: RenderOptions;
  zipPath: string;
}

let cached: { key: string; source: GeneratorSource; plans: Map<string, PairPlan> } | undefined;

/**
 * Renders and writes one file (a piscina task). The worker reads the anchor data set and plans the pairs once, the
 * same way the coordinating thread did (both are deterministic), instead of receiving them with every task.
 * Resolves to the candles written and the zip's size.
 */
export default async (task: GenerateTask): Promise<{ candles: number; bytes: number }> => {
  const key = `${task.anchorDir}|${task.pairs}`;
  if (cached?.key !== key) {
    const source = readGeneratorSource(task.anchorDir);
    cached = { key, source, plans: new Map(planPairs(source, task.pairs).map((p) => [p.symbol, p])) };
  }
  const plan = cached.plans.get(task.file.symbol);
  if (!plan) throw new Error(`no plan for ${task.file.symbol}`);
  const { csv, candles } = renderFile(plan, task.file, task.render);
  const bytes = await writeZippedCsv(task.zipPath, csv, new Date(task.file.from));
  return { candles, bytes };
};
