import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config';

declare module 'fastify' {
  interface FastifyInstance {
    /** Who may see the operator views (`/health` details, `/metrics`). */
    operator: OperatorAccess;
  }
}

/** Name of the generated operator token file inside `DATA_DIR`. */
export const OPERATOR_TOKEN_FILE = 'operator-token';

/**
 * Who may see the operator views (`/health` details, `/metrics`; docs/operations.md "Operator endpoints"): a
 * request carrying `Authorization: Bearer <OPERATOR_TOKEN>`. The token is a shared secret of the deployment, not
 * an account's credential: Prometheus sends it as its scrape `authorization`, a person with
 * `curl -H "Authorization: Bearer $OPERATOR_TOKEN"`.
 */
export interface OperatorAccess {
  /** Where the token came from: the configuration, or `DATA_DIR/operator-token` (read or generated now). */
  readonly source: 'config' | 'file' | 'generated';
  /** True when `request` carries the operator token (compared in constant time). */
  allows(request: Pick<FastifyRequest, 'headers'>): boolean;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * The operator access of this process: `OPERATOR_TOKEN` when configured, else the token in
 * `DATA_DIR/operator-token`, generated once (32 random bytes, base64url, file mode 0600, created exclusively so
 * processes starting together agree) so a bare `npm start` has an operator view too (`cat data/operator-token`).
 * Warns when `DATABASE_URL` is set and the token comes from the local file (processes behind one load balancer
 * should share one token: set `OPERATOR_TOKEN`).
 */
export const loadOperatorAccess = (
  config: Pick<Config, 'OPERATOR_TOKEN' | 'DATA_DIR' | 'DATABASE_URL'>,
  logger?: Logger,
): OperatorAccess => {
  let token = config.OPERATOR_TOKEN;
  let source: OperatorAccess['source'] = 'config';
  if (!token) {
    const file = path.join(config.DATA_DIR, OPERATOR_TOKEN_FILE);
    fs.mkdirSync(config.DATA_DIR, { recursive: true });
    try {
      const fd = fs.openSync(file, 'wx', 0o600);
      try {
        fs.writeFileSync(fd, `${randomBytes(32).toString('base64url')}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      source = 'generated';
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      source = 'file';
    }
    for (let attempt = 0; !token; attempt++) {
      token = fs.readFileSync(file, 'utf8').trim();
      // A process that created the file a moment ago may still be writing it.
      if (!token && attempt < 20) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      else if (!token) throw new Error(`${file} is empty`);
    }
    if (config.DATABASE_URL)
      logger?.warn(
        { file },
        'OPERATOR_TOKEN not configured: the operator views (/health details, /metrics) use the token in the data directory; set OPERATOR_TOKEN so every process shares one',
      );
  }
  const expected = digest(token);
  return {
    source,
    allows(request) {
      const header = request.headers.authorization;
      const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      return !!match && timingSafeEqual(digest(match[1]!), expected);
    },
  };
};
