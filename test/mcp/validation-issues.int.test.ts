import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerAccount, type TestAccount } from '../accounts/support';
import { useTestApp } from '../support/test-app';
import { fails, type Rest, restOf } from './scenario';

/**
 * A `VALIDATION_ERROR` that the use case or the wallet's decider raises (a price of 0, an amount with nine
 * places, an unknown indicator), not the tool's input schema, answered through `/mcp` with the SDK's own client:
 * docs/mcp.md promises the REST envelope, `details.issues[]` of `{field, location: "arguments", message}`. REST
 * turns the error's `details.field` into that issue (`withIssues`); the MCP door passed `{field}` on, so a host
 * read no issue and no per-field message (found by helper sweepc). Over stdio (`ptv mcp`, a client of REST) the
 * same issue is located in the arguments too, not where the REST request it made carried the field.
 */
const t = useTestApp();
let account: TestAccount;
let rest: Rest;
let client: Client;
let stdio: Client;

beforeAll(async () => {
  account = await registerAccount(t.app, {}, { plain: true });
  const base = await t.app.listen({ host: '127.0.0.1', port: 0 });
  rest = restOf(base, { 'x-api-key': account.apiKey });
  client = new Client({ name: 'validation-issues', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { 'x-api-key': account.apiKey } },
    }),
  );
  stdio = new Client({ name: 'validation-issues-stdio', version: '1' });
  await stdio.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'src/main.ts', 'mcp', '--base-url', base, '--api-key', account.apiKey],
      env: { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn' },
      stderr: 'inherit',
    }),
  );
}, 60_000);

afterAll(async () => {
  await client?.close();
  await stdio?.close();
});

/** REST's issues of the same refusal, located in the tool's arguments as the MCP door names them. */
const asArguments = (issues: { field: string; location: string; message: string }[]) =>
  issues.map((issue) => ({ ...issue, location: 'arguments' }));

describe('a VALIDATION_ERROR of a use case through /mcp', () => {
  it('lists details.issues as REST does, located in the arguments', async () => {
    const cases: [string, Record<string, unknown>, string, string, unknown?][] = [
      [
        'place_order',
        { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: '0', dry_run: true },
        'POST',
        '/trade/order/preview',
        { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', price: '0' },
      ],
      [
        'place_order',
        { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001', dry_run: true },
        'POST',
        '/trade/order/preview',
        { symbol: 'BTCUSDT', side: 'buy', type: 'limit', quantity: '0.001' },
      ],
      [
        'reset_account',
        { confirm: true, new_starting_balance: '0.000000001' },
        'POST',
        '/account/reset',
        { confirm: true, new_starting_balance: '0.000000001' },
      ],
      [
        'get_indicators',
        { symbol: 'BTCUSDT', indicators: 'foo' },
        'GET',
        '/market/indicators/BTCUSDT?indicators=foo',
      ],
    ];
    for (const [tool, args, method, path, body] of cases) {
      const viaRest = (await rest(method, path, body)).body.error;
      expect(viaRest.code, `${tool} over REST`).toBe('VALIDATION_ERROR');
      for (const [transport, mcp] of [
        ['http', client],
        ['stdio', stdio],
      ] as const) {
        const viaMcp = await fails(mcp, tool, args);
        expect(viaMcp.code, `${tool} over ${transport}`).toBe('VALIDATION_ERROR');
        expect(viaMcp.message, `${tool} over ${transport}`).toBe(viaRest.message);
        expect(viaMcp.details?.issues, `${tool} over ${transport}`).toEqual(
          asArguments(viaRest.details.issues),
        );
        expect(viaMcp.details, `${tool} over ${transport}`).not.toHaveProperty('field');
      }
    }
    // Nothing changed: no order, the starting balance as registered.
    expect((await rest('GET', '/trade/orders')).body.orders).toEqual([]);
    const info = (await rest('GET', '/account/info')).body;
    expect(info.starting_balance).toBe('10000.00000000');
  }, 60_000);
});
