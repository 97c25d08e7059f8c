import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { expect } from 'vitest';
import { until } from '../support/until';

/**
 * The scenario every MCP transport is driven through with the SDK's own `Client` (test/mcp): tools listed with
 * valid JSON Schemas, then whoami, a price, a dry-run order, a market and a limit buy, open orders, a cancel, the
 * portfolio, a 24-step backtest with a sandbox order and its results — each result checked against the REST API's
 * answer — and bad input answered as a tool error with the venue's code on a connection that stays usable.
 */

/** A REST call of one credential: status and JSON body. */
export type Rest = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

/** A REST client of the venue at `base` with `headers` (credentials). */
export const restOf =
  (base: string, headers: Record<string, string>): Rest =>
  async (method, path, body) => {
    const r = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };

/** Calls a tool that must succeed; answers its structured content. */
export const ok = async (client: Client, name: string, args: Record<string, unknown> = {}): Promise<any> => {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(r.isError, `${name}: ${JSON.stringify(r.content)}`).toBeFalsy();
  expect(r.structuredContent).toBeDefined();
  const texts = r.content.filter((c) => c.type === 'text').map((c) => c.text);
  // A summary line, then the same result as JSON (data, never instructions).
  expect(texts).toHaveLength(2);
  expect(JSON.parse(texts[1]!)).toEqual(r.structuredContent);
  return r.structuredContent;
};

/** Calls a tool that must fail; answers the venue's error envelope from the tool error result. */
export const fails = async (
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ code: string; message: string; details?: any; retry_after_seconds?: number }> => {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(r.isError, `${name} should fail: ${JSON.stringify(r.content)}`).toBe(true);
  const text = r.content.find((c) => c.type === 'text');
  return JSON.parse(text!.type === 'text' ? text!.text : '{}').error;
};

/** The toolsets the registry has today. */
export const TOOLSETS_PRESENT = [
  'account',
  'market',
  'trading',
  'backtest',
  'analytics',
  'battle',
  'agents',
  'webhooks',
];

/** Lists tools: every toolset present, every input and output schema valid JSON Schema; answers the tools. */
export const checkToolList = async (client: Client) => {
  const { tools } = await client.listTools();
  const ajv = new AjvJsonSchemaValidator();
  for (const tool of tools) {
    expect(tool.name).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(() => ajv.getValidator(tool.inputSchema as never), tool.name).not.toThrow();
    expect(() => ajv.getValidator(tool.outputSchema as never), tool.name).not.toThrow();
    expect(tool.annotations?.readOnlyHint, tool.name).toBeTypeOf('boolean');
    expect(tool.description!.length).toBeGreaterThan(40);
  }
  const sets = new Set(tools.map((t) => (t._meta as { toolset: string }).toolset));
  expect([...sets].sort()).toEqual([...TOOLSETS_PRESENT].sort());
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const name of ['reset_account', 'cancel_all_orders', 'delete_agent']) {
    expect(byName.get(name)?.annotations?.destructiveHint, name).toBe(true);
    expect(byName.get(name)?.inputSchema.required, name).toContain('confirm');
  }
  expect(byName.get('get_price')?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  return tools;
};

