// The Node/V8 flags every process of the venue runs with (`npm start`, `ptv …`, the benchmark's server), in one place.

/**
 * V8's young generation for the venue's processes: `--max-semi-space-size=64` (MB per semi-space; Node 20's default
 * on 64-bit is 16). The server allocates ~150 kB per order (16 MB filled ~11 times per 1,000 requests), so at 1,000 orders/s the default young generation is
 * scavenged ~11 times a second, and objects still in flight at a scavenge (requests, batches, pages being folded)
 * are copied and promoted to the old generation, which later costs mark-compacts; a larger one scavenges less
 * often and promotes less. Measured in docs/benchmarks.md ("Trading", the young generation, 2026-11-30); the memory
 * it costs is in docs/operations.md.
 */
export const VENUE_NODE_FLAGS = ['--max-semi-space-size=64'];

/**
 * The option a command-line word names, as V8 and Node read it: the text before `=`, without a quote NODE_OPTIONS
 * may wrap it in, with `_` read as `-` (V8 takes `--max_semi_space_size` for `--max-semi-space-size`).
 *
 * @param {string} word
 * @returns {string}
 */
const flagName = (word) => word.replace(/^["']/, '').split('=')[0].replaceAll('_', '-');

/**
 * The `NODE_OPTIONS` a process should be re-executed with so that it runs with {@link VENUE_NODE_FLAGS}, or
 * `undefined` when it already does: a flag counts as set when the same option (its `flagName`: `_` read as `-`, a quote dropped) is in
 * `nodeOptions` (the environment's `NODE_OPTIONS`) or in `execArgv` (`process.execArgv`), whatever its value, so an
 * operator's own `--max-semi-space-size=<MB>` wins. The flags are appended to `nodeOptions` (kept as given), which
 * child processes and worker threads inherit. Throws nothing.
 *
 * @param {string | undefined} nodeOptions
 * @param {readonly string[]} execArgv
 * @returns {string | undefined}
 */
export const venueNodeOptions = (nodeOptions, execArgv) => {
  const given = [...(nodeOptions ?? '').split(/\s+/), ...execArgv].filter(Boolean).map(flagName);
  const missing = VENUE_NODE_FLAGS.filter((flag) => !given.includes(flagName(flag)));
  if (!missing.length) return undefined;
  return [nodeOptions?.trim(), ...missing].filter(Boolean).join(' ');
};
