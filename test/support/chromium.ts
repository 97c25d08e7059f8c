import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`; `.ci/run` installs it), or `CHROMIUM_PATH`. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why browser tests cannot run here, or undefined when they can. */
export const chromiumMissing = (): string | undefined =>
  fs.existsSync(CHROMIUM)
    ? undefined
    : `no chromium at ${CHROMIUM} (install Debian's package: apt-get install -y chromium, as .ci/run does; or set CHROMIUM_PATH)`;

/** The launch flags of the project's browser tests and benchmarks: a quiet, offline, throwaway browser. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A browser with a fresh profile (`--user-data-dir`, nothing cached: a cold load); closing removes the profile. */
export interface FreshBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches {@link CHROMIUM} with {@link CHROMIUM_FLAGS} on a new temporary profile, 1400 × 900. */
export const launchFreshChromium = async (): Promise<FreshBrowser> => {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
};