/** The trading scenario (live wallet of the credential the client and `rest` share). */
export const tradingScenario = async (client: Client, rest: Rest) => {
  const me = await ok(client, 'whoami');
  const info = (await rest('GET', '/account/info')).body;
  expect(me).toMatchObject({
    venue: 'paper-trading',
    account_id: info.account_id,
    agent_id: info.agent_id,
    risk_profile: info.risk_profile,
    fee_rate: info.fee_rate,
    current_session: info.current_session,
  });
  expect(me.notice).toMatch(/paper-trading/);
  expect(me.balances).toEqual((await rest('GET', '/account/balance')).body.balances);

  const price = await ok(client, 'get_price', { symbol: 'btcusdt' });
  expect(price).toMatchObject({ symbol: 'BTCUSDT', price: expect.stringMatching(/^\d+\.\d{8}$/) });
  const restPrice = (await rest('GET', '/market/price/BTCUSDT')).body;
  expect(restPrice.symbol).toBe('BTCUSDT');
  expect(Date.parse(restPrice.timestamp)).toBeGreaterThanOrEqual(Date.parse(price.timestamp));

  const buy = { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '0.01' };
  const dry = await ok(client, 'place_order', { ...buy, dry_run: true });
  expect(dry.preview).toMatchObject({
    preview: true,
    status: 'filled',
    would_fill: true,
    executed_quantity: '0.01000000',
  });
  expect(dry.order).toBeUndefined();
  expect((await rest('GET', '/trade/orders')).body.total).toBe(0);

  const placed = (await ok(client, 'place_order', { ...buy, idempotency_key: 'mcp-buy-1' })).order;
  expect(placed).toMatchObject({ status: 'filled', symbol: 'BTCUSDT', executed_quantity: '0.01000000' });
  const restOrder = (await rest('GET', `/trade/order/${placed.order_id}`)).body;
  expect(restOrder).toMatchObject({
    status: 'filled',
    executed_price: placed.executed_price,
    fee: placed.fee,
  });
  // The same idempotency key again: the first answer, no second order.
  const again = await ok(client, 'place_order', { ...buy, idempotency_key: 'mcp-buy-1' });
  expect(again.order.order_id).toBe(placed.order_id);
  expect((await rest('GET', '/trade/orders')).body.total).toBe(1);

  const limitPrice = (Number(price.price) / 2).toFixed(2);
  const limit = (
    await ok(client, 'place_order', {
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'limit',
      quantity: '0.01',
      price: limitPrice,
    })
  ).order;
  expect(limit).toMatchObject({ status: 'pending', type: 'limit' });
  const open = await ok(client, 'list_open_orders');
  expect(open).toEqual((await rest('GET', '/trade/orders/open')).body);
  expect(open.orders.map((o: { order_id: string }) => o.order_id)).toEqual([limit.order_id]);

  const cancelled = await ok(client, 'cancel_order', { order_id: limit.order_id });
  expect(cancelled).toMatchObject({ order_id: limit.order_id, status: 'cancelled', unlocked_asset: 'USDT' });
  expect((await rest('GET', `/trade/order/${limit.order_id}`)).body.status).toBe('cancelled');

  // An OCO's dry run: a take-profit the price already passed would fill at once and cancel its stop-loss; nothing placed.
  const ordersBefore = (await rest('GET', '/trade/orders')).body.total;
  const dryOco = await ok(client, 'place_oco_order', {
    symbol: 'BTCUSDT',
    side: 'sell',
    quantity: '0.01',
    take_profit: { price: (Number(price.price) * 0.5).toFixed(2) },
    stop_loss: { trigger_price: (Number(price.price) * 0.25).toFixed(2) },
    dry_run: true,
  });
  expect(dryOco.oco).toBeUndefined();
  expect(
    dryOco.preview.orders.map((o: { list_role: string; status: string; would_fill: boolean }) => [
      o.list_role,
      o.status,
      o.would_fill,
    ]),
  ).toEqual([
    ['take_profit', 'filled', true],
    ['stop_loss', 'cancelled', false],
  ]);
  expect(dryOco.preview.orders[1].cancel_reason).toBe('linked_fill');
  expect((await rest('GET', '/trade/orders')).body.total).toBe(ordersBefore);

  // An OCO on the 0.01 BTC held (far legs, so neither fills): one lock of the quantity; cancelling a leg cancels both.
  const oco = (
    await ok(client, 'place_oco_order', {
      symbol: 'BTCUSDT',
      side: 'sell',
      quantity: '0.01',
      take_profit: { price: (Number(price.price) * 2).toFixed(2) },
      stop_loss: { trigger_price: limitPrice },
    })
  ).oco;
  expect(oco.orders.map((o: { list_role: string; status: string }) => [o.list_role, o.status])).toEqual([
    ['take_profit', 'pending'],
    ['stop_loss', 'pending'],
  ]);
  const [tpLeg, slLeg] = oco.orders;
  expect((await rest('GET', `/trade/order/${slLeg.order_id}`)).body).toMatchObject({
    order_list_id: oco.order_list_id,
    list_role: 'stop_loss',
  });
  await ok(client, 'cancel_order', { order_id: tpLeg.order_id });
  expect((await rest('GET', `/trade/order/${slLeg.order_id}`)).body).toMatchObject({
    status: 'cancelled',
    cancel_reason: 'linked_cancel',
  });

  const portfolio = await ok(client, 'get_portfolio');
  const restPortfolio = (await rest('GET', '/account/portfolio')).body;
  expect(portfolio).toMatchObject({
    available_cash: restPortfolio.available_cash,
    locked_cash: '0.00000000',
    session_id: restPortfolio.session_id,
    fees_paid: restPortfolio.fees_paid,
  });
  expect(portfolio.positions.map((p: { quantity: string }) => p.quantity)).toEqual(['0.01000000']);
  const history = await ok(client, 'get_trade_history');
  expect(history).toEqual((await rest('GET', '/trade/history')).body);
  return { placed };
};

