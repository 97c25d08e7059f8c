import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../src/runtime';
import { createTestDatabase } from './databases';
import { TEST_CONFIG_DEFAULTS } from './test-config';

/**
 * Headers of an operator request (`/health` details, `/metrics`) to an app built in this process: its
 * `OPERATOR_TOKEN`, or the token it generated into its `DATA_DIR`.
 */
export const operatorHeadersOf = (app: FastifyInstance): { authorization: string } => {
  const { OPERATOR_TOKEN, DATA_DIR } = app.services.config;
  const token = OPERATOR_TOKEN ?? fs.readFileSync(path.join(DATA_DIR, 'operator-token'), 'utf8').trim();
  return { authorization: `Bearer ${token}` };
};

/** A runtime on a fresh test database plus its HTTP app, for `inject` tests. */
export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * Builds the real application on a fresh database (PGlite in memory, or a fresh PostgreSQL database when
 * `DATABASE_URL` is set), with a temporary `DATA_DIR`. `env` overrides configuration variables.
 */
export const createTestApp = async (
  env: Record<string, string> = {},
  options: Omit<RuntimeOptions, 'database'> = {},
): Promise<TestApp> => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-test-'));
  const config = loadConfig({ ...TEST_CONFIG_DEFAULTS, DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env });
  const database = await createTestDatabase();
  const runtime = await createRuntime(config, pino({ level: 'silent' }), { ...options, database });
  const app = await buildApp(runtime.services);
  return {
    app,
    runtime,
    dataDir,
    async close() {
      await app.close();
      await runtime.close();
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
};
