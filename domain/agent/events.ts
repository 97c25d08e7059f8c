import type { DomainEvent } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';

/**
 * Events of the `agent-{agent_id}` stream (ARCHITECTURE §4; catalogue in `docs/events.md`). The agent's key is
 * recorded as its SHA-256 (lookup) and as AES-256-GCM ciphertext under the server key (so
 * `GET /agents/{id}/api-key` can return it); deleting the agent deletes the stream and with it the key material.
 * Timestamps ISO 8601 UTC; money decimal strings with 8 places.
 */
export type AgentEvent =
  | DomainEvent<'AgentCreated', AgentCreatedData>
  | DomainEvent<'AgentProfileUpdated', AgentProfileUpdatedData>
  | DomainEvent<'AgentRiskProfileUpdated', AgentRiskProfileUpdatedData>
  | DomainEvent<'AgentKeyRegenerated', AgentKeyRegeneratedData>
  | DomainEvent<'AgentReset', AgentResetData>
  | DomainEvent<'AgentArchived', AgentArchivedData>
  | DomainEvent<'AgentSigningSecretIssued', AgentSigningSecretIssuedData>;

/** The editable labels of an agent (spec "Agent"). */
export interface AgentProfileFields {
  /** 1–100 characters. */
  display_name: string;
  llm_model: string | null;
  framework: string | null;
  strategy_tags: string[];
  avatar_url: string | null;
  /** `#RRGGBB` or null. */
  color: string | null;
}

/** The agent's key material as stored: never the plaintext key. */
export interface AgentKeyMaterial {
  /** SHA-256 (hex) of the key (lookup). */
  api_key_hash: string;
  /** First 12 characters and an ellipsis. */
  api_key_preview: string;
  /** AES-256-GCM ciphertext of the key (`v1:iv:ciphertext:tag`, base64url), bound to the agent id. */
  api_key_ciphertext: string;
  /**
   * AES-256-GCM ciphertext of the key's HMAC signing secret (`sk_live_…`, bound to the agent): the secret of signed
   * requests (the Binance door). Absent on keys made before signing secrets existed.
   */
  signing_secret_ciphertext?: string;
}

/** An agent was created (`POST /agents`) or cloned (`POST /agents/{id}/clone`). */
export interface AgentCreatedData extends AgentProfileFields, AgentKeyMaterial {
  agent_id: string;
  account_id: string;
  /** USDT, 8 decimal places. */
  starting_balance: string;
  risk_profile: RiskProfile;
  /** The agent's first trading session. */
  session_id: string;
  /** Source agent when cloned, else null. */
  cloned_from: string | null;
  created_at: string;
}

/** Some labels changed (`PUT /agents/{id}`): only the supplied fields are in `changes`. */
export interface AgentProfileUpdatedData {
  agent_id: string;
  changes: Partial<AgentProfileFields>;
  updated_at: string;
}

/** The risk profile was replaced (`PUT /agents/{id}/risk-profile` or `PUT /account/risk-profile` as the agent). */
export interface AgentRiskProfileUpdatedData {
  agent_id: string;
  risk_profile: RiskProfile;
  updated_at: string;
}

/** A new key replaced the old one (`POST /agents/{id}/regenerate-key`); the old key stops working at once. */
export interface AgentKeyRegeneratedData extends AgentKeyMaterial {
  agent_id: string;
  /** SHA-256 of the key it replaced. */
  previous_key_hash: string;
  regenerated_at: string;
}

/**
 * The agent was reset (`POST /agents/{id}/reset`): a new trading session starts at the starting balance and the
 * agent is `active` again. The trading ledger (`wallet-{agent_id}`) closes positions and cancels orders on it.
 */
export interface AgentResetData {
  agent_id: string;
  session_id: string;
  previous_session_id: string;
  starting_balance: string;
  reset_at: string;
}

/** The agent was archived (`POST /agents/{id}/archive`): data kept, key refused for new trading requests. */
export interface AgentArchivedData {
  agent_id: string;
  archived_at: string;
}

/** A new signing secret replaced the key's (`POST /agents/{id}/signing-secret`); the key itself is unchanged. */
export interface AgentSigningSecretIssuedData {
  agent_id: string;
  /** AES-256-GCM ciphertext of the new secret, bound to the agent. */
  signing_secret_ciphertext: string;
  issued_at: string;
}

/** Every agent event type, for projections' `eventTypes`. */
export const AGENT_EVENT_TYPES = [
  'AgentCreated',
  'AgentProfileUpdated',
  'AgentRiskProfileUpdated',
  'AgentKeyRegenerated',
  'AgentReset',
  'AgentArchived',
  'AgentSigningSecretIssued',
] as const satisfies readonly AgentEvent['type'][];

/** Stream of one agent. */
export const agentStreamId = (agentId: string): string => `agent-${agentId}`;