/** A 24-step backtest with a sandbox order, its results checked against REST. */
export const backtestScenario = async (client: Client, rest: Rest, agentId: string) => {
  const range = await ok(client, 'get_data_range');
  const btc = range.pairs.find((p: { symbol: string }) => p.symbol === 'BTCUSDT');
  expect(btc.intervals).toContain('1h');
  // Three days inside the hourly data set (2020–2023).
  const start = new Date('2023-06-01T00:00:00Z');
  const end = new Date(start.getTime() + 3 * 86_400_000);
  const created = await ok(client, 'create_backtest', {
    start_time: start.toISOString(),
    end_time: end.toISOString(),
    starting_balance: '10000',
    candle_interval: '1h',
    agent_id: agentId,
    pairs: ['BTCUSDT'],
    strategy_label: 'mcp scenario',
  });
  expect(created).toMatchObject({ status: 'created', total_steps: 72 });
  const id = created.session_id;
  expect(await ok(client, 'start_backtest', { id })).toMatchObject({ status: 'running' });
  await ok(client, 'step_backtest', { id });
  const order = (
    await ok(client, 'place_backtest_order', {
      id,
      symbol: 'BTCUSDT',
      side: 'buy',
      type: 'market',
      quantity: '0.05',
    })
  ).order;
  expect(order).toMatchObject({ status: 'filled', executed_quantity: '0.05000000' });
  const stepped = await ok(client, 'step_backtest_batch', { id, steps: 23 });
  expect(stepped).toMatchObject({ step: 24, is_complete: false });
  const sandbox = await ok(client, 'get_backtest_portfolio', { id });
  expect(sandbox).toEqual((await rest('GET', `/backtest/${id}/account/portfolio`)).body);
  const positions = await ok(client, 'get_backtest_positions', { id });
  expect(positions).toEqual((await rest('GET', `/backtest/${id}/account/positions`)).body);
  expect(positions.positions[0]).toMatchObject({ symbol: 'BTCUSDT', quantity: '0.05000000' });
  // The sandbox lists: the same envelope as their routes (rows, total, limit, offset).
  const orders = await ok(client, 'list_backtest_orders', { id, limit: 10 });
  expect(orders).toEqual((await rest('GET', `/backtest/${id}/trade/orders?limit=10`)).body);
  expect(orders).toMatchObject({ total: 1, limit: 10, offset: 0, orders: [{ order_id: order.order_id }] });
  const open = await ok(client, 'list_backtest_open_orders', { id });
  expect(open).toEqual((await rest('GET', `/backtest/${id}/trade/orders/open`)).body);
  expect(open).toMatchObject({ orders: [], total: 0, limit: 100, offset: 0 });
  const fills = await ok(client, 'get_backtest_trade_history', { id, side: 'buy' });
  expect(fills).toEqual((await rest('GET', `/backtest/${id}/trade/history?side=buy`)).body);
  expect(fills).toMatchObject({ total: 1, limit: 50, offset: 0, trades: [{ order_id: order.order_id }] });
  const ticker = await ok(client, 'get_backtest_ticker', { id, symbol: 'BTCUSDT' });
  expect(ticker).toEqual((await rest('GET', `/backtest/${id}/market/ticker/BTCUSDT`)).body);
  const indicators = await ok(client, 'get_backtest_indicators', {
    id,
    symbol: 'BTCUSDT',
    indicators: 'sma_5,rsi',
    limit: 50,
  });
  expect(indicators).toEqual(
    (await rest('GET', `/backtest/${id}/market/indicators/BTCUSDT?indicators=sma_5,rsi&limit=50`)).body,
  );
  expect(indicators.indicators.sma_5).toMatch(/^\d+\.\d+$/);
  await ok(client, 'cancel_backtest', { id });
  const results = await ok(client, 'get_backtest_results', { id });
  expect(results).toEqual((await rest('GET', `/backtest/${id}/results`)).body);
  const status = await ok(client, 'get_backtest_status', { id });
  expect(status.status).toBe('cancelled');
  return { id };
};

