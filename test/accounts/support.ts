import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { Logger } from 'pino';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { createLogger } from '../../src/logger';
import { createRuntime, type Runtime } from '../../src/runtime';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { TEST_CONFIG_DEFAULTS } from '../support/test-config';

/** A running app on a real runtime (PGlite in memory, or a fresh database on `DATABASE_URL`'s server). */
export interface TestApp {
  app: FastifyInstance;
  runtime: Runtime;
  database: TestDatabase;
  dataDir: string;
  /** Every log line written so far (the logger runs at `trace` when `captureLogs` is set). */
  logs: string[];
  /** Closes the app and runtime; keeps the database unless `dropDatabase`. */
  stop(): Promise<void>;
  /** Stops everything and drops the database and the data directory. */
  close(): Promise<void>;
}

/** Starts the real stack. Pass `database`/`dataDir` to restart on existing state. */
export const startApp = async (
  options: {
    database?: TestDatabase;
    dataDir?: string;
    captureLogs?: boolean;
    env?: Record<string, string>;
  } = {},
): Promise<TestApp> => {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-accounts-'));
  const database = options.database ?? (await createTestDatabase());
  const logs: string[] = [];
  const logger: Logger = options.captureLogs
    ? createLogger('trace', {
        pretty: false,
        destination: new Writable({
          write(chunk, _enc, done) {
            logs.push(String(chunk));
            done();
          },
        }),
      })
    : createLogger('silent', { pretty: false });
  const config = loadConfig({
    ...TEST_CONFIG_DEFAULTS,
    DATA_DIR: dataDir,
    LOG_LEVEL: options.captureLogs ? 'trace' : 'silent',
    ...options.env,
  });
  const runtime = await createRuntime(config, logger, { database });
  const app = await buildApp(runtime.services);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await app.close();
    await runtime.close();
  };
  return {
    app,
    runtime,
    database,
    dataDir,
    logs,
    stop,
    async close() {
      await stop();
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

let ipCounter = 1;
/** A fresh client address, so auth calls of different tests do not share the per-IP auth rate limit. */
export const freshIp = (): string => {
  ipCounter++;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
};

/** A registered account with its credentials and a JWT. */
export interface TestAccount {
  accountId: string;
  apiKey: string;
  apiSecret: string;
  token: string;
  email?: string;
  password?: string;
}

let emailCounter = 0;

/**
 * Registers an account (with email and password unless `plain`). Its JWT comes from `POST /auth/login` when
 * `login` is set, else straight from the token service (same signer; saves a slow scrypt check per account).
 */
export const registerAccount = async (
  app: FastifyInstance,
  body: Record<string, unknown> = {},
  options: { plain?: boolean; login?: boolean } = {},
): Promise<TestAccount> => {
  emailCounter++;
  const email = options.plain ? undefined : `trader${emailCounter}.${Date.now()}@example.com`;
  const password = options.plain ? undefined : `pw-${emailCounter}-correct horse`;
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/register',
    remoteAddress: freshIp(),
    payload: { display_name: `Trader ${emailCounter}`, ...(email ? { email, password } : {}), ...body },
  });
  if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
  const reg = res.json() as { account_id: string; api_key: string; api_secret: string };
  let token: string;
  if (options.login) {
    const login = await logIn(app, { apiKey: reg.api_key, apiSecret: reg.api_secret });
    if (login.statusCode !== 200) throw new Error(`login failed: ${login.statusCode} ${login.body}`);
    token = (login.json() as { token: string }).token;
  } else {
    token = app.services.auth!.tokens.issue(reg.account_id).token;
  }
  return {
    accountId: reg.account_id,
    apiKey: reg.api_key,
    apiSecret: reg.api_secret,
    token,
    ...(email ? { email } : {}),
    ...(password ? { password } : {}),
  };
};

/** `POST /auth/login` with an API key and secret, from a fresh client address (no other test's login budget). */
export const logIn = (app: FastifyInstance, credentials: { apiKey: string; apiSecret: string }) =>
  api(app, {
    method: 'POST',
    url: '/auth/login',
    payload: { api_key: credentials.apiKey, api_secret: credentials.apiSecret },
    remoteAddress: freshIp(),
  });

/** `POST /auth/user-login` with an email and password, from a fresh client address. */
export const logInWithPassword = (
  app: FastifyInstance,
  credentials: { email?: string | undefined; password?: string | undefined },
) =>
  api(app, {
    method: 'POST',
    url: '/auth/user-login',
    payload: { email: credentials.email, password: credentials.password },
    remoteAddress: freshIp(),
  });

/** Creates an agent for the account; resolves to its id, key and signing secret. */
export const createAgent = async (
  app: FastifyInstance,
  account: TestAccount,
  body: Record<string, unknown> = {},
): Promise<{ agentId: string; apiKey: string; apiSecret: string }> => {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/agents',
    headers: bearer(account),
    payload: { display_name: 'Agent', ...body },
  });
  if (res.statusCode !== 201) throw new Error(`create agent failed: ${res.statusCode} ${res.body}`);
  const json = res.json() as { agent_id: string; api_key: string; api_secret: string };
  return { agentId: json.agent_id, apiKey: json.api_key, apiSecret: json.api_secret };
};

/** An HTTP method of the agent routes. */
export type AgentRouteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Every route under `/agents/{id}` for the agent `id` (pass `'{id}'` for templates): method, path and, for the
 * writes that take one, a valid body. DELETE comes last, so a caller whose requests succeed keeps the agent to
 * the end.
 */
export const agentRoutes = (id: string): [AgentRouteMethod, string, object?][] => [
  ['GET', `/agents/${id}`],
  ['PUT', `/agents/${id}`, { display_name: 'x' }],
  ['POST', `/agents/${id}/clone`],
  ['POST', `/agents/${id}/reset`],
  ['POST', `/agents/${id}/archive`],
  ['GET', `/agents/${id}/api-key`],
  ['POST', `/agents/${id}/regenerate-key`],
  ['GET', `/agents/${id}/risk-profile`],
  [
    'PUT',
    `/agents/${id}/risk-profile`,
    { max_position_size_pct: 10, daily_loss_limit_pct: 10, max_open_orders: 10 },
  ],
  ['GET', `/agents/${id}/skill.md`],
  ['DELETE', `/agents/${id}`],
];

/** `Authorization: Bearer` headers of an account. */
export const bearer = (account: { token: string }): Record<string, string> => ({
  authorization: `Bearer ${account.token}`,
});

/** `X-API-Key` headers. */
export const keyHeader = (apiKey: string): Record<string, string> => ({ 'x-api-key': apiKey });

/** The `error` envelope of a response (spec "Errors"): its code, message and details. */
export const errorOf = (res: { json(): unknown }) =>
  (res.json() as { error: { code: string; message: string; details?: any } }).error;

/** Shorthand for `app.inject` with `/api/v1` prefixed. */
export const api = (app: FastifyInstance, options: InjectOptions & { url: string }) =>
  app.inject({ ...options, url: `/api/v1${options.url}` });
