import type { BrowserContext, Locator, Page } from 'playwright-core';
import { type FreshBrowser, launchFreshChromium } from './chromium';
import { type ServerProcess, startServer } from './server-process';

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
 * A fresh chromium (`launchFreshChromium`) whose pages open logged in with `token` (`presetSession`), and its first
 * page.
 */
export const openViewer = async (token: {
  token: string;
  expires_at: string;
}): Promise<{ browser: FreshBrowser; page: Page }> => {
  const browser = await launchFreshChromium();
  await presetSession(browser.context, token);
  return { browser, page: browser.context.pages()[0] ?? (await browser.context.newPage()) };
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
