import type { Kysely } from 'kysely';
import type { RiskProfile } from '../domain/shared/risk-profile';
import type { ReadModels } from '../projections/read-models';
import { getAccount } from './accounts';
import { getAgent } from './agents';

/**
 * What the trading capability needs about the owner of a wallet (spec "Authentication" rule 4: an agent key
 * scopes to that agent and enforces its risk profile; the account key gives the account level): its status,
 * starting balance, current session and risk profile. `status` is the owner's own status; `accountStatus` the
 * owning account's (an agent of a suspended account must not trade either).
 */
export interface TradingProfile {
  ownerType: 'account' | 'agent';
  /** The wallet owner: the account id or the agent id (`wallet-{ownerId}`). */
  ownerId: string;
  accountId: string;
  agentId: string | null;
  status: 'active' | 'suspended' | 'archived';
  accountStatus: 'active' | 'suspended' | 'archived';
  /** USDT, 8 decimal places. */
  startingBalance: string;
  sessionId: string;
  sessionStartedAt: string;
  riskProfile: RiskProfile;
}

/**
 * The trading profile of an account (no `agentId`) or of one of its agents. `undefined` when the account or
 * the agent does not exist, or the agent belongs to another account.
 */
export const getTradingProfile = async (
  db: Kysely<ReadModels>,
  owner: { accountId: string; agentId?: string | null },
): Promise<TradingProfile | undefined> => {
  // Both reads at once: an order waits on one round trip, not two.
  const [account, agent] = await Promise.all([
    getAccount(db, owner.accountId),
    owner.agentId ? getAgent(db, owner.agentId) : undefined,
  ]);
  if (!account) return undefined;
  return tradingProfileOf(account, owner.agentId ? (agent ?? null) : undefined);
};

/** What {@link tradingProfileOf} reads of an account or an agent (a read-model row or a stream's state). */
export interface ProfileSource {
  accountId: string;
  status: TradingProfile['status'];
  /** USDT, 8 decimal places. */
  startingBalance: string;
  sessionId: string;
  sessionStartedAt: string;
  riskProfile: RiskProfile;
}

/**
 * The trading profile of an account (`agent` undefined) or of its agent; `undefined` when the agent is `null`
 * (not found) or belongs to another account. The read models' rows and the streams' states (`installTrading`)
 * make the same profile through here.
 */
export const tradingProfileOf = (
  account: ProfileSource,
  agent?: (ProfileSource & { agentId: string }) | null,
): TradingProfile | undefined => {
  const { status, startingBalance, sessionId, sessionStartedAt, riskProfile } = agent ?? account;
  const common = { accountId: account.accountId, accountStatus: account.status, status, startingBalance };
  if (agent === undefined) {
    return {
      ownerType: 'account',
      ownerId: account.accountId,
      agentId: null,
      ...common,
      sessionId,
      sessionStartedAt,
      riskProfile,
    };
  }
  if (!agent || agent.accountId !== account.accountId) return undefined;
  return {
    ownerType: 'agent',
    ownerId: agent.agentId,
    agentId: agent.agentId,
    ...common,
    sessionId,
    sessionStartedAt,
    riskProfile,
  };
};