/** Bad input through tools: the venue's codes, and the connection still answers after each. */
export const badInputScenario = async (client: Client, rest: Rest, foreignOrderId: string) => {
  const alive = async () => expect((await ok(client, 'list_pairs')).total).toBeGreaterThan(0);
  const unknown = await fails(client, 'get_price', { symbol: 'NOPEUSDT' });
  expect(unknown.code).toBe((await rest('GET', '/market/price/NOPEUSDT')).body.error.code);
  expect(unknown.code).toBe('INVALID_SYMBOL');
  await alive();

  // An order book depth other than 5, 10 or 20: the spec's code and message, as REST answers them.
  const depth = await fails(client, 'get_order_book', { symbol: 'BTCUSDT', depth: 7 });
  expect(depth).toMatchObject((await rest('GET', '/market/orderbook/BTCUSDT?depth=7')).body.error);
  expect(depth).toMatchObject({
    code: 'INVALID_SYMBOL',
    message: 'invalid order book depth 7: use 5, 10 or 20',
  });
  await alive();

  const negative = { symbol: 'BTCUSDT', side: 'buy', type: 'market', quantity: '-1' };
  const neg = await fails(client, 'place_order', negative);
  const restNeg = (await rest('POST', '/trade/order/preview', negative)).body.error;
  expect(neg.code).toBe(restNeg.code);
  expect(neg.message).toBe(restNeg.message);
  await alive();

  const missing = await fails(client, 'place_order', { symbol: 'BTCUSDT', type: 'market', quantity: '0.01' });
  expect(missing.code).toBe('VALIDATION_ERROR');
  expect(missing.details.issues[0]).toMatchObject({ field: 'side', location: 'arguments' });
  await alive();

  const unconfirmed = await fails(client, 'reset_account', {});
  expect(unconfirmed.code).toBe('VALIDATION_ERROR');
  expect(unconfirmed.details.issues[0].field).toBe('confirm');

  const foreign = await fails(client, 'get_order', { order_id: foreignOrderId });
  expect(foreign.code).toBe('ORDER_NOT_FOUND');
  expect(foreign.code).toBe((await rest('GET', `/trade/order/${foreignOrderId}`)).body.error.code);
  const foreignCancel = await fails(client, 'cancel_order', { order_id: foreignOrderId });
  expect(foreignCancel.code).toBe('ORDER_NOT_FOUND');
  await alive();
};

