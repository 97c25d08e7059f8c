import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { ensureDashboardBuilt } from '../../dashboard/build';
import { MARKET_DATA } from '../market/support';
import { chromiumMissing, type FreshBrowser, launchFreshChromium } from './chromium';
import { seedPgliteDataDir } from './databases';
import { type ServerProcess, startServer } from './server-process';

/**
 * Why the dashboard's browser tests of a file are skipped (no chromium installed: `chromiumMissing`), printed as a
 * warning so a green run says what it did not check; `undefined` where chromium is there. Called once a file, at
 * its top, for `describe.skipIf`.
 */
export const browserTestsSkipped = (): string | undefined => {
  const missing = chromiumMissing();
  if (missing) console.warn(`dashboard browser tests skipped: ${missing}`);
  return missing;
};

/**
 * The folder the dashboard's browser tests write their screenshots (and timings) to: `DASHBOARD_TEST_OUTPUT`, or
 * `test-output/dashboard` at the repository's root; an absolute path. Not created here (a skipped file writes
 * nothing): the caller makes it in its `beforeAll`.
 */
export const testOutputDir = (): string =>
  path.resolve(
    process.env.DASHBOARD_TEST_OUTPUT ?? path.join(import.meta.dirname, '../../test-output/dashboard'),
  );

/**
 * A fresh temporary data directory (`<tmpdir>/<prefix>XXXXXX`) and the environment of a venue process on it:
 * embedded PGlite (`DATABASE_URL` empty) replaying the real market data (`MARKET_DATA_DIR`, no live source). The
 * caller removes `dataDir` ({@link closeVenue}); `env` is kept to start the venue again on the same data.
 */
export const dashboardVenueEnv = (prefix: string): { dataDir: string; env: Record<string, string> } => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return {
    dataDir,
    env: { DATA_DIR: dataDir, MARKET_DATA_DIR: MARKET_DATA, MARKET_SOURCE: '', DATABASE_URL: '' },
  };
};

/**
 * Builds the dashboard if its bundle is out of date (`ensureDashboardBuilt`), then starts the venue process with
 * `env` (`startServer`, 110 s to answer `/health`); answers the running process. An embedded database not there yet
 * is copied in migrated first (`seedPgliteDataDir`: no initdb and migrations in the venue's start).
 */
export const startDashboardVenue = async (env: Record<string, string>): Promise<ServerProcess> => {
  await ensureDashboardBuilt();
  const pglite = env.DATA_DIR && !env.DATABASE_URL ? path.join(env.DATA_DIR, 'pglite') : undefined;
  if (pglite && !fs.existsSync(pglite)) await seedPgliteDataDir(pglite);
  return startServer(env, 110_000);
};

/** One REST call of a venue, as {@link restCall} takes it without the venue's address. */
export type VenueCall = (
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
) => Promise<any>;

/**
 * {@link restCall} against the venue whose address `base()` answers when the call is made: a test file makes its
 * `call` before its `beforeAll` starts the venue.
 */
export const venueCall =
  (base: () => string): VenueCall =>
  (method, url, headers, body) =>
    restCall(base(), method, url, headers, body);

/** A new account of the venue and what a dashboard test reads with it; see {@link registerViewer}. */
export interface Viewer {
  /** `POST /auth/register`'s answer (`account_id`, `api_key`, `api_secret`, …). */
  reg: any;
  /** `POST /auth/login`'s answer: the JWT and when it expires, as {@link presetSession} takes it. */
  token: { token: string; expires_at: string };
  /** Headers of a request as the account's JWT: `Authorization: Bearer <token>`. */
  jwt: Record<string, string>;
  /** Headers of a request as the account's API key: `X-API-Key`. */
  key: Record<string, string>;
}

/** Registers an account named `name` with `call`'s venue and logs it in with its key and secret. */
export const registerViewer = async (call: VenueCall, name: string): Promise<Viewer> => {
  const reg = await call('POST', '/auth/register', {}, { display_name: name });
  const token = await call('POST', '/auth/login', {}, { api_key: reg.api_key, api_secret: reg.api_secret });
  return { reg, token, jwt: { authorization: `Bearer ${token.token}` }, key: { 'x-api-key': reg.api_key } };
};

/**
 * What a dashboard test file's `afterAll` ends, in order: the browser, the venue process (SIGTERM, waiting for its
 * exit) and its data directory. Either of the first two may be absent (a `beforeAll` that failed half-way).
 */
export const closeVenue = async (venue: {
  browser: FreshBrowser | undefined;
  server: ServerProcess | undefined;
  dataDir: string;
}): Promise<void> => {
  await venue.browser?.close();
  await venue.server?.stop();
  fs.rmSync(venue.dataDir, { recursive: true, force: true });
};

/**
 * The venue of one dashboard test file, from its `beforeAll` to its `afterAll`: a fresh data directory and the
 * environment on it ({@link dashboardVenueEnv}), the venue process once {@link DashboardVenue.start} ran (a test that
 * restarts it, {@link openDuringOutage}, puts the new one here), the browser the file opened, and REST calls of it.
 */
export interface DashboardVenue {
  readonly dataDir: string;
  /** The venue process's environment, kept to start it again on the same data. */
  readonly env: Record<string, string>;
  server: ServerProcess | undefined;
  browser: FreshBrowser | undefined;
  /** One REST call of the venue ({@link restCall}) at its address once started: made before `beforeAll` runs. */
  readonly call: VenueCall;
  /** {@link startDashboardVenue} with `env`; answers the venue's address (`server.url`). */
  start(): Promise<string>;
  /** {@link closeVenue}: the browser, the venue process, the data directory. */
  close(): Promise<void>;
}

