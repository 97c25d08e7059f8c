import { randomUUID } from 'node:crypto';
import type { RiskProfile } from '../../domain/shared/risk-profile';
import type { OwnerSnapshot } from '../../domain/wallet/commands';
import type { TradingProfile } from '../../queries/trading-profile';

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

/**
 * The trading profile of an active account trading for itself (no agent), as `getTradingProfile` answers it, with
 * a session started now (a new id unless `sessionId` is given). `startingBalance` is a decimal string in USDT with
 * 8 decimals, e.g. `'10000.00000000'`. For tests and benches that drive a wallet's command handler directly.
 */
export const accountTradingProfile = (
  ownerId: string,
  startingBalance: string,
  riskProfile: RiskProfile,
  sessionId: string = randomUUID(),
): TradingProfile => ({
  ownerType: 'account',
  ownerId,
  accountId: ownerId,
  agentId: null,
  status: 'active',
  accountStatus: 'active',
  startingBalance,
  sessionId,
  sessionStartedAt: new Date().toISOString(),
  riskProfile,
});
