import type { InjectOptions } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DomainError } from '../../domain/shared/errors';
import { apiRoutes } from '../../src/http/routes/index';
import { createTestApp, operatorHeadersOf, type TestApp } from '../support/runtime';

// A probe route exercising validation, domain errors and crashes through the real stack.
const probe: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/_probe/echo',
    {
      schema: {
        body: z.object({ name: z.string().min(1).max(5), qty: z.string().regex(/^\d+(\.\d{1,8})?$/) }),
        querystring: z.object({ limit: z.coerce.number().int().min(1).max(10).default(3) }),
        response: { 200: z.object({ name: z.string(), qty: z.string(), limit: z.number() }) },
      },
    },
    async (request) => ({ ...request.body, limit: request.query.limit }),
  );
  app.post(
    '/_probe/strict/:id',
    { schema: { params: z.object({ id: z.string() }), body: z.strictObject({ name: z.string() }) } },
    async (request) => ({ id: request.params.id }),
  );
  app.get('/_probe/domain', async () => {
    throw new DomainError('ORDER_NOT_FOUND', 'order 42 not found', { order_id: '42' });
  });
  app.post(
    '/_probe/field/:item',
    {
      schema: {
        params: z.object({ item: z.string() }),
        querystring: z.object({ page: z.string().optional() }),
      },
    },
    async (request) => {
      const { item } = request.params;
      const field = item === 'none' ? undefined : item;
      throw new DomainError('VALIDATION_ERROR', `${field ?? 'the request'} is wrong`, {
        ...(field ? { field } : {}),
        min: 1,
      });
    },
  );
  app.get('/_probe/crash', async () => {
    throw new Error('secret internal detail');
  });
  app.get('/_probe/orders', { config: { rateLimitGroup: 'orders' } }, async () => ({ ok: true }));
};
apiRoutes.push({ name: 'probe', plugin: probe });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ BODY_LIMIT_BYTES: '2048' });
  // These probes use made-up keys that no account owns (the venue would count them per client IP): count each key
  // as an owner of its own, to see the limiter count per identity and group.
  t.runtime.services.rateLimitIdentity = (request) => {
    const key = request.headers['x-api-key'];
    return typeof key === 'string' ? `probe:${key}` : undefined;
  };
});
afterAll(async () => {
  await t?.close();
});

/** POST to the probe's echo route (body `name`, `qty`; query `limit`), optionally with a query and a content type. */
const postEcho = (
  payload: InjectOptions['payload'],
  options: { query?: string; contentType?: string } = {},
) =>
  t.app.inject({
    method: 'POST',
    url: `/api/v1/_probe/echo${options.query ?? ''}`,
    ...(options.contentType ? { headers: { 'content-type': options.contentType } } : {}),
    payload,
  });

