import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestApp } from '../support/test-app';
import { fails, ok, type Rest, restOf } from './scenario';

/**
 * The symbol lists of `get_prices` and `get_tickers` follow REST's rule, not one of the MCP door's own: the spec
 * puts no bound on `/market/prices`' `symbols`, and `/market/tickers`' "at most 100" is counted by the use case
 * over distinct pairs (`tickers`, src/application/market.ts). The tools' input schemas capped both arrays at 100
 * entries, so 101 names that REST answers were refused through MCP (found by helper sweepc). With the SDK's client
 * over HTTP.
 */
const t = useTestApp();
let rest: Rest;
let client: Client;
let listed: string[] = [];

beforeAll(async () => {
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  rest = restOf(base, {});
  client = new Client({ name: 'symbol-lists', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  listed = ((await rest('GET', '/market/pairs')).body.pairs as { symbol: string }[]).map((p) => p.symbol);
  for (const symbol of listed) t.tick(symbol, '100');
}, 60_000);

/** `n` names cycling through the listed pairs. */
const names = (n: number) => Array.from({ length: n }, (_, i) => listed[i % listed.length]!);

describe('the symbol lists of get_prices and get_tickers', () => {
  it('take what REST takes, and refuse what it refuses', async () => {
    const many = names(101);
    const prices = await rest('GET', `/market/prices?symbols=${many.join(',')}`);
    expect(prices.status).toBe(200);
    const viaMcp = await ok(client, 'get_prices', { symbols: many });
    expect(viaMcp.prices).toEqual(prices.body.prices);

    const tickers = await rest('GET', `/market/tickers?symbols=${many.join(',')}`);
    expect(tickers.status).toBe(200);
    expect(Object.keys((await ok(client, 'get_tickers', { symbols: many })).tickers).sort()).toEqual(
      Object.keys(tickers.body).sort(),
    );

    // Still refused by both: no symbol at all, and (tickers) more than 100 distinct pairs, here unknown ones.
    const distinct = Array.from({ length: 101 }, (_, i) => `X${i}USDT`);
    const tooMany = (await rest('GET', `/market/tickers?symbols=${distinct.join(',')}`)).body.error;
    expect(tooMany.code).toBe('VALIDATION_ERROR');
    const tooManyViaMcp = await fails(client, 'get_tickers', { symbols: distinct });
    expect(tooManyViaMcp.message).toBe(tooMany.message.replace('querystring', 'arguments'));
    expect((await fails(client, 'get_prices', { symbols: [] })).code).toBe('VALIDATION_ERROR');
    expect((await fails(client, 'get_tickers', { symbols: [] })).code).toBe('VALIDATION_ERROR');
  }, 60_000);
});