/** A {@link DashboardVenue} on a fresh data directory `<tmpdir>/<prefix>XXXXXX`, not started yet. */
export const dashboardVenue = (prefix: string): DashboardVenue => {
  const { dataDir, env } = dashboardVenueEnv(prefix);
  let base = '';
  const venue: DashboardVenue = {
    dataDir,
    env,
    server: undefined,
    browser: undefined,
    call: venueCall(() => base),
    start: async () => {
      venue.server = await startDashboardVenue(env);
      base = venue.server.url;
      return base;
    },
    close: () => closeVenue(venue),
  };
  return venue;
};

/**
 * The whole page's width, px: `scroll` its content's (`documentElement.scrollWidth`), `client` the viewport's
 * (`clientWidth`). The page scrolls sideways where `scroll > client`.
 */
export const pageWidths = (page: Page): Promise<{ scroll: number; client: number }> =>
  // A string, run in the page: the browser's globals are not the test's (Node's).
  page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  ) as Promise<{ scroll: number; client: number }>;

/**
 * Creates a backtest of agent `agentId` on the real BTCUSDT hours of 2022-01-03 (one day, 10,000 USDT, 1 h
 * candles, strategy label `label`) as the account of `jwt`, and starts it; answers its session id. Throws (from
 * `call`) where the venue refuses either.
 */
export const startedBacktest = async (
  call: VenueCall,
  jwt: Record<string, string>,
  backtest: { label: string; agentId: string },
): Promise<string> => {
  const created = await call('POST', '/backtest/create', jwt, {
    start_time: '2022-01-03T00:00:00Z',
    end_time: '2022-01-04T00:00:00Z',
    starting_balance: '10000',
    candle_interval: '1h',
    strategy_label: backtest.label,
    agent_id: backtest.agentId,
    pairs: ['BTCUSDT'],
  });
  const id = created.session_id as string;
  await call('POST', `/backtest/${id}/start`, jwt);
  return id;
};

/** What a page measured of its own load, in ms from navigation start (docs/benchmarks.md, "Dashboard"). */
export interface LoadTimings {
  /** The page's `ptv:ready:<page>` mark: its first-interactive time (docs/dashboard.md). */
  ready: number;
  domContentLoaded: number;
  loadEvent: number;
  /** Bytes over the wire: the page and everything it fetched so far. */
  transferredBytes: number;
}

/** Reads {@link LoadTimings} of the dashboard page `page` once it marked `ptv:ready:<name>`. */
export const loadTimings = (page: Page, name: string): Promise<LoadTimings> =>
  // A string, run in the page: the browser's types are not the test's (Node's).
  page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const entries = [nav, ...performance.getEntriesByType('resource')];
    return {
      ready: performance.getEntriesByName(${JSON.stringify(`ptv:ready:${name}`)})[0].startTime,
      domContentLoaded: nav.domContentLoadedEventEnd,
      loadEvent: nav.loadEventEnd,
      transferredBytes: entries.reduce((n, e) => n + (e.transferSize || 0), 0),
    };
  })()`);

/**
 * Puts a dashboard session (`dashboard/src/session.ts`) in every page's sessionStorage before its scripts run, so
 * a cold load opens the overview of a logged-in viewer.
 */
export const presetSession = (
  context: BrowserContext,
  token: { token: string; expires_at: string },
  agentId: string | null = null,
): Promise<unknown> =>
  context.addInitScript({
    content: `sessionStorage.setItem('ptv.session', ${JSON.stringify(
      JSON.stringify({ token: token.token, expiresAt: token.expires_at, agentId }),
    )});`,
  });

/**
 * One REST call of the venue at `base` (`/api/v1` + `url`), JSON in and out, as a dashboard test sets up its
 * account; throws on a non-2xx answer with its status and body. 204 answers `undefined`; the answer is untyped
 * (`any`): the tests read the fields they need.
 */
export const restCall = async (
  base: string,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<any> => {
  const r = await fetch(`${base}/api/v1${url}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = r.status === 204 ? undefined : await r.json();
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(json)}`);
  return json;
};

/**
 * A fresh chromium (`launchFreshChromium`) whose pages open logged in with `token`, viewing the wallet of agent
 * `agentId` (default: the account's own) (`presetSession`), and its first page. The browser is closed again if
 * setting it up fails.
 */
export const openViewer = async (
  token: { token: string; expires_at: string },
  agentId: string | null = null,
): Promise<{ browser: FreshBrowser; page: Page }> => {
  const browser = await launchFreshChromium();
  try {
    await presetSession(browser.context, token, agentId);
    return { browser, page: browser.context.pages()[0] ?? (await browser.context.newPage()) };
  } catch (error) {
    await browser.close();
    throw error;
  }
};

/**
 * The venue goes away under an open dashboard `page`: stops `server`, opens `hash` while it is away and waits for
 * the page to show the venue's absence (a `NETWORK_ERROR` alert), then starts the venue again with `env` on the
 * same port and waits for the page's socket to be live. Answers the restarted server and the outage's alert (the
 * caller checks that it is gone once the page has read itself again).
 */
export const openDuringOutage = async (
  page: Page,
  server: ServerProcess,
  env: Record<string, string>,
  hash: string,
): Promise<{ server: ServerProcess; alert: Locator }> => {
  await page.locator('.conn.live').waitFor();
  const port = Number(new URL(server.url).port);
  await server.stop();
  await page.locator('.conn.offline').waitFor();
  // A string, run in the page: the browser's globals are not the test's (Node's).
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  const alert = page.locator('[role="alert"]', { hasText: 'NETWORK_ERROR' });
  await alert.waitFor();
  const restarted = await startServer(env, 110_000, port);
  await page.locator('.conn.live').waitFor({ timeout: 30_000 });
  return { server: restarted, alert };
};
