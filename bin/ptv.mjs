#!/usr/bin/env node
// The command line (`ptv serve`, `ptv projections status`, `ptv audit replay …`) for `npx ptv`, installs of this
// package and `npm start`, with TypeScript loaded by tsx. A process started without the venue's Node flags
// (bin/node-flags.mjs: the young generation) runs the command in a child with them in NODE_OPTIONS, which its
// worker threads and children inherit; an operator's own value of such a flag wins (no child then).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { venueNodeOptions } from './node-flags.mjs';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** Set in the child's environment: its signals may come twice at once (see below). */
const RELAYED = 'PTV_SIGNALS_RELAYED';

const nodeOptions = venueNodeOptions(process.env.NODE_OPTIONS, process.execArgv);
if (nodeOptions === undefined) {
  if (process.env[RELAYED]) {
    // A signal sent to the process group (a terminal's Ctrl-C, `kill -- -pgid`, systemd) reaches this process and
    // the parent, which passes it on: the same signal again within 500 ms is that copy and is dropped. Otherwise the
    // command's own handlers run as they would without a parent, and where it has none the signal does what Node's
    // default does (the handler steps aside and raises it again).
    const last = new Map();
    for (const signal of SIGNALS) {
      const dedupe = () => {
        const now = Date.now();
        const previous = last.get(signal);
        last.set(signal, now);
        if (previous !== undefined && now - previous < 500) return;
        if (process.listenerCount(signal) === 1) {
          process.off(signal, dedupe);
          process.kill(process.pid, signal);
        }
      };
      process.on(signal, dedupe);
    }
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
} else {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: nodeOptions, [RELAYED]: '1' } },
  );
  // Every signal is passed on; the child drops the copy when the signal reached it too.
  for (const signal of SIGNALS) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
