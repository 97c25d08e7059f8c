import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createAgent, registerAccount, type TestAccount } from '../accounts/support';
import { ok } from '../support/api-calls';
import { connectWs, type WsClient } from '../support/ws-client';
import { type ListeningTradingApp, startListeningTradingApp } from '../trading/ws-app';

/**
 * The `battle` WebSocket channel through a listening server (real stack, PGlite or PostgreSQL with DATABASE_URL):
 * status changes, trades of the participants inside the battle and the 5 s equity updates.
 */
let s: ListeningTradingApp;
let owner: TestAccount;
let H: Record<string, string>;
let a1: { agentId: string; apiKey: string };
let a2: { agentId: string; apiKey: string };
const sockets: WsClient[] = [];

beforeAll(async () => {
  s = await startListeningTradingApp();
  owner = await registerAccount(s.t.app, {}, { plain: true });
  H = bearer(owner);
  a1 = await createAgent(s.t.app, owner, { display_name: 'Alpha' });
  a2 = await createAgent(s.t.app, owner, { display_name: 'Beta' });
}, 60_000);

afterAll(async () => {
  for (const c of sockets) c.ws.close();
  await s?.t.close();
});

const connect = async (token: string) => {
  const c = await connectWs(s.base, `?token=${token}`);
  sockets.push(c);
  return c;
};

/** A live battle of Alpha and Beta, started; its id. */
const startedBattle = async (name: string): Promise<string> => {
  const b = await ok(s.t.app, H, 'POST', '/battles', { name }, 201);
  const id = b.battle_id as string;
  for (const a of [a1, a2])
    await ok(s.t.app, H, 'POST', `/battles/${id}/participants`, { agent_id: a.agentId }, 201);
  await ok(s.t.app, H, 'POST', `/battles/${id}/start`);
  return id;
};

/**
 * Resolves once a subscription has loaded battle `id` (the battle channel reads it through the battle commands' `state`):
 * from then on the subscription sees every later event of the battle. A draft battle sends nothing a test could
 * wait for, and a fixed wait lost to a loaded machine (a DELETE before the load answers BATTLE_NOT_FOUND). Set it
 * up before subscribing.
 */
const loadOf = (id: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const commands = s.t.app.services.battle!.commands;
    const real = commands.state;
    commands.state = async (caller, battleId) => {
      try {
        const loaded = await real(caller, battleId);
        if (battleId === id) resolve();
        return loaded;
      } catch (error) {
        if (battleId === id) reject(error as Error);
        throw error;
      } finally {
        if (battleId === id) commands.state = real;
      }
    };
  });

