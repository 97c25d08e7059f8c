import type { AgentStatus } from '../../domain/agent/state';
import { DomainError } from '../../domain/shared/errors';

/** How the caller authenticated (spec "Authentication"). */
export type CredentialKind = 'jwt' | 'account_key' | 'agent_key';

/**
 * The verified caller of a request (ARCHITECTURE §12). `agentId` is set for an agent key, or for a JWT / account
 * key scoped with `X-Agent-Id` to an owned agent: then every figure is that agent's (spec rules 4 and 5).
 */
export interface Principal {
  accountId: string;
  agentId?: string;
  via: CredentialKind;
  /** Status of the scoped agent (an archived agent's key still reads, but must not trade). */
  agentStatus?: AgentStatus;
  /** The JWT's `jti` when `via` is `jwt`. */
  tokenId?: string;
}

/** Which credentials a route accepts (spec "Endpoints" Auth column). */
export type AuthMode = 'public' | 'jwt' | 'key-or-jwt';

/**
 * Refuses an archived agent's credential for a new trading request or a change (spec "Authentication" rule 6,
 * "Agent" states): `PERMISSION_DENIED` 403 with `details.reason = 'agent_archived'`.
 */
export const assertAgentActive = (principal: Principal): void => {
  if (principal.agentId && principal.agentStatus === 'archived') {
    throw new DomainError(
      'PERMISSION_DENIED',
      'this agent is archived: its key no longer works for trading or changes (reset the agent to reactivate it)',
      { reason: 'agent_archived', agent_id: principal.agentId },
    );
  }
};

/** The wallet owner a request acts on: the scoped agent, else the account (`wallet-{ownerId}`). */
export const ownerIdOf = (principal: Principal): string => principal.agentId ?? principal.accountId;
