import { expect } from 'vitest';
import { type Dec, ZERO } from '../../domain/trading/decimal';
import { lockFor } from '../../domain/trading/orders';
import type { WalletState } from '../../domain/wallet/state';

/**
 * Asserts every invariant of a wallet's locks: each open order holds the lock of its remainder (`lockFor`, issue 21:
 * "locks always equal what remains"), the wallet's locked cash (USDT) and each holding's locked base units are their
 * sums, and cash never goes below zero.
 */
export const expectLocksMatch = (state: WalletState) => {
  let cash = ZERO;
  const base = new Map<string, Dec>();
  for (const o of Object.values(state.openOrders)) {
    const level = (o.type === 'limit' ? o.price : o.triggerPrice)!;
    expect(o.remaining.gt(0)).toBe(true);
    expect(o.lockedAmount.toFixed()).toBe(
      lockFor({ side: o.side, type: o.type, level }, o.remaining, o.feeRate).toFixed(),
    );
    if (o.side === 'buy') cash = cash.plus(o.lockedAmount);
    else base.set(o.baseAsset, (base.get(o.baseAsset) ?? ZERO).plus(o.lockedAmount));
  }
  expect(state.lockedCash.toFixed()).toBe(cash.toFixed());
  for (const h of Object.values(state.holdings)) {
    expect(h.locked.toFixed()).toBe((base.get(h.asset) ?? ZERO).toFixed());
  }
  expect(state.cash.gte(0)).toBe(true);
};
