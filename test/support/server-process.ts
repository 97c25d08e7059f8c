import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';

/** A real server process started from the repository's entry point (`src/main.ts serve`). */
export interface ServerProcess {
  url: string;
  process: ChildProcess;
  /** Everything the process printed (stdout and stderr). */
  output(): string;
  /** SIGTERM, then wait for exit; resolves to the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL, then wait for exit. */
  kill(): Promise<void>;
}

/** The operator token every server started by {@link startServer} has (unless its `env` names another). */
export const TEST_OPERATOR_TOKEN = 'test-operator-token-not-for-production-0001';

/** Headers of an operator request (`/health` details, `/metrics`) to a server of {@link startServer}. */
export const operatorHeaders = { authorization: `Bearer ${TEST_OPERATOR_TOKEN}` };

/** A TCP port that was free a moment ago on 127.0.0.1. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });

/**
 * Starts `node --import tsx src/main.ts serve` with `env` on `port` (default: a free one; a restarted server
 * passes its predecessor's so clients reconnect to the same address) and resolves once `/health` answers 200 (or
 * rejects with the process output after `timeoutMs`).
 */
export const startServer = async (
  env: Record<string, string>,
  timeoutMs = 150_000,
  port?: number,
): Promise<ServerProcess> => {
  port ??= await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      OPERATOR_TOKEN: TEST_OPERATOR_TOKEN,
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const url = `http://127.0.0.1:${port}`;
  const exited = () =>
    new Promise<void>((resolve) =>
      child.exitCode !== null || child.signalCode ? resolve() : child.once('exit', () => resolve()),
    );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not become healthy in ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    process: child,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      await exited();
      return child.exitCode;
    },
    async kill() {
      child.kill('SIGKILL');
      await exited();
    },
  };
};
