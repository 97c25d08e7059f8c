import { readFileSync } from 'node:fs';

/**
 * Whether process `pid` runs: it exists (signal 0 reaches it) and is not a zombie (Linux `/proc/<pid>/stat`
 * state `Z`: exited, not yet reaped). False when it is gone or cannot be signalled.
 */
export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  } catch {
    return false;
  }
};
