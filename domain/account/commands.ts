import type { RiskProfile } from '../shared/risk-profile';

/**
 * Commands of the account aggregate. Credentials arrive already hashed (the command layer hashes; the decider
 * never sees a plaintext secret, key or password).
 */
export type AccountCommand =
  | { type: 'RegisterAccount'; data: RegisterAccountData }
  | { type: 'SetAccountPassword'; data: { passwordHash: string } }
  | { type: 'UpdateAccountRiskProfile'; data: { riskProfile: Partial<RiskProfile> } }
  | { type: 'SuspendAccount'; data: { reason: string | null } }
  | { type: 'ReactivateAccount'; data: Record<string, never> }
  | { type: 'ArchiveAccount'; data: { reason: string | null } }
  /** Stores the (verified) API secret's ciphertext as the signing secret; nothing when one is stored already. */
  | { type: 'StoreAccountSigningSecret'; data: { ciphertext: string } };

/** What registration records. */
export interface RegisterAccountData {
  accountId: string;
  displayName: string;
  /** Already lower-cased; null when none. */
  email: string | null;
  /** SHA-256 (hex) of the API key. */
  apiKeyHash: string;
  apiKeyPreview: string;
  /** scrypt hash of the API secret. */
  apiSecretHash: string;
  /** AES-256-GCM ciphertext of the API secret (the signing secret); absent when not recorded. */
  apiSecretCiphertext?: string;
  /** scrypt hash of the password, null when none. */
  passwordHash: string | null;
  /** Decimal string or number; normalised to 8 places (default `10000.00000000`). */
  startingBalance: string | number | undefined;
}
