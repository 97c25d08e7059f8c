import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { loadConfig } from '../../src/config';
import { buildApp } from '../../src/http/app';
import { createLogger } from '../../src/logger';
import { createRuntime } from '../../src/runtime';
import { createTestDatabase, type TestDatabase } from '../support/databases';
import { BINANCE } from './support';

/**
 * A local stand-in for Binance (127.0.0.1, random port) serving the recorded real data of
 * `../shared/market-data/binance`: `GET /api/v3/exchangeInfo`, `/api/v3/ticker/24hr`, `/api/v3/klines` (the
 * recorded BTCUSDT 1m response; an empty array for other symbols), and combined streams at
 * `/stream?streams=...` that send the recorded frame of each subscribed stream on connect.
 */
export interface FakeBinance {
  restUrl: string;
  wsUrl: string;
  /** Every REST path+query requested. */
  requests: string[];
  /** The `streams` query of every WebSocket connection. */
  connections: string[];
  /** Sends a frame to every open stream connection. */
  broadcast(frame: unknown): void;
  /** Drops every open stream connection (no close handshake). */
  drop(): void;
  /**
   * Answers the next REST requests with these statuses instead (one each, in order), with `Retry-After: s` where
   * given, as Binance does on 429 and 418.
   */
  failNext(...failures: { status: number; retryAfterSeconds?: number }[]): void;
  close(): Promise<void>;
}

const ws = (name: string) => JSON.parse(fs.readFileSync(path.join(BINANCE, 'ws', name), 'utf8'));

/** The recorded frames, by stream name. */
export const RECORDED = {
  trade: ws('btcusdt-trade.json') as { stream: string; data: Record<string, unknown> },
  aggTrade: ws('btcusdt-aggTrade.json') as { stream: string; data: Record<string, unknown> },
  miniTicker: ws('btcusdt-miniTicker.json') as { stream: string; data: Record<string, unknown> },
};

const framesFor = (stream: string): unknown[] => {
  if (stream === 'btcusdt@trade') return [RECORDED.trade];
  if (stream === 'btcusdt@aggTrade') return [RECORDED.aggTrade];
  if (stream === 'btcusdt@miniTicker') return [RECORDED.miniTicker];
  // `!miniTicker@arr` carries the same events as the single-symbol stream, as an array.
  if (stream === '!miniTicker@arr') return [{ stream, data: [RECORDED.miniTicker.data] }];
  return [];
};

export const startFakeBinance = async (): Promise<FakeBinance> => {
  const requests: string[] = [];
  const connections: string[] = [];
  const files = {
    '/api/v3/exchangeInfo': fs.readFileSync(path.join(BINANCE, 'exchangeInfo.json')),
    '/api/v3/ticker/24hr': fs.readFileSync(path.join(BINANCE, 'ticker_24hr.json')),
  } as Record<string, Buffer>;
  const klines = fs.readFileSync(path.join(BINANCE, 'rest-klines-btcusdt-1m.json'));
  const failures: { status: number; retryAfterSeconds?: number }[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    requests.push(`${url.pathname}${url.search}`);
    const failure = failures.shift();
    if (failure) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (failure.retryAfterSeconds !== undefined) headers['retry-after'] = String(failure.retryAfterSeconds);
      res.writeHead(failure.status, headers).end(`{"code":-1003,"msg":"HTTP ${failure.status}"}`);
      return;
    }
    const body =
      files[url.pathname] ??
      (url.pathname === '/api/v3/klines'
        ? url.searchParams.get('symbol') === 'BTCUSDT' && url.searchParams.get('interval') === '1m'
          ? klines
          : Buffer.from('[]')
        : undefined);
    if (!body) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":-1,"msg":"not found"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  const wss = new WebSocketServer({ server, path: '/stream' });
  const sockets = new Set<WebSocket>();
  wss.on('connection', (socket, req) => {
    const streams = new URL(req.url ?? '/', 'http://localhost').searchParams.get('streams') ?? '';
    connections.push(streams);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    for (const stream of streams.split('/'))
      for (const f of framesFor(stream)) socket.send(JSON.stringify(f));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    restUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    requests,
    connections,
    broadcast(frame) {
      for (const s of sockets) s.send(JSON.stringify(frame));
    },
    drop() {
      for (const s of sockets) s.terminate();
    },
    failNext(...next) {
      failures.push(...next);
    },
    async close() {
      for (const s of sockets) s.terminate();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/**
 * A test file's fake Binance, scratch database and data directory (`prefix` names it in the temporary directory):
 * started before the file's tests, closed and removed after them. Read `fake` and `database` inside tests.
 */
export const useFakeBinance = (prefix: string) => {
  const fixture = {
    fake: undefined as unknown as FakeBinance,
    database: undefined as unknown as TestDatabase,
    dataDir: fs.mkdtempSync(path.join(os.tmpdir(), prefix)),
    /**
     * The whole venue on the fake's feed (`MARKET_SOURCE=binance`, BTCUSDT, the scratch database), `env` added:
     * its runtime and app, for the test to close.
     */
    async startVenue(env: Record<string, string> = {}) {
      const config = loadConfig({
        DATA_DIR: fixture.dataDir,
        LOG_LEVEL: 'silent',
        MARKET_SOURCE: 'binance',
        MARKET_SYMBOLS: 'BTCUSDT',
        BINANCE_REST_URL: fixture.fake.restUrl,
        BINANCE_WS_URL: fixture.fake.wsUrl,
        ...env,
      });
      const runtime = await createRuntime(config, createLogger('silent', { pretty: false }), {
        database: fixture.database,
      });
      return { runtime, app: await buildApp(runtime.services) };
    },
  };
  beforeAll(async () => {
    fixture.fake = await startFakeBinance();
    fixture.database = await createTestDatabase();
  });
  afterAll(async () => {
    await fixture.fake?.close();
    await fixture.database?.close();
    fs.rmSync(fixture.dataDir, { recursive: true, force: true });
  });
  return fixture;
};
