import { randomUUID } from 'node:crypto';
import type { OwnerSnapshot } from '../../domain/wallet/commands';

/**
 * A fresh active account's owner snapshot (a new random owner and session id; the account is its own owner) with
 * the `realistic` fill model, as `OpenWallet`/`PlaceOrder` carry it. `startingBalance` is a decimal string in the
 * quote asset (USDT), e.g. `'1000000.00000000'`. For tests and benches that decide a wallet's events in-process.
 */
export const newAccountOwner = (startingBalance: string): OwnerSnapshot => {
  const ownerId = randomUUID();
  return {
    ownerId,
    ownerType: 'account',
    accountId: ownerId,
    status: 'active',
    accountStatus: 'active',
    sessionId: randomUUID(),
    startingBalance,
    fillModel: 'realistic',
  };
};
