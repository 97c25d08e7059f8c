import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { OrderedMap } from 'immutable';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { foldEvents } from '../../domain/shared/decider';
import { decodeState, encodeState } from '../../domain/shared/state-codec';
import { dec } from '../../domain/trading/decimal';
import { walletDecider } from '../../domain/wallet/decide';
import { claimOfEvent } from '../../domain/wallet/idempotency';
import { WALLET_STATE_VERSION, walletSnapshotCodec } from '../../domain/wallet/snapshot';
import type { WalletState } from '../../domain/wallet/state';
import { context, market, owner, place } from '../trading/support';
import { walletHistories } from '../trading/wallet-histories';

/**
 * Snapshots of the wallet state (issue 20, "Done when"): the codec is exact (decimals to the last digit and sign,
 * an `OrderedMap` in order, key order of every record), a snapshot of any prefix of a random
 * history plus the tail folds to exactly the state of a full replay and decides exactly like it, and the state
 * version is bumped whenever the code that shapes the state changes.
 */

/** Every way two states could differ that the codec sees, and the same compared value by value (in order). */
const expectSameState = (actual: WalletState, expected: WalletState) => {
  expect(encodeState(actual)).toBe(encodeState(expected));
  expect(Object.keys(actual.openOrders)).toEqual(Object.keys(expected.openOrders));
  expect(Object.keys(actual.holdings)).toEqual(Object.keys(expected.holdings));
  expect(actual).toEqual(expected);
};

describe('state codec', () => {
  it('keeps decimals exactly: every digit, the sign of zero, tiny and huge values', () => {
    const values = [
      '0',
      '-0',
      '1',
      '-1.5',
      '0.000000000000000000000000000001',
      '123456789012345678901234.5678901234',
    ];
    for (const v of values) {
      const back = decodeState<{ d: ReturnType<typeof dec> }>(encodeState({ d: dec(v) })).d;
      expect(back.toFixed()).toBe(dec(v).toFixed());
      expect(back.isNegative()).toBe(dec(v).isNegative());
      expect(back.eq(dec(v))).toBe(true);
      // Arithmetic goes on in the ledger's own configuration (40 places, half-even).
      expect(back.div(3).toFixed()).toBe(dec(v).div(3).toFixed());
    }
    // `-0` arises in the ledger (0 × −1) and `isNegative` tells it apart.
    const negZero = dec(0).times(-1);
    expect(decodeState<{ d: typeof negZero }>(encodeState({ d: negZero })).d.isNegative()).toBe(true);
  });

  it('keeps the order of an OrderedMap, also after its old end was dropped', () => {
    let m = OrderedMap<string, { at: number }>();
    for (let i = 0; i < 50; i++) m = m.set(`k${(i * 7) % 50}`, { at: i });
    for (let i = 0; i < 20; i++) m = m.rest();
    m = m.set('k0', { at: 99 }).delete('k21');
    const back = decodeState<typeof m>(encodeState(m));
    expect(OrderedMap.isOrderedMap(back)).toBe(true);
    expect(back.size).toBe(m.size);
    expect([...back.entries()]).toEqual([...m.entries()]);
    expect(back.first()).toEqual(m.first());
  });

  it('keeps the key order of plain records and refuses values it cannot carry', () => {
    const record = { zeta: 1, alpha: { b: true, a: null }, '10': 'x', mid: ['s', 2] };
    expect(JSON.stringify(decodeState(encodeState(record)))).toBe(JSON.stringify(record));
    for (const bad of [
      { d: new Date() },
      { u: undefined },
      { n: Number.NaN },
      { n: -0 },
      { $x: 1 },
      new Map(),
    ]) {
      expect(() => encodeState(bad)).toThrow(TypeError);
    }
  });
});

