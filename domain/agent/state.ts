import type { RiskProfile } from '../shared/risk-profile';
import type { AgentEvent, AgentProfileFields } from './events';

/** Status of an agent (spec "Agent"): `none` before creation. */
export type AgentStatus = 'active' | 'archived';

/** The state of one `agent-{id}` stream. */
export interface AgentState {
  status: AgentStatus | 'none';
  agentId: string;
  accountId: string;
  profile: AgentProfileFields;
  startingBalance: string;
  riskProfile: RiskProfile | null;
  apiKeyHash: string;
  apiKeyPreview: string;
  apiKeyCiphertext: string;
  /** Ciphertext of the key's HMAC signing secret; null when the key has none. */
  signingSecretCiphertext: string | null;
  sessionId: string;
  sessionStartedAt: string;
  clonedFrom: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The state before `AgentCreated`. */
export const initialAgentState = (): AgentState => ({
  status: 'none',
  agentId: '',
  accountId: '',
  profile: {
    display_name: '',
    llm_model: null,
    framework: null,
    strategy_tags: [],
    avatar_url: null,
    color: null,
  },
  startingBalance: '0',
  riskProfile: null,
  apiKeyHash: '',
  apiKeyPreview: '',
  apiKeyCiphertext: '',
  signingSecretCiphertext: null,
  sessionId: '',
  sessionStartedAt: '',
  clonedFrom: null,
  createdAt: '',
  updatedAt: '',
});

/** Folds one agent event (pure). */
export const evolveAgent = (state: AgentState, event: AgentEvent): AgentState => {
  switch (event.type) {
    case 'AgentCreated': {
      const d = event.data;
      return {
        status: 'active',
        agentId: d.agent_id,
        accountId: d.account_id,
        profile: {
          display_name: d.display_name,
          llm_model: d.llm_model,
          framework: d.framework,
          strategy_tags: d.strategy_tags,
          avatar_url: d.avatar_url,
          color: d.color,
        },
        startingBalance: d.starting_balance,
        riskProfile: d.risk_profile,
        apiKeyHash: d.api_key_hash,
        apiKeyPreview: d.api_key_preview,
        apiKeyCiphertext: d.api_key_ciphertext,
        signingSecretCiphertext: d.signing_secret_ciphertext ?? null,
        sessionId: d.session_id,
        sessionStartedAt: d.created_at,
        clonedFrom: d.cloned_from,
        createdAt: d.created_at,
        updatedAt: d.created_at,
      };
    }
    case 'AgentProfileUpdated':
      return {
        ...state,
        profile: { ...state.profile, ...event.data.changes },
        updatedAt: event.data.updated_at,
      };
    case 'AgentRiskProfileUpdated':
      return { ...state, riskProfile: event.data.risk_profile, updatedAt: event.data.updated_at };
    case 'AgentKeyRegenerated':
      return {
        ...state,
        apiKeyHash: event.data.api_key_hash,
        apiKeyPreview: event.data.api_key_preview,
        apiKeyCiphertext: event.data.api_key_ciphertext,
        signingSecretCiphertext: event.data.signing_secret_ciphertext ?? null,
        updatedAt: event.data.regenerated_at,
      };
    case 'AgentReset':
      return {
        ...state,
        status: 'active',
        sessionId: event.data.session_id,
        sessionStartedAt: event.data.reset_at,
        updatedAt: event.data.reset_at,
      };
    case 'AgentArchived':
      return { ...state, status: 'archived', updatedAt: event.data.archived_at };
    case 'AgentSigningSecretIssued':
      return {
        ...state,
        signingSecretCiphertext: event.data.signing_secret_ciphertext,
        updatedAt: event.data.issued_at,
      };
  }
};
