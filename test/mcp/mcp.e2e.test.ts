import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lateBound } from '../support/late-bound';
import { type RealDataServer, startRealDataServer } from '../support/real-data-server';
import {
  agentScenario,
  backtestScenario,
  badInputScenario,
  battleScenario,
  checkToolList,
  fails,
  ok,
  type Rest,
  restOf,
  restOfTheApiScenario,
  tradingScenario,
} from './scenario';

/**
 * The MCP server through the SDK's own `Client` against the real venue process on the real data set: over
 * Streamable HTTP at `/mcp` (in the venue) and over stdio (`ptv mcp`, a client of the REST API), the same scenario
 * with each result checked against the REST API's answer (test/mcp/scenario.ts).
 */

let server: RealDataServer;
let base = '';

interface Trader {
  apiKey: string;
  token: string;
  agentId: string;
  rest: Rest;
}

const newTrader = async (name: string): Promise<Trader> => {
  const anonymous = restOf(base, {});
  const reg = await anonymous('POST', '/auth/register', { display_name: name });
  expect(reg.status).toBe(201);
  const login = await anonymous('POST', '/auth/login', {
    api_key: reg.body.api_key,
    api_secret: reg.body.api_secret,
  });
  const token = login.body.token as string;
  const agent = await restOf(base, { authorization: `Bearer ${token}` })('POST', '/agents', {
    display_name: `${name} agent`,
  });
  expect(agent.status).toBe(201);
  return {
    apiKey: reg.body.api_key,
    token,
    agentId: agent.body.agent_id,
    rest: restOf(base, { 'x-api-key': reg.body.api_key }),
  };
};

beforeAll(async () => {
  // The webhook tools register a loopback URL (nothing listens: the test delivery stays pending or fails).
  server = await startRealDataServer('ptv-mcp-e2e-', { WEBHOOKS_ALLOW_PRIVATE: 'true' });
  base = server.url;
}, 150_000);

afterAll(async () => {
  await server?.close();
}, 30_000);

/** A market buy of 0.001 BTC by `trader` over REST (201); resolves to its order id. */
const marketBuy = async (trader: Trader): Promise<string> => {
  const placed = await trader.rest('POST', '/trade/order', {
    symbol: 'BTCUSDT',
    side: 'buy',
    type: 'market',
    quantity: '0.001',
  });
  expect(placed.status).toBe(201);
  return placed.body.order_id;
};

/**
 * Cancels unknown orders through `client` (each ORDER_NOT_FOUND) until the orders group (100 per minute, the
 * wallet owner's, shared with REST) answers RATE_LIMIT_EXCEEDED with a positive `retry_after_seconds`, at most 120
 * calls; resolves to that tool error.
 */
const cancelUntilRateLimited = async (client: Client) => {
  let limited: Awaited<ReturnType<typeof fails>> | undefined;
  for (let i = 0; i < 120 && !limited; i++) {
    const e = await fails(client, 'cancel_order', { order_id: crypto.randomUUID() });
    if (e.code === 'RATE_LIMIT_EXCEEDED') limited = e;
    else expect(e.code).toBe('ORDER_NOT_FOUND');
  }
  expect(limited).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', details: { group: 'orders' } });
  expect(limited!.retry_after_seconds).toBeGreaterThan(0);
  return limited!;
};

/** The text of a resource's content (`text`, not `blob`). */
const textOf = (content: object | undefined): string =>
  content && 'text' in content ? String(content.text) : '';

