import { useTestApp } from '../support/test-app';
import { agentsSuite } from './agents.suite';
import { authAccountSuite } from './auth-account.suite';
import { securitySuite } from './security.suite';
import type { TestApp } from './support';

/**
 * HTTP tests of accounts, authentication and agents through `app.inject` on one real runtime (PGlite in
 * memory by default, a fresh PostgreSQL database when `DATABASE_URL` is set). One app serves the three suites
 * so the embedded database starts once; its logger captures every line for the security suite's scan.
 */
const t = useTestApp({ captureLogs: true });
const use = (): TestApp => t;

authAccountSuite(use);
agentsSuite(use);
securitySuite(use);
