import { describe, expect, it } from 'vitest';
import { registerAccount } from '../accounts/support';
import { connectWs, type WsMessage } from '../support/ws-client';
import { useListeningTradingApp } from '../trading/ws-app';

/**
 * Regressions of the second interface audit of `/market/*` and `/ws/v1`, on the real stack listening on a port:
 * - `channel: "ticker:btcusdt:x"` subscribed to BTCUSDT (the channel was split at two colons, dropping the
 *   rest): the target is everything after the first colon, so it is the unknown symbol `BTCUSDT:X`;
 * - a second `orders` subscribe with `since` was acknowledged with that `since` although, the subscription
 *   already existing, nothing was replayed: the acknowledgement of a repeated subscribe is the one in effect;
 * - a `battle` subscription refused after its acknowledgement (unknown battle, another account's) kept its slot
 *   (one of the socket's 10) for good, and a retry was a silent no-op: the failure now ends the subscription;
 * - a message over 64 KiB closed the socket (1009) without an answer, where every other bad message gets an
 *   error and the socket stays open;
 * - (fourth audit) the error of a battle subscription refused after its acknowledgement lacked `action`, which
 *   every other error of the socket carries with `channel` (docs/market-data.md).
 */
const app = useListeningTradingApp();
const { t, buy } = app;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isError = (m: WsMessage) => m.channel === 'system' && m.type === 'error';

describe('ticker channel targets', () => {
  it('takes everything after the first colon as the symbol', async () => {
    const socket = await connectWs(app.base);
    socket.send({ action: 'subscribe', channel: 'ticker:btcusdt:x' });
    const answer = await socket.next((m) => isError(m) || m.type === 'subscribed');
    expect(answer).toMatchObject({
      channel: 'system',
      type: 'error',
      data: {
        code: 'INVALID_SYMBOL',
        action: 'subscribe',
        channel: 'ticker',
        details: { symbol: 'BTCUSDT:X' },
      },
    });
    // The socket stays open and still answers, on the channel name the subscription was made with (the original
    // SDK's form, issue 17 item 8; docs/compatibility.md).
    socket.send({ action: 'subscribe', channel: 'ticker:btcusdt' });
    expect(await socket.next((m) => m.type === 'subscribed')).toEqual({
      channel: 'ticker:btcusdt',
      type: 'subscribed',
      data: { symbol: 'BTCUSDT' },
    });
    socket.ws.close();
  });
});

describe('an oversized message', () => {
  it('is answered with VALIDATION_ERROR (limit_bytes 65536) and the socket stays open', async () => {
    // Before, the ws library's maxPayload of 64 KiB closed the socket (1009) without an answer.
    const socket = await connectWs(app.base);
    socket.ws.send(JSON.stringify({ action: 'subscribe', channel: 'ticker', symbol: 'x'.repeat(70_000) }));
    expect(await socket.next(isError)).toMatchObject({
      channel: 'system',
      type: 'error',
      data: { code: 'VALIDATION_ERROR', details: { limit_bytes: 65_536 } },
    });
    socket.send({ action: 'subscribe', channel: 'ticker:ethusdt' });
    expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({ data: { symbol: 'ETHUSDT' } });
    socket.ws.close();
  });
});

describe('a repeated subscribe', () => {
  it('is acknowledged with the subscription in effect, not with a since that is not replayed', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    expect((await buy(account.apiKey, '0.01')).statusCode).toBe(201);
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    socket.send({ action: 'subscribe', channel: 'orders' });
    const first = await socket.next((m) => m.channel === 'orders' && m.type === 'subscribed');
    expect(first.data.since).toBeUndefined();

    socket.send({ action: 'subscribe', channel: 'orders', since: -1 });
    const second = await socket.next((m) => m.channel === 'orders' && m.type === 'subscribed');
    await sleep(1_500);
    const replayed = socket.unread('orders');
    // Either the history the acknowledgement promises arrives, or the acknowledgement promises none.
    if (replayed.length === 0) expect(second).toEqual(first);
    else expect(second.data.since).toBe(-1);
    socket.ws.close();
  });
});

describe('a battle subscription that fails after its acknowledgement', () => {
  it('frees its slot: a retry answers the error again and unsubscribing it is "not subscribed"', async () => {
    const account = await registerAccount(t.app, {}, { plain: true });
    const socket = await connectWs(app.base, `?api_key=${account.apiKey}`);
    const battleId = '00000000-0000-4000-8000-000000000000';
    const subscribe = { action: 'subscribe', channel: 'battle', battle_id: battleId };
    socket.send(subscribe);
    expect(await socket.next((m) => m.type === 'subscribed')).toMatchObject({
      data: { battle_id: battleId },
    });
    // The error names the request it answers, as every other error of the socket does (action and channel).
    expect(await socket.next(isError)).toMatchObject({
      data: { code: 'BATTLE_NOT_FOUND', action: 'subscribe', channel: 'battle', battle_id: battleId },
    });

    socket.send(subscribe);
    await socket.next((m) => m.type === 'subscribed');
    expect(await socket.next(isError, 3_000)).toMatchObject({ data: { code: 'BATTLE_NOT_FOUND' } });

    socket.send({ action: 'unsubscribe', channel: 'battle', battle_id: battleId });
    expect(await socket.next((m) => isError(m) || m.type === 'unsubscribed')).toMatchObject({
      channel: 'system',
      type: 'error',
      data: { code: 'VALIDATION_ERROR', action: 'unsubscribe', channel: 'battle' },
    });
    socket.ws.close();
  });
});

describe('a message whose action or channel is not a string', () => {
  it('is told the field must be a string, not that it is missing (sweep of the contract, helper sweepb)', async () => {
    // Before, `{"action":5}` and `{"action":"subscribe","channel":5}` were answered 'missing "action"' and
    // 'missing "channel"', though the client had sent the field; an absent field still reads "missing".
    const socket = await connectWs(app.base);
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ action: 5, channel: 'ticker', symbol: 'BTCUSDT' }, 'action', /^"action" must be a string/],
      [{ action: ['subscribe'], channel: 'ticker' }, 'action', /^"action" must be a string/],
      [{ channel: 'ticker' }, 'action', /^missing "action"$/],
      [{ action: 'subscribe', channel: 5 }, 'channel', /^"channel" must be a string/],
      [{ action: 'subscribe', channel: { name: 'ticker' } }, 'channel', /^"channel" must be a string/],
      [{ action: 'subscribe' }, 'channel', /^missing "channel"$/],
      [{ action: 'subscribe', channel: '' }, 'channel', /^missing "channel"$/],
    ];
    for (const [message, field, text] of cases) {
      socket.send(message);
      const answer = await socket.next(isError);
      expect(answer.data, JSON.stringify(message)).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { issues: [{ field, location: 'message' }] },
      });
      expect(answer.data.message, JSON.stringify(message)).toMatch(text);
    }
    socket.ws.close();
  });
});
