import fs from 'node:fs';
import { round } from './stats';

/** One isolate's garbage collections in a slice of a `--trace-gc-nvp` log ({@link gcTraceSummary}). */
export interface IsolateGc {
  /** The isolate's address as V8 prints it (`0x…`), and its rank by first line in the whole log (0: the main thread's). */
  isolate: string;
  rank: number;
  /** Collections by V8's kind (`s`: scavenge, `mc`/`ms`: mark-compact, `mmc`: minor mark-compact, …). */
  count: Record<string, number>;
  /** Pauses of the isolate's own thread (ms, `pause=`). */
  pause_ms: number;
  /** Time of V8's platform (helper) threads on this isolate's collections (ms: every `background.*` field summed). */
  background_ms: number;
  /** Of it, the parallel scavenges' part (ms, `background.scavenge.parallel`). */
  background_scavenge_ms: number;
  /** Bytes the isolate allocated (MB: `allocated=` summed; what the collections in the slice followed). */
  allocated_mb: number;
  /** Bytes that survived a scavenge in the young generation, and those promoted to the old (MB). */
  survived_mb: number;
  promoted_mb: number;
}

/**
 * The collections of each isolate in bytes [from, to) of a node process's stdout run with `--trace-gc-nvp` (one
 * line per collection, `[pid:0xisolate]  <ms> ms: pause=… gc=… key=value …`; other lines are skipped): per
 * isolate, counts by kind, its own pause, its helper threads' time, and what it allocated. Offsets are byte
 * offsets of the file (its size at phase boundaries; V8 writes through C stdio, so a line can arrive a few lines
 * late). Isolates are ranked by their first line in the whole file.
 */
export const gcTraceSummary = (file: string, from: number, to: number): IsolateGc[] => {
  const text = fs.readFileSync(file);
  const rank = new Map<string, number>();
  const out = new Map<string, IsolateGc>();
  let at = 0;
  for (const line of text.toString('latin1').split('\n')) {
    const offset = at;
    at += line.length + 1;
    const head = /^\[\d+:(0x[0-9a-f]+)\]\s+[\d.]+ ms: (pause=.*)$/.exec(line);
    if (!head) continue;
    const isolate = head[1]!;
    if (!rank.has(isolate)) rank.set(isolate, rank.size);
    if (offset < from || offset >= to) continue;
    const fields = new Map<string, string>();
    for (const kv of head[2]!.split(' ')) {
      const eq = kv.indexOf('=');
      if (eq > 0) fields.set(kv.slice(0, eq), kv.slice(eq + 1));
    }
    let g = out.get(isolate);
    if (!g) {
      g = {
        isolate,
        rank: rank.get(isolate)!,
        count: {},
        pause_ms: 0,
        background_ms: 0,
        background_scavenge_ms: 0,
        allocated_mb: 0,
        survived_mb: 0,
        promoted_mb: 0,
      };
      out.set(isolate, g);
    }
    const num = (k: string) => Number(fields.get(k) ?? 0) || 0;
    const kind = fields.get('gc') ?? '?';
    g.count[kind] = (g.count[kind] ?? 0) + 1;
    g.pause_ms += num('pause');
    for (const [k, v] of fields) if (k.startsWith('background.')) g.background_ms += Number(v) || 0;
    g.background_scavenge_ms += num('background.scavenge.parallel');
    g.allocated_mb += num('allocated') / 2 ** 20;
    g.survived_mb += num('new_space_survived') / 2 ** 20;
    g.promoted_mb += num('promoted') / 2 ** 20;
  }
  return [...out.values()]
    .sort((a, b) => a.rank - b.rank)
    .map((g) => ({
      ...g,
      pause_ms: round(g.pause_ms, 1),
      background_ms: round(g.background_ms, 1),
      background_scavenge_ms: round(g.background_scavenge_ms, 1),
      allocated_mb: round(g.allocated_mb, 1),
      survived_mb: round(g.survived_mb, 1),
      promoted_mb: round(g.promoted_mb, 1),
    }));
};
