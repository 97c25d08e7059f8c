#!/usr/bin/env node
// The command line (`ptv serve`, `ptv projections status`, `ptv audit replay …`) for `npx ptv`, installs of this
// package and `npm start`, with TypeScript loaded by tsx. A process started without the venue's Node flags
// (bin/node-flags.mjs: the young generation) runs the command in a child with them in NODE_OPTIONS, which its
// worker threads and children inherit; an operator's own value of such a flag wins (no child then).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { venueNodeOptions } from './node-flags.mjs';

const nodeOptions = venueNodeOptions(process.env.NODE_OPTIONS, process.execArgv);
if (nodeOptions === undefined) {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
} else {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: nodeOptions } },
  );
  // A terminal's Ctrl-C reaches the whole foreground group, the child included: forwarding it too would be the
  // child's second signal (`serve` exits at once on a second one). A signal sent to this process alone is passed on.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (signal !== 'SIGINT' || !process.stdin.isTTY) child.kill(signal);
    });
  }
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
