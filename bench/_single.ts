import fs from 'node:fs'; import os from 'node:os'; import path from 'node:path';
import pino from 'pino';
import { loadConfig } from '../src/config'; import { buildApp } from '../src/http/app'; import { createRuntime } from '../src/runtime';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-x-'));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-md-'));
fs.mkdirSync(`${dir}/klines/1h`, { recursive: true });
fs.symlinkSync(path.resolve('../shared/market-data/binance/exchangeInfo.json'), `${dir}/exchangeInfo.json`);
for (const s of ['BTCUSDT', 'ETHUSDT']) fs.symlinkSync(path.resolve(`../shared/market-data/binance/klines/1h/${s}-1h.csv`), `${dir}/klines/1h/${s}-1h.csv`);
const config = loadConfig({ ...process.env, DATA_DIR: dataDir, MARKET_DATA_DIR: dir, LOG_LEVEL: 'warn' });
const runtime = await createRuntime(config, pino({ level: 'warn' }));
const app = await buildApp(runtime.services);
await runtime.services.market!.persisted();
const req = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}) => {
  const r = await app.inject({ method: method as any, url: `/api/v1${url}`, headers, ...(body ? { payload: body as any } : {}) });
  if (r.statusCode >= 300) throw new Error(r.body); return r.json();
};
const reg = await req('POST', '/auth/register', { display_name: 'x' });
const login = await req('POST', '/auth/login', { api_key: reg.api_key, api_secret: reg.api_secret });
const auth = { authorization: `Bearer ${login.token}` };
const agent = await req('POST', '/agents', { display_name: 'a' }, auth);
const s = await req('POST', '/backtest/create', { start_time: '2021-05-01T00:00:00Z', end_time: '2023-01-01T00:00:00Z', starting_balance: '10000', candle_interval: '1h', agent_id: agent.agent_id, pairs: null }, auth);
await req('POST', `/backtest/${s.session_id}/start`, undefined, auth);
const cmds = runtime.services.backtest!.commands;
const lat: number[] = []; const inner: number[] = [];
for (let i = 0; i < 400; i++) {
  let t = performance.now();
  await req('POST', `/backtest/${s.session_id}/step`, undefined, auth);
  lat.push(performance.now() - t);
  t = performance.now();
  await cmds.step({ accountId: reg.account_id }, s.session_id, 1, { actor: 'x' });
  inner.push(performance.now() - t);
}
lat.sort((a, b) => a - b); inner.sort((a, b) => a - b);
console.log('http p50', lat[200], 'p99', lat[396], 'command p50', inner[200], 'p99', inner[396]);
await app.close(); await runtime.close();
