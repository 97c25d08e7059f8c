import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { InlineConfig } from 'vite';

/**
 * Builds the dashboard (docs/dashboard.md): the browser bundle the venue serves at `/`, made with Vite from
 * `dashboard/index.html` and `dashboard/src/` into `dashboard/dist/` (not committed). Run by the root `prepare`
 * script (so `npm ci` builds it) and by `prestart` (`--if-stale`: only when the sources changed since the last
 * build), and by the browser tests before they start the venue.
 *
 * `tsx dashboard/build.ts`              build now
 * `tsx dashboard/build.ts --if-stale`   build only when the sources' fingerprint differs from the last build's
 * `tsx dashboard/build.ts --dev`        Vite's dev server (hot reload) on DASHBOARD_DEV_PORT (default 5173),
 *                                       proxying `/api`, `/ws`, `/health` to VENUE_URL (default http://127.0.0.1:8000)
 */

/** The dashboard's folder (holds `index.html`, `src/`, `dist/`). */
export const DASHBOARD_ROOT = import.meta.dirname;
/** Where the bundle is written and served from. */
export const DASHBOARD_DIST = path.join(DASHBOARD_ROOT, 'dist');
/** Fingerprint of the sources a bundle was built from, written beside it. */
const STAMP_FILE = '.build-stamp';

/** Files whose content decides the bundle: the sources, the page, this script, the locked dependency versions. */
const inputFiles = (): string[] => {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else files.push(full);
    }
  };
  walk(path.join(DASHBOARD_ROOT, 'src'));
  files.push(
    path.join(DASHBOARD_ROOT, 'index.html'),
    path.join(DASHBOARD_ROOT, 'build.ts'),
    path.join(DASHBOARD_ROOT, '..', 'package-lock.json'),
  );
  return files.filter((f) => fs.existsSync(f)).sort();
};

/** SHA-256 over the names and contents of {@link inputFiles} (hex). */
export const sourceFingerprint = (): string => {
  const hash = createHash('sha256');
  for (const file of inputFiles()) {
    hash.update(path.relative(DASHBOARD_ROOT, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
};

/** The Vite configuration of the bundle (also the dev server's). */
export const viteConfig = (outDir = DASHBOARD_DIST): InlineConfig => ({
  root: DASHBOARD_ROOT,
  configFile: false,
  logLevel: 'warn',
  // Preact's automatic JSX runtime through Vite's own transformer (Oxc): no Babel, no framework plugin.
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    // Sizes are measured gzipped by the bundle test (docs/benchmarks.md); Vite's own report only slows the build.
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024,
  },
});

/** Writes `.gz` and `.br` beside every text asset, which the venue serves to clients that accept them. */
const precompress = async (dir: string): Promise<void> => {
  const gzip = promisify(zlib.gzip);
  const brotli = promisify(zlib.brotliCompress);
  const walk = async (d: string): Promise<void> => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (/\.(js|css|html|svg|json)$/.test(entry.name)) {
        const body = fs.readFileSync(full);
        fs.writeFileSync(`${full}.gz`, await gzip(body, { level: 9 }));
        fs.writeFileSync(
          `${full}.br`,
          await brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
      }
    }
  };
  await walk(dir);
};

/**
 * Builds the bundle into a fresh folder beside {@link DASHBOARD_DIST}, then swaps it in, so a server reading
 * `dist/` never sees it half-written. Callers hold the build lock.
 */
const buildUnlocked = async (): Promise<void> => {
  const { build } = await import('vite');
  const fingerprint = sourceFingerprint();
  const staging = `${DASHBOARD_DIST}.tmp-${process.pid}-${Date.now()}`;
  try {
    await build(viteConfig(staging));
    await precompress(staging);
    fs.writeFileSync(path.join(staging, STAMP_FILE), `${fingerprint}\n`);
    const old = `${DASHBOARD_DIST}.old-${process.pid}-${Date.now()}`;
    if (fs.existsSync(DASHBOARD_DIST)) fs.renameSync(DASHBOARD_DIST, old);
    fs.renameSync(staging, DASHBOARD_DIST);
    fs.rmSync(old, { recursive: true, force: true });
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
};

/** True when `dist/` holds a bundle built from the current sources. */
export const isDashboardFresh = (): boolean => {
  try {
    const stamp = fs.readFileSync(path.join(DASHBOARD_DIST, STAMP_FILE), 'utf8').trim();
    return stamp === sourceFingerprint() && fs.existsSync(path.join(DASHBOARD_DIST, 'index.html'));
  } catch {
    return false;
  }
};

const LOCK = path.join(DASHBOARD_ROOT, '.build-lock');
/** A lock older than this was left by a build that died: it is taken over. */
const STALE_LOCK_MS = 5 * 60_000;

/**
 * Runs `fn` holding the build lock (a directory created exclusively), so that builds started at once (two test
 * files, `prestart` beside a test run) run one after the other.
 */
const withBuildLock = async <T>(fn: () => Promise<T>): Promise<T> => {
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
};

/** Builds the bundle unless `dist/` is already built from the current sources; says which it did. */
export const ensureDashboardBuilt = async (): Promise<'fresh' | 'built'> => {
  if (isDashboardFresh()) return 'fresh';
  return withBuildLock(async () => {
    // Another process may have built it while this one waited for the lock.
    if (isDashboardFresh()) return 'fresh';
    await buildUnlocked();
    return 'built';
  });
};

/** Builds the bundle now (after any build already running). */
export const buildDashboard = (): Promise<void> => withBuildLock(buildUnlocked);

/** Vite's dev server with the venue behind a proxy (hot reload while working on the dashboard). */
const dev = async (): Promise<void> => {
  const { createServer } = await import('vite');
  const target = process.env.VENUE_URL ?? 'http://127.0.0.1:8000';
  const server = await createServer({
    ...viteConfig(),
    logLevel: 'info',
    server: {
      host: '127.0.0.1',
      port: Number(process.env.DASHBOARD_DEV_PORT ?? 5173),
      proxy: {
        '/api': { target },
        '/health': { target },
        '/ws': { target, ws: true },
      },
    },
  });
  await server.listen();
  server.printUrls();
};

const main = async (args: string[]): Promise<void> => {
  if (args.includes('--dev')) return dev();
  const started = performance.now();
  let outcome: 'fresh' | 'built' = 'built';
  if (args.includes('--if-stale')) outcome = await ensureDashboardBuilt();
  else await buildDashboard();
  const ms = Math.round(performance.now() - started);
  console.log(
    outcome === 'fresh'
      ? `dashboard: ${path.relative(process.cwd(), DASHBOARD_DIST)} is up to date`
      : `dashboard: built ${path.relative(process.cwd(), DASHBOARD_DIST)} in ${ms} ms`,
  );
};

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    console.error(`dashboard: build failed: ${(error as Error).message}`);
    process.exit(1);
  });
}