/** A live battle created, joined by two agents, started and stopped over JWT; each answer checked against REST. */
export const battleScenario = async (client: Client, rest: Rest, agentIds: readonly string[]) => {
  const created = await ok(client, 'create_battle', { name: 'MCP battle', battle_mode: 'live' });
  expect(created).toMatchObject({ status: 'draft' });
  const id = created.battle_id;
  for (const agentId of agentIds) await ok(client, 'add_battle_participant', { id, agent_id: agentId });
  // A draft changes: renamed, a participant removed and added back.
  const renamed = await ok(client, 'update_battle', {
    id,
    name: 'MCP battle, renamed',
    starting_balance: '5000',
  });
  expect(renamed).toMatchObject({ name: 'MCP battle, renamed', starting_balance: '5000.00000000' });
  expect((await fails(client, 'update_battle', { id })).code).toBe('VALIDATION_ERROR');
  const removed = await ok(client, 'remove_battle_participant', { id, agent_id: agentIds[0] });
  expect(removed.participants).toHaveLength(agentIds.length - 1);
  await ok(client, 'add_battle_participant', { id, agent_id: agentIds[0] });
  const started = await ok(client, 'start_battle', { id });
  expect(started.status).toBe('active');
  expect(started.participants).toHaveLength(agentIds.length);
  const paused = await ok(client, 'pause_battle_agent', { id, agent_id: agentIds[0] });
  expect(paused.status).toBe('paused');
  expect(paused.participants.find((p: { agent_id: string }) => p.agent_id === agentIds[0]).status).toBe(
    'paused',
  );
  expect((await ok(client, 'resume_battle_agent', { id, agent_id: agentIds[0] })).status).toBe('active');
  const live = await ok(client, 'get_battle_live', { id });
  expect(live.battle_id).toBe(id);
  // Prices at virtual time are a historical battle's: a live one answers the route's error.
  expect((await fails(client, 'get_battle_prices', { id })).code).toBe(
    (await rest('GET', `/battles/${id}/market/prices`)).body.error.code,
  );
  // So is a sandbox order's cancel: the tool answers what the route does.
  const none = '00000000-0000-4000-8000-000000000000';
  expect((await fails(client, 'cancel_battle_order', { id, order_id: none })).code).toBe(
    (await rest('DELETE', `/battles/${id}/trade/order/${none}`)).body.error.code,
  );
  const stopped = await ok(client, 'stop_battle', { id });
  expect(stopped.status).toBe('completed');
  expect(await ok(client, 'get_battle', { id })).toEqual((await rest('GET', `/battles/${id}`)).body);
  const results = await ok(client, 'get_battle_results', { id });
  expect(results).toEqual((await rest('GET', `/battles/${id}/results`)).body);
  expect(await ok(client, 'get_battle_snapshots', { id })).toEqual(
    (await rest('GET', `/battles/${id}/replay`)).body,
  );
  expect(await ok(client, 'get_battle_presets')).toEqual({
    presets: (await rest('GET', '/battles/presets')).body,
  });
  // A replay is a new draft with the original agents; deleting it needs confirm: true.
  const replay = await ok(client, 'replay_battle', { id, override_config: { name: 'MCP replay' } });
  expect(replay).toMatchObject({ status: 'draft', name: 'MCP replay' });
  expect(replay.participants).toHaveLength(agentIds.length);
  expect((await fails(client, 'delete_battle', { id: replay.battle_id })).code).toBe('VALIDATION_ERROR');
  expect(await ok(client, 'delete_battle', { id: replay.battle_id, confirm: true })).toEqual({
    battle_id: replay.battle_id,
    status: 'deleted',
  });
  expect((await rest('GET', `/battles/${replay.battle_id}`)).status).toBe(404);
  // JWT only, as the route: an API key is refused with the route's code.
  return { id };
};

/**
 * Agent management over JWT (update, clone, keys, risk limits, reset, archive), each checked against REST.
 * `agentId` is renamed and gets new limits; its clone has its key replaced, then is reset and archived.
 */
export const agentScenario = async (client: Client, rest: Rest, agentId: string) => {
  const updated = await ok(client, 'update_agent', {
    agent_id: agentId,
    display_name: 'MCP renamed agent',
    strategy_tags: ['mcp'],
  });
  expect(updated).toMatchObject({ display_name: 'MCP renamed agent', strategy_tags: ['mcp'] });
  expect(updated).toEqual((await rest('GET', `/agents/${agentId}`)).body);
  const limits = { max_position_size_pct: 30, daily_loss_limit_pct: 10, max_open_orders: 20 };
  const set = await ok(client, 'set_agent_risk_profile', { agent_id: agentId, ...limits });
  expect(set).toMatchObject(limits);
  expect(await ok(client, 'get_agent_risk_profile', { agent_id: agentId })).toEqual(
    (await rest('GET', `/agents/${agentId}/risk-profile`)).body,
  );
  const clone = await ok(client, 'clone_agent', { agent_id: agentId, new_name: 'MCP clone' });
  expect(clone).toMatchObject({ display_name: 'MCP clone' });
  const key = await ok(client, 'get_agent_api_key', { agent_id: clone.agent_id });
  expect(key).toEqual((await rest('GET', `/agents/${clone.agent_id}/api-key`)).body);
  expect(key.api_key).toBe(clone.api_key);
  expect((await fails(client, 'regenerate_agent_key', { agent_id: clone.agent_id })).code).toBe(
    'VALIDATION_ERROR',
  );
  const regenerated = await ok(client, 'regenerate_agent_key', { agent_id: clone.agent_id, confirm: true });
  expect(regenerated.api_key).not.toBe(clone.api_key);
  expect((await rest('GET', `/agents/${clone.agent_id}/api-key`)).body.api_key).toBe(regenerated.api_key);
  const secret = await ok(client, 'rotate_agent_signing_secret', { agent_id: clone.agent_id, confirm: true });
  expect(secret.api_secret).not.toBe(regenerated.api_secret);
  expect((await ok(client, 'reset_agent', { agent_id: clone.agent_id, confirm: true })).status).toBe(
    'active',
  );
  const archived = await ok(client, 'archive_agent', { agent_id: clone.agent_id, confirm: true });
  expect(archived.status).toBe('archived');
  expect((await rest('GET', `/agents/${clone.agent_id}`)).body.status).toBe('archived');
};

