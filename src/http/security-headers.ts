import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';

/** A Content-Security-Policy as `@fastify/helmet` takes it: directive name (camelCase) to sources. */
export type CspDirectives = Record<string, string[]>;

/**
 * The Content-Security-Policy of every response (issue 16, item 5). Pages are served from this origin only:
 * - the API docs at `/docs` (`@fastify/swagger-ui`: its scripts and styles are files under `/docs/static`, its
 *   icons `data:` images; it sets style attributes at run time, hence `'unsafe-inline'` for styles only);
 * - the dashboard at `/` (Vite-built files under this origin; lightweight-charts draws on canvas; its WebSocket to
 *   `/ws/v1` is same-origin, which `'self'` allows for `ws:`/`wss:` in CSP Level 3 browsers).
 * No inline or remote script, no plugins, no framing by other sites, forms and `<base>` only to this origin.
 *
 * A door that needs more (a CDN font, a chart library loading workers from `blob:`) extends it in one place:
 * `registerSecurityHeaders(app, { workerSrc: ["'self'", 'blob:'] })` merges the given directives over these.
 */
export const CSP_DIRECTIVES: CspDirectives = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/**
 * Registers `@fastify/helmet` on `app` (every route, errors and 404s too): the CSP above (merged with `extra`),
 * `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `X-Frame-Options: DENY` (with the CSP's
 * `frame-ancestors 'none'`), `Cross-Origin-Opener-Policy`/`-Resource-Policy: same-origin`, and helmet's other
 * defaults. HSTS is left to the TLS terminator (the venue speaks plain HTTP behind it; a header it cannot keep
 * would pin browsers to HTTPS on a host without it).
 */
export const registerSecurityHeaders = async (
  app: FastifyInstance,
  extra: CspDirectives = {},
): Promise<void> => {
  await app.register(helmet, {
    global: true,
    contentSecurityPolicy: { useDefaults: false, directives: { ...CSP_DIRECTIVES, ...extra } },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: false,
  });
};