const connect = async (transport: StreamableHTTPClientTransport | StdioClientTransport) => {
  const client = new Client({ name: 'ptv-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
};

/**
 * The set-up of a describe: in a `beforeAll`, a new trader (`<label> trader`) connected to MCP over the transport
 * `transportOf` makes for it, and another trader (`<label> other`) with a market buy of its own (`otherOrder`, an
 * order the first must not reach); the client is closed in an `afterAll`. Read inside tests only.
 */
const useMcpClient = (
  label: string,
  transportOf: (trader: Trader) => StreamableHTTPClientTransport | StdioClientTransport,
): { trader: Trader; otherOrder: string; client: Client } => {
  let made: { trader: Trader; otherOrder: string; client: Client } | undefined;
  beforeAll(async () => {
    const trader = await newTrader(`${label} trader`);
    const otherOrder = await marketBuy(await newTrader(`${label} other`));
    made = { trader, otherOrder, client: await connect(transportOf(trader)) };
  }, 60_000);
  afterAll(async () => {
    await made?.client.close();
  });
  return lateBound(`the ${label} traders and client`, () => made);
};

describe('MCP over Streamable HTTP at /mcp', () => {
  const mcp = useMcpClient(
    'MCP HTTP',
    (trader) =>
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { 'x-api-key': trader.apiKey } },
      }),
  );

  it('lists every toolset with valid JSON Schemas, resources and the prompt', async () => {
    await checkToolList(mcp.client);
    const { resources } = await mcp.client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual(['ptv://docs/trading-rules.md', 'ptv://skill.md']);
    const rules = await mcp.client.readResource({ uri: 'ptv://docs/trading-rules.md' });
    expect(textOf(rules.contents[0])).toMatch(/risk chain/i);
    const { prompts } = await mcp.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['backtest_then_trade']);
    expect(prompts[0]!.arguments?.map((a) => a.name)).toEqual(['symbol', 'strategy']);
    const prompt = await mcp.client.getPrompt({
      name: 'backtest_then_trade',
      arguments: { symbol: 'ETHUSDT' },
    });
    const message = prompt.messages[0]!.content;
    expect(message.type === 'text' ? message.text : '').toContain('"ETHUSDT"');
    // An unknown tool is the protocol's invalid-params error (MCP spec); the connection stays usable.
    await expect(mcp.client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(
      /no_such_tool/,
    );
    expect((await ok(mcp.client, 'get_price', { symbol: 'BTCUSDT' })).symbol).toBe('BTCUSDT');
  });

  it('trades: whoami, price, dry run, market and limit buy, open orders, cancel, portfolio', async () => {
    await tradingScenario(mcp.client, mcp.trader.rest);
  }, 60_000);

  it('runs a 24-step backtest with a sandbox order and reads its results', async () => {
    await backtestScenario(mcp.client, mcp.trader.rest, mcp.trader.agentId);
  }, 60_000);

  it('answers bad input with the venue code and stays usable', async () => {
    await badInputScenario(mcp.client, mcp.trader.rest, mcp.otherOrder);
  }, 60_000);

  it('covers the rest of the REST API: indicators, events, audit, webhooks', async () => {
    await restOfTheApiScenario(mcp.client, mcp.trader.rest);
  }, 60_000);

  it('runs a live battle over JWT: created, joined, started, stopped', async () => {
    const jwt = restOf(base, { authorization: `Bearer ${mcp.trader.token}` });
    const jwtClient = await connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${mcp.trader.token}` } },
      }),
    );
    try {
      const second = await ok(jwtClient, 'create_agent', { display_name: 'second agent' });
      expect(await ok(jwtClient, 'get_agent', { agent_id: second.agent_id })).toEqual(
        (await jwt('GET', `/agents/${second.agent_id}`)).body,
      );
      expect((await ok(jwtClient, 'list_agents')).total).toBe(2);
      await battleScenario(jwtClient, jwt, [mcp.trader.agentId, second.agent_id]);
      await agentScenario(jwtClient, jwt, second.agent_id);
      const third = await ok(jwtClient, 'create_agent', { display_name: 'third agent' });
      expect((await fails(jwtClient, 'delete_agent', { agent_id: third.agent_id })).code).toBe(
        'VALIDATION_ERROR',
      );
      expect(await ok(jwtClient, 'delete_agent', { agent_id: third.agent_id, confirm: true })).toEqual({
        agent_id: third.agent_id,
        deleted: true,
      });
    } finally {
      await jwtClient.close();
    }
    expect((await fails(mcp.client, 'list_battles', {})).code).toBe('INVALID_TOKEN');
  }, 60_000);

  it("serves the scoped agent's skill.md with an agent key", async () => {
    const key = (
      await restOf(base, { authorization: `Bearer ${mcp.trader.token}` })(
        'GET',
        `/agents/${mcp.trader.agentId}/api-key`,
      )
    ).body.api_key as string;
    const agentClient = await connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { 'x-api-key': key } },
      }),
    );
    try {
      const skill = await agentClient.readResource({ uri: 'ptv://skill.md' });
      expect(textOf(skill.contents[0])).toContain(mcp.trader.agentId);
      expect((await ok(agentClient, 'whoami')).acting_as).toBe('agent');
    } finally {
      await agentClient.close();
    }
  });

  it('refuses a call without credentials with INVALID_API_KEY, and the 101st order of a minute with a 429', async () => {
    const anonymous = await connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      expect((await ok(anonymous, 'get_price', { symbol: 'ETHUSDT' })).symbol).toBe('ETHUSDT');
      expect((await fails(anonymous, 'whoami', {})).code).toBe('INVALID_API_KEY');
    } finally {
      await anonymous.close();
    }
    // The orders group (100 per minute) is the wallet owner's, shared with REST: cancels of unknown ids count.
    await cancelUntilRateLimited(mcp.client);
    expect((await mcp.trader.rest('DELETE', `/trade/order/${crypto.randomUUID()}`)).status).toBe(429);
    expect((await ok(mcp.client, 'get_price', { symbol: 'BTCUSDT' })).symbol).toBe('BTCUSDT');
  }, 60_000);
});

/** `ptv mcp` against the test venue with the given credential flags, as a host starts it. */
const stdio = (...credentials: string[]) =>
  new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', 'src/main.ts', 'mcp', '--base-url', base, ...credentials],
    env: { ...(process.env as Record<string, string>), LOG_LEVEL: 'warn' },
    stderr: 'inherit',
  });

describe('MCP over stdio (ptv mcp, a client of the REST API)', () => {
  const mcp = useMcpClient('MCP stdio', (trader) => stdio('--api-key', trader.apiKey));

  it('lists the same tools as /mcp', async () => {
    const tools = await checkToolList(mcp.client);
    const http = await connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      expect(tools).toEqual((await http.listTools()).tools);
    } finally {
      await http.close();
    }
  });

  it('trades, backtests and answers bad input like /mcp', async () => {
    await tradingScenario(mcp.client, mcp.trader.rest);
    await backtestScenario(mcp.client, mcp.trader.rest, mcp.trader.agentId);
    await badInputScenario(mcp.client, mcp.trader.rest, mcp.otherOrder);
    await restOfTheApiScenario(mcp.client, mcp.trader.rest);
  }, 120_000);

  it('runs a battle and manages agents over JWT (--token), refused with a key', async () => {
    const jwt = restOf(base, { authorization: `Bearer ${mcp.trader.token}` });
    const jwtClient = await connect(stdio('--token', mcp.trader.token));
    try {
      const second = await ok(jwtClient, 'create_agent', { display_name: 'second stdio agent' });
      await battleScenario(jwtClient, jwt, [mcp.trader.agentId, second.agent_id]);
      await agentScenario(jwtClient, jwt, second.agent_id);
    } finally {
      await jwtClient.close();
    }
    // The battle routes take a JWT only: the key's REST answer comes back as the tool error.
    const refused = await fails(mcp.client, 'list_battles', {});
    expect(refused.code).toBe((await mcp.trader.rest('GET', '/battles')).body.error.code);
  }, 120_000);

  it('answers the 101st order of a minute with RATE_LIMIT_EXCEEDED and retry_after_seconds, and stays usable', async () => {
    // The venue's 429 travels as REST's envelope: ptv mcp turns it into the tool error, never a dropped connection.
    const limited = await cancelUntilRateLimited(mcp.client);
    const viaRest = await mcp.trader.rest('DELETE', `/trade/order/${crypto.randomUUID()}`);
    expect(viaRest.status).toBe(429);
    expect(viaRest.body.error.code).toBe(limited.code);
    expect((await ok(mcp.client, 'get_price', { symbol: 'BTCUSDT' })).symbol).toBe('BTCUSDT');
  }, 120_000);
});
