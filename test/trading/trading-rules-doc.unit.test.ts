import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { foldEvents } from '../../domain/shared/decider';
import { DEFAULT_RISK_PROFILE, type RiskProfile } from '../../domain/shared/risk-profile';
import { dec, fmt } from '../../domain/trading/decimal';
import { feeFor } from '../../domain/trading/fees';
import { lockFor } from '../../domain/trading/orders';
import { participationPct, slippagePct, slippedPrice } from '../../domain/trading/slippage';
import type { WalletCommand } from '../../domain/wallet/commands';
import { walletDecider } from '../../domain/wallet/decide';
import type { WalletEvent } from '../../domain/wallet/events';
import { type WalletState, walletEquity } from '../../domain/wallet/state';
import { fill, market, owner, PAIRS, place } from './support';

/**
 * Recomputes every worked example of `docs/trading-rules.md` (issue "keep the document exact"). Each example is
 * a fenced block tagged `example`, a small script:
 *
 *   balance 10000                      starting balance (USDT)
 *   volume BTCUSDT 400000000           24h quote volume
 *   price BTCUSDT 40000                current price
 *   profile daily_loss_limit_pct 5     a risk-profile field
 *   day 2024-01-06                     business date (UTC)
 *   order buy market 0.05 BTCUSDT [at 39000]
 *   tick BTCUSDT 38900                 new price, offered to the open orders of the symbol (the matching engine)
 *   cancel last | cancel all | reset [balance]
 *   expect OrderFilled.fee = 2.00020000       a field of the last such event of the previous step
 *   expect state.cash = 7997.79980000          cash, locked, realized_pnl, fees_paid, equity, position.BTC
 *   expect fee(2000.2) = 2.00020000            also: participation(notional, volume), slippage(p),
 *                                              price(buy|sell, reference, slippage), lock(side, type, qty, level)
 */
const DOC = path.resolve(import.meta.dirname, '../../docs/trading-rules.md');

const examples = (): { name: string; lines: string[] }[] => {
  const text = fs.readFileSync(DOC, 'utf8');
  const out: { name: string; lines: string[] }[] = [];
  const re = /```example(?: ([^\n]*))?\n([\s\S]*?)```/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push({
      name: m[1]?.trim() || `example ${out.length + 1}`,
      lines: m[2]!
        .split('\n')
        .map((l) => l.replace(/#.*$/, '').trim())
        .filter(Boolean),
    });
  }
  return out;
};

const get = (value: unknown, pathText: string): unknown =>
  pathText.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], value);

