import type { BaseContext, Decider } from '../shared/decider';
import { DomainError } from '../shared/errors';
import { DEFAULT_RISK_PROFILE, resolveRiskProfile, sameRiskProfile } from '../shared/risk-profile';
import { normalizeStartingBalance } from '../shared/starting-balance';
import type { AgentCommand } from './commands';
import type { AgentEvent, AgentProfileFields } from './events';
import { normalizeProfileChanges } from './profile';
import { type AgentState, evolveAgent, initialAgentState } from './state';

/**
 * Decides an agent command (spec "Agent" states and endpoints; ARCHITECTURE §4, §12). Rules:
 * - `CreateAgent` only on an empty stream (`CONFLICT`); labels and risk bounds validated (`VALIDATION_ERROR`),
 *   defaults filled (balance `10000.00000000`, risk profile 25/20/50/50); a session id from the context.
 * - every other command: an unknown agent or another account's agent → `PERMISSION_DENIED` (one error for
 *   both, so an agent id of another account cannot be told from an unknown one; ARCHITECTURE §12).
 * - profile update records only the fields that change (nothing when none does).
 * - risk profile replace: bounds checked; unchanged → nothing.
 * - regenerate key: always a new `AgentKeyRegenerated` naming the replaced key's hash.
 * - reset: from any status, a new session at the starting balance, status `active`.
 * - archive: from `active`; already archived → nothing.
 * - issue a signing secret: always a new `AgentSigningSecretIssued` (the key's previous secret stops verifying).
 */
export const decideAgent = (command: AgentCommand, state: AgentState, context: BaseContext): AgentEvent[] => {
  const now = context.now.toISOString();
  if (command.type === 'CreateAgent') {
    if (state.status !== 'none') throw new DomainError('CONFLICT', 'agent already exists');
    const d = command.data;
    const profile = normalizeProfileChanges(d.profile) as Partial<AgentProfileFields> & {
      display_name: string;
    };
    return [
      {
        type: 'AgentCreated',
        data: {
          agent_id: d.agentId,
          account_id: d.accountId,
          display_name: profile.display_name,
          llm_model: profile.llm_model ?? null,
          framework: profile.framework ?? null,
          strategy_tags: profile.strategy_tags ?? [],
          avatar_url: profile.avatar_url ?? null,
          color: profile.color ?? null,
          starting_balance: normalizeStartingBalance(d.startingBalance),
          risk_profile: resolveRiskProfile(d.riskProfile, DEFAULT_RISK_PROFILE),
          api_key_hash: d.key.hash,
          api_key_preview: d.key.preview,
          api_key_ciphertext: d.key.ciphertext,
          ...(d.key.signingSecretCiphertext
            ? { signing_secret_ciphertext: d.key.signingSecretCiphertext }
            : {}),
          session_id: context.newId(),
          cloned_from: d.clonedFrom,
          created_at: now,
        },
      },
    ];
  }
  requireOwned(state, command.data.accountId);
  const agentId = state.agentId;
  switch (command.type) {
    case 'UpdateAgentProfile': {
      const normalized = normalizeProfileChanges(command.data.changes);
      const changes = changedFields(state.profile, normalized);
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'AgentProfileUpdated', data: { agent_id: agentId, changes, updated_at: now } }];
    }
    case 'UpdateAgentRiskProfile': {
      const current = state.riskProfile ?? DEFAULT_RISK_PROFILE;
      const next = resolveRiskProfile(command.data.riskProfile, current);
      if (sameRiskProfile(current, next)) return [];
      return [
        { type: 'AgentRiskProfileUpdated', data: { agent_id: agentId, risk_profile: next, updated_at: now } },
      ];
    }
    case 'RegenerateAgentKey':
      return [
        {
          type: 'AgentKeyRegenerated',
          data: {
            agent_id: agentId,
            api_key_hash: command.data.key.hash,
            api_key_preview: command.data.key.preview,
            api_key_ciphertext: command.data.key.ciphertext,
            ...(command.data.key.signingSecretCiphertext
              ? { signing_secret_ciphertext: command.data.key.signingSecretCiphertext }
              : {}),
            previous_key_hash: state.apiKeyHash,
            regenerated_at: now,
          },
        },
      ];
    case 'ResetAgent':
      return [
        {
          type: 'AgentReset',
          data: {
            agent_id: agentId,
            session_id: context.newId(),
            previous_session_id: state.sessionId,
            starting_balance: state.startingBalance,
            reset_at: now,
          },
        },
      ];
    case 'ArchiveAgent':
      if (state.status === 'archived') return [];
      return [{ type: 'AgentArchived', data: { agent_id: agentId, archived_at: now } }];
    case 'IssueAgentSigningSecret':
      return [
        {
          type: 'AgentSigningSecretIssued',
          data: { agent_id: agentId, signing_secret_ciphertext: command.data.ciphertext, issued_at: now },
        },
      ];
  }
};

/**
 * The error for an agent id the caller may not use: `PERMISSION_DENIED` 403, the same code, message and details
 * whether the agent is unknown (never created, or deleted) or belongs to another account (ARCHITECTURE §12:
 * foreign resources are `PERMISSION_DENIED`, and an unknown id must not be distinguishable from a foreign one).
 */
export const agentNotOwned = (): DomainError =>
  new DomainError('PERMISSION_DENIED', 'no agent with this id belongs to this account');

/**
 * Ownership rule shared by commands and reads (ARCHITECTURE §12): throws `agentNotOwned()` for an unknown agent
 * and for an agent of another account alike.
 */
export const requireOwned = (state: Pick<AgentState, 'status' | 'accountId'>, accountId: string): void => {
  if (state.status === 'none' || state.accountId !== accountId) throw agentNotOwned();
};

const changedFields = (
  current: AgentProfileFields,
  next: Partial<AgentProfileFields>,
): Partial<AgentProfileFields> => {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(next)) {
    const before = current[field as keyof AgentProfileFields];
    if (JSON.stringify(before) !== JSON.stringify(value)) out[field] = value;
  }
  return out as Partial<AgentProfileFields>;
};

/** The agent decider (`agent-{agent_id}` streams). */
export const agentDecider: Decider<AgentState, AgentCommand, AgentEvent, BaseContext> = {
  initialState: initialAgentState,
  evolve: evolveAgent,
  decide: decideAgent,
};
