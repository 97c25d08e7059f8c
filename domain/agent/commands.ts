import type { RiskProfile } from '../shared/risk-profile';
import type { AgentProfileFields } from './events';

/** New key material, already hashed and encrypted by the command layer. */
export interface AgentKeyInput {
  hash: string;
  preview: string;
  ciphertext: string;
  /** AES-256-GCM ciphertext of the key's HMAC signing secret (docs/operations.md "Signing secrets"). */
  signingSecretCiphertext?: string;
}

/**
 * Commands of the agent aggregate. Every command but `CreateAgent` carries the calling account (`accountId`):
 * the decider refuses another account's agent (`PERMISSION_DENIED`).
 */
export type AgentCommand =
  | { type: 'CreateAgent'; data: CreateAgentData }
  | { type: 'UpdateAgentProfile'; data: { accountId: string; changes: Partial<AgentProfileFields> } }
  | { type: 'UpdateAgentRiskProfile'; data: { accountId: string; riskProfile: Partial<RiskProfile> } }
  | { type: 'RegenerateAgentKey'; data: { accountId: string; key: AgentKeyInput } }
  | { type: 'ResetAgent'; data: { accountId: string } }
  | { type: 'ArchiveAgent'; data: { accountId: string } }
  | { type: 'IssueAgentSigningSecret'; data: { accountId: string; ciphertext: string } };

/** What creating (or cloning) an agent records. */
export interface CreateAgentData {
  agentId: string;
  accountId: string;
  profile: Partial<AgentProfileFields> & { display_name: string };
  /** Decimal string or number; normalised to 8 places. */
  startingBalance: string | number | undefined;
  /** Missing fields take the defaults. */
  riskProfile: Partial<RiskProfile> | undefined;
  key: AgentKeyInput;
  clonedFrom: string | null;
}