const runExample = (lines: string[]) => {
  const m = market({});
  m.volumes.clear();
  let balance = '10000';
  let now = new Date('2024-01-05T10:00:00.000Z');
  const riskProfile: RiskProfile = { ...DEFAULT_RISK_PROFILE };
  let state: WalletState = walletDecider.initialState();
  let last: WalletEvent[] = [];
  let id = 0;
  let lastOrder: string | undefined;
  const ctx = () => ({
    now,
    newId: () => `id-${++id}`,
    prices: (s: string) => {
      const p = m.prices.get(s);
      return p === undefined ? undefined : { price: p, timestamp: now.toISOString(), source: 'files' };
    },
    pairs: (s: string) => PAIRS[s],
    quoteVolume24h: (s: string) => (m.volumes.has(s) ? dec(m.volumes.get(s)!) : undefined),
    riskProfile,
    feeRate: dec('0.001'),
  });
  const decide = (command: WalletCommand) => {
    last = walletDecider.decide(command, state, ctx());
    state = foldEvents(walletDecider, last, state);
    const placed = last.find((e) => e.type === 'OrderPlaced' || e.type === 'OrderRejected');
    if (placed) lastOrder = (placed.data as { order_id: string }).order_id;
  };
  const who = () => owner({ startingBalance: balance });
  const priceOf = (s: string) => (m.prices.has(s) ? dec(m.prices.get(s)!) : undefined);

  for (const line of lines) {
    const words = line.split(/\s+/);
    const [verb] = words;
    if (verb === 'balance') balance = words[1]!;
    else if (verb === 'volume') m.volumes.set(words[1]!, words[2]!);
    else if (verb === 'price') m.prices.set(words[1]!, words[2]!);
    else if (verb === 'profile')
      (riskProfile as unknown as Record<string, number>)[words[1]!] = Number(words[2]);
    else if (verb === 'day') now = new Date(`${words[1]}T${words[2] ?? '10:00:00'}.000Z`);
    else if (verb === 'order') {
      const [, side, type, quantity, symbol, at, level] = words as [
        string,
        'buy' | 'sell',
        'market' | 'limit' | 'stop_loss' | 'take_profit',
        string,
        string,
        string?,
        string?,
      ];
      if (state.opened === false) decide({ type: 'OpenWallet', data: { owner: who() } });
      decide(
        place(
          {
            symbol,
            side,
            type,
            quantity,
            ...(at === 'at' && type === 'limit' ? { price: level } : {}),
            ...(at === 'at' && type !== 'limit' ? { triggerPrice: level } : {}),
          },
          { startingBalance: balance },
        ),
      );
    } else if (verb === 'tick') {
      m.prices.set(words[1]!, words[2]!);
      const produced: WalletEvent[] = [];
      for (const o of Object.values(state.openOrders)) {
        if (o.symbol !== words[1]) continue;
        decide(fill(o.orderId, words[2]!, now.toISOString()));
        produced.push(...last);
      }
      last = produced;
    } else if (verb === 'cancel') {
      decide(
        words[1] === 'all'
          ? { type: 'CancelAllOrders', data: {} }
          : { type: 'CancelOrder', data: { orderId: lastOrder! } },
      );
    } else if (verb === 'reset') {
      decide({
        type: 'ResetWallet',
        data: { owner: who(), ...(words[1] ? { startingBalance: words[1] } : {}) },
      });
    } else if (verb === 'expect') {
      const m2 = /^expect (.+?) = (.+)$/.exec(line);
      if (!m2) throw new Error(`bad expect line: ${line}`);
      const [, lhs, expected] = m2 as unknown as [string, string, string];
      expect(evaluate(lhs!, last, state, priceOf), line).toBe(expected);
    } else throw new Error(`unknown line in example: ${line}`);
  }
};

const evaluate = (
  lhs: string,
  last: WalletEvent[],
  state: WalletState,
  priceOf: (s: string) => ReturnType<typeof dec> | undefined,
): string => {
  const call = /^(\w+)\((.*)\)$/.exec(lhs);
  if (call) {
    const args = call[2]!.split(',').map((a) => a.trim());
    switch (call[1]) {
      case 'fee':
        return fmt(feeFor(dec(args[0]!), dec(args[1] ?? '0.001')));
      case 'participation':
        return fmt(participationPct(dec(args[0]!), dec(args[1]!))!);
      case 'slippage':
        return fmt(slippagePct(args[0] === 'none' ? null : dec(args[0]!)));
      case 'price':
        return fmt(slippedPrice(dec(args[1]!), args[0] as 'buy' | 'sell', dec(args[2]!)));
      case 'lock':
        return fmt(
          lockFor(
            { side: args[0] as 'buy' | 'sell', type: args[1] as 'limit', level: dec(args[3]!) },
            dec(args[2]!),
            dec('0.001'),
          ),
        );
      default:
        throw new Error(`unknown function ${call[1]}`);
    }
  }
  const [head, ...rest] = lhs.split('.');
  if (head === 'state') {
    const field = rest.join('.');
    if (field === 'cash') return fmt(state.cash);
    if (field === 'locked') return fmt(state.lockedCash);
    if (field === 'realized_pnl') return fmt(state.realizedPnl);
    if (field === 'fees_paid') return fmt(state.feesPaid);
    if (field === 'equity') return fmt(walletEquity(state, priceOf).decimalPlaces(8));
    if (field === 'open_orders') return String(Object.keys(state.openOrders).length);
    if (field.startsWith('position.')) return fmt(state.holdings[field.slice(9)]?.quantity ?? dec(0));
    throw new Error(`unknown state field ${field}`);
  }
  if (head === 'events') return last.map((e) => e.type).join(',');
  const event = [...last].reverse().find((e) => e.type === head);
  if (!event) throw new Error(`no ${head} among ${last.map((e) => e.type).join(', ') || 'no events'}`);
  const value = get(event.data, rest.join('.'));
  return typeof value === 'string' ? value : JSON.stringify(value);
};

describe('docs/trading-rules.md worked examples', () => {
  const all = examples();
  it('has worked examples', () => expect(all.length).toBeGreaterThanOrEqual(8));
  for (const example of all) {
    it(example.name, () => runExample(example.lines));
  }
});
