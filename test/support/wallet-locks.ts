import { expect } from 'vitest';
import { type Dec, max, ZERO } from '../../domain/trading/decimal';
import { lockFor } from '../../domain/trading/orders';
import type { OpenOrder, WalletState } from '../../domain/wallet/state';

/** The lock of an open order's remainder (`lockFor`). */
const ownLock = (o: OpenOrder): Dec => {
  const level = (o.type === 'limit' ? o.price : o.triggerPrice)!;
  return lockFor({ side: o.side, type: o.type, level }, o.remaining, o.feeRate);
};

/**
 * Asserts every invariant of a wallet's locks: each open order holds the lock of its remainder (`lockFor`, issue 21:
 * "locks always equal what remains"), the open legs of an OCO hold one lock together, the largest of their own
 * (docs/trading-rules.md, "Order lists: OCO and bracket"), the wallet's locked cash (USDT) and each holding's
 * locked base units are their sums (a list's lock counted once), and cash never goes below zero.
 */
export const expectLocksMatch = (state: WalletState) => {
  let cash = ZERO;
  const base = new Map<string, Dec>();
  const groups = new Map<string, OpenOrder[]>();
  for (const o of Object.values(state.openOrders)) {
    expect(o.remaining.gt(0)).toBe(true);
    const key = o.list && o.list.role !== 'entry' ? o.list.id : o.orderId;
    groups.set(key, [...(groups.get(key) ?? []), o]);
  }
  for (const legs of groups.values()) {
    let lock = ZERO;
    for (const o of legs) lock = max(lock, ownLock(o));
    for (const o of legs) expect(o.lockedAmount.toFixed()).toBe(lock.toFixed());
    const o = legs[0]!;
    if (o.side === 'buy') cash = cash.plus(lock);
    else base.set(o.baseAsset, (base.get(o.baseAsset) ?? ZERO).plus(lock));
  }
  expect(state.lockedCash.toFixed()).toBe(cash.toFixed());
  for (const h of Object.values(state.holdings)) {
    expect(h.locked.toFixed()).toBe((base.get(h.asset) ?? ZERO).toFixed());
  }
  expect(state.cash.gte(0)).toBe(true);
};