describe('HTTP runtime', () => {
  it('answers unknown routes in the error envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no route GET /api/v1/nope' } });
  });

  it('turns schema failures into VALIDATION_ERROR 422 naming the field', async () => {
    const res = await postEcho({ name: '', qty: '1' });
    expect(res.statusCode).toBe(422);
    const body = res.json();
    expect(body.error.code).toBe('VALIDATION_ERROR');
    expect(body.error.details.issues[0]).toMatchObject({ field: 'name', location: 'body' });
    const query = await postEcho({ name: 'a', qty: '1' }, { query: '?limit=99' });
    expect(query.statusCode).toBe(422);
    expect(query.json().error.details.issues[0]).toMatchObject({ field: 'limit', location: 'querystring' });
  });

  it('accepts valid input and applies query defaults', async () => {
    const res = await postEcho({ name: 'ab', qty: '1.5' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'ab', qty: '1.5', limit: 3 });
  });

  it('answers malformed, empty, oversized and non-JSON bodies in the envelope, never 500', async () => {
    const malformed = await postEcho('{"name": "a",', { contentType: 'application/json' });
    expect(malformed.statusCode).toBe(422);
    expect(malformed.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { issues: [{ field: 'body', location: 'body', message: expect.any(String) }] },
    });
    const empty = await postEcho('', { contentType: 'application/json' });
    expect(empty.statusCode).toBe(422);
    expect(empty.json().error.details.issues).toEqual([
      { field: 'body', location: 'body', message: expect.any(String) },
    ]);
    const big = await postEcho({ name: 'a', qty: '1', pad: 'x'.repeat(5000) });
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toEqual({
      code: 'VALIDATION_ERROR',
      message: 'request body is too large',
      details: { limit_bytes: 2048, issues: [{ field: 'body', location: 'body', message: 'too large' }] },
    });
    const text = await postEcho('hello', { contentType: 'text/plain' });
    expect(text.statusCode).toBe(415);
    expect(text.json().error.details).toEqual({
      issues: [{ field: 'content-type', location: 'headers', message: 'must be application/json' }],
    });
  });

  it('names each unknown body field as its own issue', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v1/_probe/strict/1',
      payload: { name: 'a', colour: 'red', size: 3 },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error.code).toBe('VALIDATION_ERROR');
    expect(res.json().error.details.issues).toEqual([
      { field: 'colour', location: 'body', message: 'unknown field' },
      { field: 'size', location: 'body', message: 'unknown field' },
    ]);
  });

  it('answers router errors (a bad %-escape, an over-long path parameter) in the envelope', async () => {
    const badEscape = await t.app.inject({
      method: 'POST',
      url: '/api/v1/_probe/strict/%E0%A4%A',
      payload: {},
    });
    expect(badEscape.statusCode).toBe(400);
    expect(badEscape.json().error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
    expect(badEscape.json().error.details.issues).toEqual([
      { field: 'path', location: 'params', message: 'holds a malformed %-escape' },
    ]);
    const longParam = await t.app.inject({
      method: 'POST',
      url: `/api/v1/_probe/strict/${'x'.repeat(200)}`,
      payload: { name: 'a' },
    });
    expect(longParam.statusCode).toBe(414);
    expect(longParam.json().error).toMatchObject({ code: 'VALIDATION_ERROR', message: expect.any(String) });
    expect(longParam.json().error.details.issues).toEqual([
      { field: 'path', location: 'params', message: 'a path parameter is over 100 characters' },
    ]);
    // The message names the path, cut to 120 characters: a path of kilobytes is not echoed whole.
    const path = `/api/v1/_probe/strict/${'y'.repeat(5000)}`;
    for (const url of [path, `${path}%E0%A4%A`]) {
      const res = await t.app.inject({ method: 'POST', url, payload: { name: 'a' } });
      expect([400, 414]).toContain(res.statusCode);
      const { message } = res.json().error;
      expect(message.length, message).toBeLessThan(200);
      expect(message).toMatch(/^'\/api\/v1\/_probe\/strict\/y+…' is /);
    }
  });

  it('gives every VALIDATION_ERROR details.issues[]: a thrown details.field becomes one located issue', async () => {
    const cases: [string, Record<string, string>, object][] = [
      ['/_probe/field/item', {}, { field: 'item', location: 'params', message: 'is wrong' }],
      ['/_probe/field/page?page=2', {}, { field: 'page', location: 'querystring', message: 'is wrong' }],
      [
        '/_probe/field/X-Thing',
        { 'x-thing': '1' },
        { field: 'X-Thing', location: 'headers', message: 'is wrong' },
      ],
      ['/_probe/field/risk.max', {}, { field: 'risk.max', location: 'body', message: 'is wrong' }],
      ['/_probe/field/none', {}, { field: 'body', location: 'body', message: 'the request is wrong' }],
    ];
    for (const [url, headers, issue] of cases) {
      const res = await t.app.inject({ method: 'POST', url: `/api/v1${url}`, headers, payload: { a: 1 } });
      expect(res.statusCode, url).toBe(422);
      // `field` itself is gone (one shape); other details stay.
      expect(res.json().error.details, url).toEqual({ min: 1, issues: [issue] });
    }
  });

  it('renders domain errors with their code, status and details', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/_probe/domain' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      error: { code: 'ORDER_NOT_FOUND', message: 'order 42 not found', details: { order_id: '42' } },
    });
  });

  it('hides internals of unexpected errors behind INTERNAL_ERROR 500', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/_probe/crash' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'INTERNAL_ERROR', message: 'internal error' } });
    expect(res.body).not.toContain('secret');
  });

  it('echoes a well-formed X-Request-Id and makes one up otherwise', async () => {
    const given = await t.app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'req-abc.1' },
    });
    expect(given.headers['x-request-id']).toBe('req-abc.1');
    const bad = await t.app.inject({
      method: 'GET',
      url: '/health',
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('puts X-RateLimit-* on every /api/v1 response, Reset as a Unix time', async () => {
    for (const url of ['/api/v1/_probe/domain', '/api/v1/_probe/orders']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': 'ak_live_headers' } });
      expect(Number(res.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
      expect(Number(res.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
      const reset = Number(res.headers['x-ratelimit-reset']);
      const now = Date.now() / 1000;
      expect(reset).toBeGreaterThanOrEqual(Math.floor(now));
      expect(reset).toBeLessThanOrEqual(now + 61);
    }
  });

  it('limits per credential and group, then answers 429 RATE_LIMIT_EXCEEDED with Retry-After', async () => {
    const headers = { 'x-api-key': 'ak_live_flood' };
    let last = await t.app.inject({ method: 'GET', url: '/api/v1/_probe/orders', headers });
    expect(last.headers['x-ratelimit-limit']).toBe('100');
    for (let i = 1; i < 100; i++)
      last = await t.app.inject({ method: 'GET', url: '/api/v1/_probe/orders', headers });
    expect(last.statusCode).toBe(200);
    expect(last.headers['x-ratelimit-remaining']).toBe('0');
    const limited = await t.app.inject({ method: 'GET', url: '/api/v1/_probe/orders', headers });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({
      code: 'RATE_LIMIT_EXCEEDED',
      details: { limit: 100, window_seconds: 60 },
    });
    expect(limited.json().error.details.retry_after_seconds).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another credential and another group are counted separately.
    const other = await t.app.inject({
      method: 'GET',
      url: '/api/v1/_probe/orders',
      headers: { 'x-api-key': 'ak_live_x' },
    });
    expect(other.statusCode).toBe(200);
    const general = await t.app.inject({ method: 'GET', url: '/api/v1/_probe/domain', headers });
    expect(general.statusCode).toBe(404);
    expect(general.headers['x-ratelimit-limit']).toBe('600');
  });

  it('serves the OpenAPI document generated from the zod schemas, and the docs UI', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    const echo = doc.paths['/api/v1/_probe/echo'].post;
    expect(echo.requestBody.content['application/json'].schema.properties.name).toMatchObject({
      minLength: 1,
    });
    expect(doc.paths['/health']).toBeDefined();
    const ui = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toContain('text/html');
  });

  it('reports health: event store, database and projection lag', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health', headers: operatorHeadersOf(t.app) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      status: 'ok',
      event_store: { status: 'ok' },
      database: { status: 'ok' },
    });
    expect(body.projections.find((p: { name: string }) => p.name === 'stream_summaries')).toMatchObject({
      generation: expect.any(Number),
      lag_events: expect.any(Number),
    });
    expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  });
});
