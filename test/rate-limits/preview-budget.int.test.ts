import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import ccxt from 'ccxt';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerAccount, type TestAccount } from '../accounts/support';
import { fails, ok, type Rest, restOf } from '../mcp/scenario';
import { useTestApp } from '../support/test-app';

/**
 * A preview is not an order: the spec's order limit (100 a minute, "Limits") counts `POST /trade/order` and the
 * cancels, and REST counts `POST /trade/order/preview` in `general`. The MCP door counted `place_order` with
 * `dry_run: true` (and `place_oco_order`'s) in `orders`, and the Binance door its `POST /order/test`, so a bot
 * that had spent its orders budget could preview through REST but not through the other two doors, and each dry
 * run there took an order from the budget every door shares (found by helper sweepc). With the real SDK client
 * and the real `ccxt` package against the venue over HTTP.
 */
const t = useTestApp();
let account: TestAccount;
let base = '';
let rest: Rest;
let mcp: Client;

const ORDER = { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: '20000' } as const;
const OCO = {
  symbol: 'BTCUSDT',
  side: 'buy',
  quantity: '0.001',
  take_profit: { price: '20000' },
  stop_loss: { trigger_price: '40000' },
} as const;

beforeAll(async () => {
  account = await registerAccount(t.app, {}, { plain: true });
  base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  rest = restOf(base, { 'x-api-key': account.apiKey });
  mcp = new Client({ name: 'preview-budget', version: '1' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { 'x-api-key': account.apiKey } },
    }),
  );
  t.tick('BTCUSDT', '30000');
}, 60_000);

describe('the preview of an order, through every door', () => {
  it('counts in general as REST counts it, not in the spent orders budget', async () => {
    // The orders budget spent: 100 cancels of an order that does not exist (each counted, each 404).
    for (let i = 0; i < 100; i++) {
      const cancel = await rest('DELETE', '/trade/order/00000000-0000-0000-0000-000000000000');
      expect(cancel.status).toBe(404);
    }
    expect((await rest('POST', '/trade/order', ORDER)).status).toBe(429);

    // REST previews all the same.
    expect((await rest('POST', '/trade/order/preview', ORDER)).status).toBe(200);
    expect((await rest('POST', '/trade/order/oco/preview', OCO)).status).toBe(200);

    // So does MCP's dry run, while a placement through it is refused.
    expect((await ok(mcp, 'place_order', { ...ORDER, dry_run: true })).preview.would_fill).toBe(false);
    expect((await ok(mcp, 'place_oco_order', { ...OCO, dry_run: true })).preview).toBeDefined();
    expect((await fails(mcp, 'place_order', ORDER)).code).toBe('RATE_LIMIT_EXCEEDED');

    // And Binance's test order, through ccxt; its order count stays at the 101 REST sent.
    const binance = new ccxt.binance({
      apiKey: account.apiKey,
      secret: account.apiSecret,
      enableRateLimit: false,
      urls: { api: { public: `${base}/binance/api/v3`, private: `${base}/binance/api/v3` } },
      options: { fetchMarkets: { types: ['spot'] }, fetchCurrencies: false, fetchMargins: false },
    });
    const test = {
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      timeInForce: 'GTC',
      quantity: '0.001',
      price: '20000',
    };
    expect(await binance.privatePostOrderTest(test)).toEqual({});
    await expect(binance.privatePostOrder(test)).rejects.toThrow(ccxt.DDoSProtection);
    const [usage] = (await binance.privateGetRateLimitOrder()) as { count: number; limit: number }[];
    expect(usage).toMatchObject({ limit: 100, count: 100 });
  }, 60_000);
});
