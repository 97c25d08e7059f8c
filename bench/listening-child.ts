import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

/** A server process of a benchmark and the URL it listens on. */
export interface ListeningChild {
  child: ChildProcess;
  url: string;
}

/**
 * Starts `node <args>` in the repository's root with `env` added to this process's environment (stdout piped,
 * stderr inherited) and resolves once it prints `{"listening":"<url>"}` on stdout, as bench/market-server.ts and
 * bench/trading-server.ts do when ready; rejects if it exits first.
 */
export const spawnListening = (args: string[], env: Record<string, string> = {}): Promise<ListeningChild> => {
  const child = spawn(process.execPath, args, {
    cwd: path.resolve(import.meta.dirname, '..'),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise<ListeningChild>((resolve, reject) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += String(chunk);
      const m = /\{"listening":"([^"]+)"\}/.exec(buffer);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
};
