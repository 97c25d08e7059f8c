import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_DIST, ensureDashboardBuilt } from '../../dashboard/build';
import { dashboardRoutes } from '../../src/http/dashboard';
import { startApp } from '../accounts/support';
import { useTestApp } from '../support/test-app';

/**
 * The dashboard served by the venue at `/` (issue 22, docs/dashboard.md): the bundle built from the sources (as
 * `npm ci` and `npm start` do), its files with their headers and precompressed copies, the routes that were there
 * before left alone, and the bundle's size (under 400 KB gzipped, docs/benchmarks.md).
 */
let assets: string[] = [];
// The app finds the bundle when it starts: build it first.
const t = useTestApp(async () => {
  await ensureDashboardBuilt();
  assets = fs.readdirSync(path.join(DASHBOARD_DIST, 'assets')).filter((f) => /\.(js|css)$/.test(f));
  return startApp({ env: { MARKET_SOURCE: 'synthetic', MARKET_SYMBOLS: 'SOLUSDT' } });
}, 400_000);

const get = (url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url, headers });

describe('the dashboard at /', () => {
  it('serves index.html with a strict CSP, revalidated on every load, naming its hashed assets', async () => {
    const r = await get('/');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.headers['cache-control']).toBe('no-cache');
    expect(r.headers['content-security-policy']).toContain("script-src 'self'");
    expect(r.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(r.headers['x-frame-options']).toBe('DENY');
    expect(r.body).toContain('<div id="app"></div>');
    const scripts = [...r.body.matchAll(/src="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]);
    expect(scripts.length).toBe(1);
    expect(assets).toContain(scripts[0]);
    expect((await get('/index.html')).body).toBe(r.body);
  });

  it('serves the assets cached for a year, brotli or gzip to clients that accept them, plain otherwise', async () => {
    const js = assets.find((a) => a.endsWith('.js'))!;
    const file = fs.readFileSync(path.join(DASHBOARD_DIST, 'assets', js));
    const plain = await get(`/assets/${js}`);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.equals(file)).toBe(true);
    const br = await get(`/assets/${js}`, { 'accept-encoding': 'br, gzip' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.rawPayload).equals(file)).toBe(true);
    const gz = await get(`/assets/${js}`, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(zlib.gunzipSync(gz.rawPayload).equals(file)).toBe(true);
    // The compressed copies and the build stamp are not routes of their own.
    expect((await get(`/assets/${js}.gz`)).statusCode).toBe(404);
    expect((await get('/.build-stamp')).statusCode).toBe(404);
  });

  it('leaves /health, /openapi.json, /docs and /api/v1 as they were, and unknown paths in the error envelope', async () => {
    expect((await get('/health')).json().status).toBeDefined();
    const doc = (await get('/openapi.json')).json();
    expect(Object.keys(doc.paths).some((p) => !p.startsWith('/api/v1') && p !== '/health')).toBe(false);
    expect((await get('/docs')).statusCode).toBeLessThan(400);
    expect((await get('/api/v1/market/pairs')).json().total).toBeGreaterThan(0);
    const unknown = await get('/dashboard/nope');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no route GET /dashboard/nope' } });
  });

  it('keeps the whole bundle under 400 KB gzipped', () => {
    const files = ['index.html', ...assets.map((a) => `assets/${a}`)];
    const sizes = files.map((f) => {
      const body = fs.readFileSync(path.join(DASHBOARD_DIST, f));
      return { file: f, bytes: body.length, gzip: zlib.gzipSync(body, { level: 9 }).length };
    });
    const total = sizes.reduce((s, x) => s + x.gzip, 0);
    console.log(
      `dashboard bundle: ${sizes.map((s) => `${s.file} ${s.bytes} B (${s.gzip} B gzipped)`).join(', ')}; ` +
        `total ${(total / 1024).toFixed(1)} KB gzipped`,
    );
    expect(total).toBeLessThan(400 * 1024);
  });
});

describe('without a build', () => {
  it('answers / with 503 and how to build it, and nothing else changes', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-no-dashboard-'));
    const app = Fastify();
    await app.register(dashboardRoutes(empty));
    const r = await app.inject({ method: 'GET', url: '/' });
    expect(r.statusCode).toBe(503);
    expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(r.body).toContain('npm run build:dashboard');
    expect((await app.inject({ method: 'GET', url: '/assets/x.js' })).statusCode).toBe(404);
    await app.close();
    fs.rmSync(empty, { recursive: true, force: true });
  });
});
