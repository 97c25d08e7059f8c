import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';

/** Where `dashboard/build.ts` writes the bundle (`npm ci` and `npm start` build it; not committed). */
export const DASHBOARD_DIST = path.resolve(import.meta.dirname, '../../dashboard/dist');

const NOT_BUILT = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Dashboard not built</title>
<body style="font:16px system-ui;margin:3rem;max-width:40rem">
<h1>The dashboard is not built</h1>
<p>Run <code>npm run build:dashboard</code> (or <code>npm ci</code>, or <code>npm start</code>, which build it),
then reload. The API is up: <a href="/docs">/docs</a>, <a href="/health">/health</a>.</p></body></html>`;

/**
 * The web dashboard at `/` (issue 22, docs/dashboard.md): the static bundle of `dashboard/dist` (`index.html` and
 * content-hashed `assets/`), served with its precompressed `.br`/`.gz` copies to clients that accept them. Only
 * the files present at start are routed (no wildcard), so `/docs`, `/openapi.json`, `/health`, `/api/v1` and
 * `/ws/v1` are untouched and unknown paths still answer the JSON error envelope. `index.html` is revalidated on
 * every load (`no-cache`); hashed assets are cached for a year; the CSP is the venue's (security-headers.ts). Without a build, `/`
 * answers 503 with a page saying how to build it. The dashboard is a client of the public API only.
 */
export const dashboardRoutes =
  (dist: string = DASHBOARD_DIST): FastifyPluginAsync =>
  async (app) => {
    if (!fs.existsSync(path.join(dist, 'index.html'))) {
      app.log.warn({ dist }, 'dashboard not built: run `npm run build:dashboard`; / answers 503');
      app.get('/', { schema: { hide: true } }, async (_request, reply) =>
        reply
          .status(503)
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(NOT_BUILT),
      );
      return;
    }
    await app.register(fastifyStatic, {
      root: dist,
      prefix: '/',
      wildcard: false,
      preCompressed: true,
      decorateReply: false,
      cacheControl: false,
      index: ['index.html'],
      globIgnore: ['**/*.gz', '**/*.br', '**/.build-stamp'],
      // The Content-Security-Policy and the other security headers are the venue's, on every response
      // (src/http/security-headers.ts): its own scripts only, connections to this origin (REST and /ws/v1).
      setHeaders: (res, file) => {
        const hashed = file.includes(`${path.sep}assets${path.sep}`);
        res.setHeader('cache-control', hashed ? 'public, max-age=31536000, immutable' : 'no-cache');
      },
    });
  };