describe('wallet snapshots', () => {
  it('snapshot + tail gives the state of a full replay, and decides like it (random histories)', () => {
    fc.assert(
      fc.property(
        walletHistories(80),
        fc.double({ min: 0, max: 1, noNaN: true }),
        ({ events, state }, at) => {
          const cut = Math.floor(at * events.length);
          const prefix = foldEvents(walletDecider, events.slice(0, cut));
          const text = walletSnapshotCodec.encode(prefix);
          // What the store keeps is text: decode it and fold the events after it (as stored: JSON round trip).
          const tail = JSON.parse(JSON.stringify(events.slice(cut)));
          const fromSnapshot = foldEvents(walletDecider, tail, walletSnapshotCodec.decode(text));
          expectSameState(fromSnapshot, state);
          // And the next decisions are the same on both: an order (with a key already seen: its claim as the log
          // lookup finds it) and a cancel-all.
          const m = market({ BTCUSDT: '40000', ETHUSDT: '2000' });
          const claim = events
            .map((e, revision) => claimOfEvent({ ...e, revision }))
            .findLast(
              (c, i) =>
                c !== undefined &&
                (events[i]!.data as { idempotency_key?: string }).idempotency_key === 'key-1',
            );
          const ctx = () => ({
            ...context(m, { now: new Date('2024-01-06T10:00:00.000Z') }),
            newId: () => 'next',
            ...(claim ? { idempotencyClaim: claim } : {}),
          });
          const decideOn = (s: WalletState) =>
            [
              place({ quantity: '0.01', idempotencyKey: 'key-1', requestHash: 'BTCUSDT/buy/market/0.01' }),
              { type: 'CancelAllOrders' as const, data: {} },
              { type: 'OpenWallet' as const, data: { owner: owner() } },
            ].map((command) => {
              try {
                return walletDecider.decide(command, s, ctx());
              } catch (error) {
                return String(error);
              }
            });
          expect(decideOn(fromSnapshot)).toEqual(decideOn(state));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps a snapshot small whatever the number of keyed orders (claims are looked up in the log, issue 20)', () => {
    // 2,000 keyed market orders within one day (every claim live): the state, hence the snapshot, holds none of
    // them, so it has the size of a wallet with one order.
    const sizeAfter = (orders: number): number => {
      const m = market({ BTCUSDT: '40000' });
      let state = walletDecider.initialState();
      let id = 0;
      for (let i = 0; i < orders; i++) {
        const ctx = {
          ...context(m, { now: new Date(Date.parse('2024-01-05T10:00:00.000Z') + i * 600) }),
          newId: () => `id-${++id}`,
        };
        const order = place({
          side: i % 2 ? 'sell' : 'buy',
          quantity: '0.001',
          idempotencyKey: `k-${i}`,
          requestHash: `h-${i}`,
        });
        for (const e of walletDecider.decide(order, state, ctx)) state = walletDecider.evolve(state, e);
      }
      expect(state.closedTrades).toBe(Math.floor(orders / 2));
      return walletSnapshotCodec.encode(state).length;
    };
    const one = sizeAfter(2);
    expect(sizeAfter(2_000)).toBeLessThan(one + 64);
  });

  /**
   * The code that shapes a wallet state, without comments and whitespace: a change to any of it changes what a
   * snapshot means, so it must come with a bump of `WALLET_STATE_VERSION` (old snapshots are then ignored).
   */
  const SHAPING_MODULES = [
    'domain/wallet/state.ts',
    'domain/wallet/idempotency.ts',
    'domain/wallet/events.ts',
    'domain/shared/state-codec.ts',
  ];
  const fingerprint = (): string => {
    const hash = createHash('sha256');
    for (const file of SHAPING_MODULES) {
      const text = fs.readFileSync(path.resolve(import.meta.dirname, '../..', file), 'utf8');
      const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
      hash.update(`${file}\n`);
      for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
        hash.update(scanner.getTokenText()).update(' ');
      }
    }
    return hash.digest('hex').slice(0, 16);
  };

  it('is versioned: the state-shaping code has not changed since the version was last bumped', () => {
    // On a failure: bump WALLET_STATE_VERSION in domain/wallet/snapshot.ts (old snapshots are then ignored and
    // rebuilt lazily) and record the new fingerprint here with it. Never update the fingerprint alone.
    expect({ version: WALLET_STATE_VERSION, fingerprint: fingerprint() }).toEqual({
      version: 13,
      fingerprint: 'ee667e569dbcb163',
    });
  });
});
