/** The Node/V8 flags every process of the venue runs with (see node-flags.mjs). */
export declare const VENUE_NODE_FLAGS: readonly string[];
/**
 * The `NODE_OPTIONS` to re-execute with so the process runs with {@link VENUE_NODE_FLAGS}, or `undefined` when each
 * of them (by option name) is already in `nodeOptions` or `execArgv` (see node-flags.mjs).
 */
export declare const venueNodeOptions: (
  nodeOptions: string | undefined,
  execArgv: readonly string[],
) => string | undefined;
