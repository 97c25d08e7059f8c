import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { api } from '../accounts/support';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Calls `/api/v1{url}` through `inject` and returns status, JSON body, raw body and headers. */
export const call = async (
  app: FastifyInstance,
  headers: Record<string, string>,
  method: Method,
  url: string,
  payload?: unknown,
) => {
  const res = await api(app, {
    method,
    url,
    headers,
    ...(payload !== undefined ? { payload: payload as never } : {}),
  });
  return { status: res.statusCode, body: res.json() as any, raw: res.body, headers: res.headers };
};

/** Calls ({@link call}'s arguments) and expects `status` (default 200); returns the body. */
export const ok = async (
  ...[app, headers, method, url, payload, status = 200]: [...Parameters<typeof call>, number?]
) => {
  const r = await call(app, headers, method, url, payload);
  expect(r.status, `${method} ${url}: ${r.raw}`).toBe(status);
  return r.body;
};

/** Calls and expects the spec's error envelope with `status` and `code`; returns the error. */
export const fails = async (
  app: FastifyInstance,
  headers: Record<string, string>,
  method: Method,
  url: string,
  status: number,
  code: string,
  payload?: unknown,
) => {
  const r = await call(app, headers, method, url, payload);
  expect([r.status, r.body?.error?.code], `${method} ${url}: ${r.raw}`).toEqual([status, code]);
  return r.body.error as { code: string; message: string; details?: Record<string, unknown> };
};