/** Indicators, the wallet's event log and audit, and a webhook's life, each checked against REST. */
export const restOfTheApiScenario = async (client: Client, rest: Rest) => {
  expect(await ok(client, 'list_indicators')).toEqual(
    (await rest('GET', '/market/indicators/available')).body,
  );
  const indicators = await ok(client, 'get_indicators', { symbol: 'BTCUSDT', indicators: 'sma_20,rsi' });
  const viaRest = (await rest('GET', '/market/indicators/BTCUSDT?indicators=sma_20,rsi')).body;
  expect(Object.keys(indicators.indicators)).toEqual(['sma_20', 'rsi']);
  // The same candles unless an hour closed between the two calls.
  if (indicators.last_candle_time === viaRest.last_candle_time) expect(indicators).toEqual(viaRest);
  expect((await fails(client, 'get_indicators', { symbol: 'BTCUSDT', indicators: 'nope' })).code).toBe(
    'VALIDATION_ERROR',
  );

  const events = await ok(client, 'get_account_events', { limit: 3 });
  expect(events).toEqual((await rest('GET', '/account/events?limit=3')).body);
  expect(events.events.length).toBeGreaterThan(0);
  const audit = await ok(client, 'audit_account');
  expect(audit.chain.intact).toBe(true);
  expect(audit).toEqual({ ...(await rest('GET', '/account/audit')).body, verified_at: audit.verified_at });

  const hook = await ok(client, 'create_webhook', {
    url: 'http://127.0.0.1:9/mcp-hook',
    event_types: ['order.filled'],
    description: 'MCP test hook',
  });
  expect(hook.secret).toEqual(expect.any(String));
  const id = hook.webhook_id;
  expect(await ok(client, 'get_webhook', { webhook_id: id })).toEqual(
    (await rest('GET', `/webhooks/${id}`)).body,
  );
  const changed = await ok(client, 'update_webhook', { webhook_id: id, event_types: ['order.cancelled'] });
  expect(changed.event_types).toEqual(['order.cancelled']);
  expect(await ok(client, 'list_webhooks')).toEqual((await rest('GET', '/webhooks')).body);
  const test = await ok(client, 'test_webhook', { webhook_id: id });
  expect(test).toMatchObject({ webhook_id: id, event_type: 'webhook.test', status: 'pending' });
  // The webhook worker records the delivery after the test event is folded ("shortly after", docs): poll for it.
  const listed = async () =>
    (await ok(client, 'list_webhook_deliveries', { webhook_id: id })).deliveries.map(
      (d: { delivery_id: string }) => d.delivery_id,
    ) as string[];
  await until(async () => (await listed()).includes(test.delivery_id), { what: 'the test delivery listed' });
  expect(await listed()).toContain(test.delivery_id);
  expect((await fails(client, 'delete_webhook', { webhook_id: id })).code).toBe('VALIDATION_ERROR');
  expect(await ok(client, 'delete_webhook', { webhook_id: id, confirm: true })).toEqual({
    webhook_id: id,
    deleted: true,
  });
  expect((await rest('GET', `/webhooks/${id}`)).status).toBe(404);
};
