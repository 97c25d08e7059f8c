import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../support/server-process';

const run = promisify(execFile);

/** Where Debian puts PostgreSQL's server binaries (`PG_BIN` overrides). */
const binDir = (): string | undefined => {
  const candidates = [
    process.env.PG_BIN,
    ...['17', '16', '15', '14'].map((v) => `/usr/lib/postgresql/${v}/bin`),
  ].filter((d): d is string => !!d);
  return candidates.find(
    (d) => fs.existsSync(path.join(d, 'pg_ctl')) && fs.existsSync(path.join(d, 'initdb')),
  );
};

/** A PostgreSQL cluster of the test's own (`initdb` + `pg_ctl`), on a free port of 127.0.0.1, trust auth. */
export interface PrivateCluster {
  port: number;
  /** `postgres://postgres@127.0.0.1:PORT/postgres`. */
  url: string;
  /** `pg_ctl restart -m fast`: every connection is terminated, the server is away until it is up again. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`: the server is away until {@link PrivateCluster.start}. */
  stop(): Promise<void>;
  /** `pg_ctl start` again after {@link PrivateCluster.stop}. */
  start(): Promise<void>;
  /** Stops it (`-m immediate`) and removes its data directory. */
  destroy(): Promise<void>;
}

/** Why a private cluster cannot be started here, or null. */
export const privateClusterSkipReason = (): string | null =>
  binDir() ? null : 'no initdb/pg_ctl found (set PG_BIN to the directory of PostgreSQL server binaries)';

/**
 * Creates and starts a cluster in a temporary directory. `initdb` refuses to run as root, so as root (this
 * machine and CI) the server runs as the `postgres` user through `runuser`.
 */
export const startPrivateCluster = async (): Promise<PrivateCluster> => {
  const bin = binDir();
  if (!bin) throw new Error(privateClusterSkipReason()!);
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-pgcluster-'));
  const data = path.join(dir, 'data');
  if (asRoot) {
    fs.chmodSync(dir, 0o755);
    await run('chown', ['postgres:postgres', dir]);
  }
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { cwd: dir })
      : run(path.join(bin, tool), args, { cwd: dir });
  await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = [
    `-c listen_addresses=127.0.0.1`,
    `-c port=${port}`,
    `-c unix_socket_directories=${dir}`,
    `-c fsync=off`,
    `-c max_connections=200`,
    `-c shared_buffers=64MB`,
  ].join(' ');
  const log = path.join(dir, 'server.log');
  const ctl = (args: string[]) =>
    pg('pg_ctl', ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', ...args]);
  await ctl(['start']);
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await ctl(['restart', '-m', 'fast']);
    },
    stop: async () => {
      await ctl(['stop', '-m', 'fast']);
    },
    start: async () => {
      await ctl(['start']);
    },
    destroy: async () => {
      await pg('pg_ctl', ['-D', data, 'stop', '-m', 'immediate', '-w']).catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
};
