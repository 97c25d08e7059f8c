import type { RiskProfile } from '../shared/risk-profile';
import type { AccountEvent } from './events';

/** Status of an account (spec "Account"): `none` before registration. */
export type AccountStatus = 'active' | 'suspended' | 'archived';

/** The state of one `account-{id}` stream, as the decider needs it. */
export interface AccountState {
  status: AccountStatus | 'none';
  accountId: string;
  displayName: string;
  email: string | null;
  apiKeyHash: string;
  apiSecretHash: string;
  passwordHash: string | null;
  /** Ciphertext of the API secret used as the HMAC signing secret; null until one is stored. */
  signingSecretCiphertext: string | null;
  /**
   * How many times the account's password was changed (a first password set does not count); JWTs carry the
   * version they were issued at, and one issued at an older version is refused (issue 16, item 5).
   */
  credentialsVersion: number;
  startingBalance: string;
  sessionId: string;
  sessionStartedAt: string;
  riskProfile: RiskProfile | null;
  createdAt: string;
  updatedAt: string;
}

/** The state before `AccountRegistered`. */
export const initialAccountState = (): AccountState => ({
  status: 'none',
  accountId: '',
  displayName: '',
  email: null,
  apiKeyHash: '',
  apiSecretHash: '',
  passwordHash: null,
  signingSecretCiphertext: null,
  credentialsVersion: 0,
  startingBalance: '0',
  sessionId: '',
  sessionStartedAt: '',
  riskProfile: null,
  createdAt: '',
  updatedAt: '',
});

/** Folds one account event (pure; returns a new object). */
export const evolveAccount = (state: AccountState, event: AccountEvent): AccountState => {
  switch (event.type) {
    case 'AccountRegistered': {
      const d = event.data;
      return {
        status: 'active',
        accountId: d.account_id,
        displayName: d.display_name,
        email: d.email,
        apiKeyHash: d.api_key_hash,
        apiSecretHash: d.api_secret_hash,
        passwordHash: d.password_hash,
        signingSecretCiphertext: d.api_secret_ciphertext ?? null,
        credentialsVersion: 0,
        startingBalance: d.starting_balance,
        sessionId: d.session_id,
        sessionStartedAt: d.registered_at,
        riskProfile: d.risk_profile,
        createdAt: d.registered_at,
        updatedAt: d.registered_at,
      };
    }
    case 'AccountPasswordSet':
      return {
        ...state,
        passwordHash: event.data.password_hash,
        // Setting a first password adds a way in; changing one is what revokes the tokens issued before.
        credentialsVersion: state.credentialsVersion + (event.data.first_time ? 0 : 1),
        updatedAt: event.data.set_at,
      };
    case 'AccountRiskProfileUpdated':
      return { ...state, riskProfile: event.data.risk_profile, updatedAt: event.data.updated_at };
    case 'AccountSuspended':
      return { ...state, status: 'suspended', updatedAt: event.data.suspended_at };
    case 'AccountReactivated':
      return { ...state, status: 'active', updatedAt: event.data.reactivated_at };
    case 'AccountArchived':
      return { ...state, status: 'archived', updatedAt: event.data.archived_at };
    case 'AccountSigningSecretStored':
      return { ...state, signingSecretCiphertext: event.data.api_secret_ciphertext };
  }
};