describe('the battle channel', () => {
  it('pushes battle:status on each change, battle:trade on each fill, battle:update on each snapshot', async () => {
    const app = s.t.app;
    const b = await ok(app, H, 'POST', '/battles', { name: 'Watched' }, 201);
    const id = b.battle_id as string;
    for (const a of [a1, a2])
      await ok(app, H, 'POST', `/battles/${id}/participants`, { agent_id: a.agentId }, 201);
    const c = await connect(owner.token);
    const loaded = loadOf(id);
    c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
    await c.next((m) => m.type === 'subscribed' && m.data.battle_id === id);
    await loaded;

    await ok(app, H, 'POST', `/battles/${id}/start`);
    const started = await c.next((m) => m.type === 'battle:status');
    expect(started).toMatchObject({
      channel: 'battle',
      data: { battle_id: id, status: 'active', previous_status: 'draft', event: 'started' },
    });

    expect((await s.buy(a1.apiKey, '0.01')).statusCode).toBe(201);
    const trade = await c.next((m) => m.type === 'battle:trade');
    expect(trade.data).toMatchObject({
      battle_id: id,
      agent_id: a1.agentId,
      symbol: 'BTCUSDT',
      side: 'buy',
      quantity: '0.01000000',
    });
    expect(Number(trade.data.price)).toBeGreaterThanOrEqual(40_000);
    expect(trade.data.timestamp).toEqual(expect.any(String));

    await app.services.battle!.snapshotter.tick();
    const update = await c.next((m) => m.type === 'battle:update');
    expect(update.data.battle_id).toBe(id);
    expect(update.data.participants.map((p: { agent_id: string }) => p.agent_id).sort()).toEqual(
      [a1.agentId, a2.agentId].sort(),
    );
    const beta = update.data.participants.find((p: { agent_id: string }) => p.agent_id === a2.agentId);
    expect(beta).toEqual({ agent_id: a2.agentId, equity: '10000.00000000', roi_pct: '0.00000000' });

    await ok(app, H, 'POST', `/battles/${id}/pause/${a2.agentId}`);
    expect((await c.next((m) => m.type === 'battle:status')).data).toMatchObject({
      status: 'paused',
      event: 'agent_paused',
      agent_id: a2.agentId,
    });
    await ok(app, H, 'POST', `/battles/${id}/stop`);
    const done = await c.next((m) => m.type === 'battle:status');
    expect(done.data).toMatchObject({ status: 'completed', previous_status: 'paused', reason: 'stopped' });
    expect(done.data.final_rankings).toHaveLength(2);
    // Nothing more can come: the subscription ends and frees its slot.
    const endedMsg = await c.next((m) => m.data?.battle_id === id);
    expect([endedMsg.channel, endedMsg.type, endedMsg.data]).toEqual([
      'battle',
      'unsubscribed',
      { battle_id: id, reason: 'battle_completed' },
    ]);
    // A fill after the battle is not the battle's.
    expect((await s.buy(a1.apiKey, '0.01')).statusCode).toBe(201);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.unread('battle').filter((m) => m.type === 'battle:trade')).toEqual([]);
  });

  it('ends a cancelled battle’s subscription, and answers a subscribe to a finished battle with its final status', async () => {
    const app = s.t.app;
    const id = await startedBattle('Cancelled while watched');
    const c = await connect(owner.token);
    const about = (m: { data: { battle_id?: string } }) => m.data?.battle_id === id;
    const loaded = loadOf(id);
    c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
    await c.next((m) => m.type === 'subscribed' && about(m));
    await loaded;
    await ok(app, H, 'DELETE', `/battles/${id}`);
    const cancelled = await c.next(about);
    expect([cancelled.type, cancelled.data.status, cancelled.data.previous_status]).toEqual([
      'battle:status',
      'cancelled',
      'active',
    ]);
    const ended = {
      channel: 'battle',
      type: 'unsubscribed',
      data: { battle_id: id, reason: 'battle_cancelled' },
    };
    expect(await c.next(about)).toEqual(ended);

    // Subscribing now (the slot was freed, so this is a new subscription, twice over): the final status as it
    // was sent, then the end at once; a held slot would have answered `subscribed` alone.
    for (let i = 0; i < 2; i++) {
      c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
      expect((await c.next(about)).type).toBe('subscribed');
      expect(await c.next(about)).toEqual(cancelled);
      expect(await c.next(about)).toEqual(ended);
    }
  });

  it('answers a subscribe to a completed battle with its completion, then unsubscribed', async () => {
    const app = s.t.app;
    const id = await startedBattle('Watched after the end');
    await ok(app, H, 'POST', `/battles/${id}/stop`);
    const c = await connect(owner.token);
    const about = (m: { data: { battle_id?: string } }) => m.data?.battle_id === id;
    c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
    expect((await c.next(about)).type).toBe('subscribed');
    const done = await c.next(about);
    expect(done.type).toBe('battle:status');
    expect(done.data).toMatchObject({ status: 'completed', previous_status: 'active', reason: 'stopped' });
    expect(done.data.final_rankings).toHaveLength(2);
    expect((await c.next(about)).data).toEqual({ battle_id: id, reason: 'battle_completed' });
    await new Promise((r) => setTimeout(r, 200));
    expect(c.unread('battle')).toEqual([]);
  });

  it('answers a subscribe to a finished battle from the state it loads: the stream is not folded again', async () => {
    const app = s.t.app;
    const id = await startedBattle('Watched after the end, read once');
    await ok(app, H, 'POST', `/battles/${id}/stop`);
    const stream = `battle-${id}`;
    const total = (await app.services.eventStore.readStream(stream)).length;
    // Battle events read from the store after the subscription loaded the battle (the load itself may read the
    // whole stream if the battle is not cached): only the final event, by the follower that sends it.
    const commands = app.services.battle!.commands;
    const store = app.services.eventStore;
    const realState = commands.state;
    const realRead = store.readStream;
    let loaded = false;
    let readAfterLoad = 0;
    commands.state = async (caller, battleId) => {
      const b = await realState(caller, battleId);
      if (battleId === id) loaded = true;
      return b;
    };
    store.readStream = async (streamId, options) => {
      const events = await realRead.call(store, streamId, options);
      if (loaded && streamId === stream) readAfterLoad += events.length;
      return events;
    };
    try {
      const c = await connect(owner.token);
      const about = (m: { data: { battle_id?: string } }) => m.data?.battle_id === id;
      c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
      expect((await c.next(about)).type).toBe('subscribed');
      expect((await c.next(about)).data).toMatchObject({ status: 'completed', previous_status: 'active' });
      expect((await c.next(about)).data).toEqual({ battle_id: id, reason: 'battle_completed' });
    } finally {
      commands.state = realState;
      store.readStream = realRead;
    }
    expect(total).toBeGreaterThan(3);
    expect(readAfterLoad).toBe(1);
  });

  it('refuses another account’s battle and anonymous sockets', async () => {
    const b = await ok(s.t.app, H, 'POST', '/battles', { name: 'Private' }, 201);
    const other = await registerAccount(s.t.app, {}, { plain: true });
    const c = await connect(other.token);
    c.send({ action: 'subscribe', channel: 'battle', battle_id: b.battle_id });
    const error = await c.next((m) => m.type === 'error' && m.data.channel === 'battle');
    expect(error.data).toMatchObject({ code: 'PERMISSION_DENIED', battle_id: b.battle_id });
    const anonymous = await connectWs(s.base);
    sockets.push(anonymous);
    anonymous.send({ action: 'subscribe', channel: 'battle', battle_id: b.battle_id });
    const refused = await anonymous.next((m) => m.type === 'error');
    expect(refused.data.code).toEqual(expect.any(String));
    c.send({ action: 'subscribe', channel: 'battle', battle_id: 'nope' });
    expect((await c.next((m) => m.type === 'error' && m.data.code === 'VALIDATION_ERROR')).data.code).toBe(
      'VALIDATION_ERROR',
    );
  });

  it('answers a deleted battle as one that never existed: subscribed, then BATTLE_NOT_FOUND, the slot freed', async () => {
    const draft = await ok(s.t.app, H, 'POST', '/battles', { name: 'Short-lived' }, 201);
    await ok(s.t.app, H, 'DELETE', `/battles/${draft.battle_id}`);
    const c = await connect(owner.token);
    /** The messages about `id` after subscribing to it, in the order they came: [type, code]. */
    const answers = async (id: string) => {
      c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
      const about = (m: { data: { battle_id?: string } }) => m.data?.battle_id === id;
      const first = await c.next(about);
      const second = await c.next(about);
      return [first, second].map((m) => [m.channel, m.type, m.data.code]);
    };
    const expected = [
      ['battle', 'subscribed', undefined],
      ['system', 'error', 'BATTLE_NOT_FOUND'],
    ];
    const never = '6f1c2a9e-0000-4000-8000-000000000000';
    expect(await answers(never)).toEqual(expected);
    expect(await answers(draft.battle_id)).toEqual(expected);
    // The failed subscription freed its slot: the same subscribe again is a new attempt, answered the same way.
    expect(await answers(draft.battle_id)).toEqual(expected);
  });

  it('ends a subscription whose battle is deleted: battle:status deleted, then unsubscribed, the slot freed', async () => {
    const draft = await ok(s.t.app, H, 'POST', '/battles', { name: 'Deleted while watched' }, 201);
    const id = draft.battle_id as string;
    const c = await connect(owner.token);
    const about = (m: { data: { battle_id?: string } }) => m.data?.battle_id === id;
    const loaded = loadOf(id);
    c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
    await c.next((m) => m.type === 'subscribed' && about(m));
    await loaded;
    await ok(s.t.app, H, 'DELETE', `/battles/${id}`);
    const deleted = await c.next(about);
    expect([deleted.channel, deleted.type, deleted.data.event]).toEqual([
      'battle',
      'battle:status',
      'deleted',
    ]);
    const ended = await c.next(about);
    expect([ended.channel, ended.type, ended.data]).toEqual([
      'battle',
      'unsubscribed',
      { battle_id: id, reason: 'battle_deleted' },
    ]);
    // The slot is free: the same subscribe is a new attempt (a held slot would answer `subscribed` alone, as a
    // repeated subscribe), answered as for a battle that never existed.
    c.send({ action: 'subscribe', channel: 'battle', battle_id: id });
    expect((await c.next(about)).type).toBe('subscribed');
    expect((await c.next(about)).data.code).toBe('BATTLE_NOT_FOUND');
  });
});
