import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import helmet from 'helmet';

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
 * The security headers `helmet` sets for `directives`, computed once: with no per-request nonce every value is
 * a constant, and running helmet's middleware on every request (what `@fastify/helmet` does) cost about 50 µs of
 * CPU per request here, doubling a small request's cost. Names lower-cased.
 */
export const securityHeaders = (extra: CspDirectives = {}): Record<string, string> => {
  const headers: Record<string, string> = {};
  const res = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader(name: string) {
      delete headers[name.toLowerCase()];
    },
  };
  let failed: unknown;
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { ...CSP_DIRECTIVES, ...extra } },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: false,
  })({} as IncomingMessage, res as unknown as ServerResponse, (error?: unknown) => {
    failed = error;
  });
  if (failed) throw failed;
  return headers;
};

/**
 * Sets `helmet`'s headers on every response of `app` (routes, errors and 404s; issue 16, item 5): the CSP above
 * (merged with `extra`), `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `X-Frame-Options:
 * DENY` (with the CSP's `frame-ancestors 'none'`), `Cross-Origin-Opener-Policy`/`-Resource-Policy: same-origin`,
 * and helmet's other defaults. HSTS is left to the TLS terminator (the venue speaks plain HTTP behind it; a header
 * it cannot keep would pin browsers to HTTPS on a host without it). A route may still set its own value of any
 * of them (the dashboard's page does its CSP).
 */
export const registerSecurityHeaders = async (
  app: FastifyInstance,
  extra: CspDirectives = {},
): Promise<void> => {
  const headers = Object.entries(securityHeaders(extra));
  // The pairs listed once, not `reply.headers(object)`'s `Object.keys` per request.
  app.addHook('onRequest', (_request, reply, done) => {
    for (const [name, value] of headers) reply.header(name, value);
    done();
  });
};
