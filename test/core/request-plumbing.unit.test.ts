import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { requestIdMaker } from '../../src/http/request-id';
import { lazyRequestLogger } from '../../src/http/request-logger';
import { createLogger } from '../../src/logger';

/** A pino destination that keeps the lines written. */
const lines = () => {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  return { written, destination };
};

/** A line without its time (two loggers write the same line at different instants). */
const timeless = (line: string) => {
  const { time: _time, ...rest } = JSON.parse(line) as Record<string, unknown>;
  return rest;
};

describe('request ids (src/http/request-id.ts)', () => {
  it('are version 4 UUIDs, distinct across many pool refills', () => {
    const next = requestIdMaker();
    const ids = Array.from({ length: 5_000 }, () => next());
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // Each maker draws its own random bytes.
    expect(requestIdMaker()()).not.toBe(requestIdMaker()());
  });
});

describe("a request's lazy logger (src/http/request-logger.ts)", () => {
  it("makes no child for lines the level drops, and writes the child's own line for the others", () => {
    const { written, destination } = lines();
    const root = createLogger('warn', { destination });
    const child = vi.spyOn(root, 'child');
    const log = lazyRequestLogger(root, { reqId: 'r-1' }, {});
    log.info({ req: { url: '/x' } }, 'incoming request');
    log.debug('nothing');
    expect(child).not.toHaveBeenCalled();
    expect(written).toEqual([]);
    expect(log.level).toBe('warn');

    log.warn({ code: 'X', body: { token: 'secret' } }, 'refused');
    log.error('failed');
    expect(child).toHaveBeenCalledTimes(1);
    child.mockRestore();
    const { written: eager, destination: eagerOut } = lines();
    const direct = createLogger('warn', { destination: eagerOut }).child({ reqId: 'r-1' });
    direct.warn({ code: 'X', body: { token: 'secret' } }, 'refused');
    direct.error('failed');
    expect(written.map(timeless)).toEqual(eager.map(timeless));
    expect(timeless(written[0]!)).toMatchObject({
      reqId: 'r-1',
      body: { token: '[redacted]' },
      msg: 'refused',
    });
  });

  it("gives a route's own level or serializers the child at once, as fastify's default factory does", () => {
    const { destination } = lines();
    const root = createLogger('warn', { destination });
    const child = vi.spyOn(root, 'child');
    lazyRequestLogger(root, { reqId: 'r-2' }, { level: 'debug' });
    expect(child).toHaveBeenCalledWith({ reqId: 'r-2' }, { level: 'debug' });
  });
});
