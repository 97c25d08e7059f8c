import { afterAll, beforeAll } from 'vitest';
import { agentsSuite } from './agents.suite';
import { authAccountSuite } from './auth-account.suite';
import { securitySuite } from './security.suite';
import { startApp, type TestApp } from './support';

/**
 * HTTP tests of accounts, authentication and agents through `app.inject` on one real runtime (PGlite in
 * memory by default, a fresh PostgreSQL database when `DATABASE_URL` is set). One app serves the three suites
 * so the embedded database starts once; its logger captures every line for the security suite's scan.
 */
let t: TestApp | undefined;
beforeAll(async () => {
  t = await startApp({ captureLogs: true });
}, 120_000);
afterAll(async () => {
  await t?.close();
}, 60_000);

const use = (): TestApp => {
  if (!t) throw new Error('app not started');
  return t;
};

authAccountSuite(use);
agentsSuite(use);
securitySuite(use);
