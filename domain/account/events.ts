import type { DomainEvent } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';

/**
 * Events of the `account-{account_id}` stream (ARCHITECTURE §4; catalogue in `docs/events.md`). They carry only
 * hashes of credentials: `api_key_hash` is the SHA-256 (hex) of the API key, `api_secret_hash` and
 * `password_hash` are scrypt hashes with a per-value salt. Timestamps are ISO 8601 UTC; money is a decimal
 * string with 8 places.
 */
export type AccountEvent =
  | DomainEvent<'AccountRegistered', AccountRegisteredData>
  | DomainEvent<'AccountPasswordSet', AccountPasswordSetData>
  | DomainEvent<'AccountRiskProfileUpdated', AccountRiskProfileUpdatedData>
  | DomainEvent<'AccountSuspended', AccountSuspendedData>
  | DomainEvent<'AccountReactivated', AccountReactivatedData>
  | DomainEvent<'AccountArchived', AccountArchivedData>
  | DomainEvent<'AccountSigningSecretStored', AccountSigningSecretStoredData>;

/** An account was registered (`POST /auth/register`). */
export interface AccountRegisteredData {
  account_id: string;
  /** 1–64 characters. */
  display_name: string;
  /** Contact email, lower-cased; null when none was given. */
  email: string | null;
  /** SHA-256 (hex) of the account API key `ak_live_…` (lookup). */
  api_key_hash: string;
  /** First 12 characters of the key and an ellipsis. */
  api_key_preview: string;
  /** scrypt hash of the API secret `sk_live_…`. */
  api_secret_hash: string;
  /** scrypt hash of the password for `/auth/user-login`; null when none was set. */
  password_hash: string | null;
  /**
   * The API secret as AES-256-GCM ciphertext under the server's `ENCRYPTION_KEY`, bound to the account
   * (`v1:iv:ciphertext:tag`): the HMAC key of signed requests (the Binance door, docs/operations.md "Signing
   * secrets"). Absent on accounts registered before signing secrets existed (`AccountSigningSecretStored`).
   */
  api_secret_ciphertext?: string;
  /** USDT, 8 decimal places. */
  starting_balance: string;
  /** The first trading session of the account. */
  session_id: string;
  risk_profile: RiskProfile;
  registered_at: string;
}

/** A password was set or changed (`PUT /auth/password`). */
export interface AccountPasswordSetData {
  account_id: string;
  /** scrypt hash of the new password. */
  password_hash: string;
  /** True when the account had no password before. */
  first_time: boolean;
  set_at: string;
}

/** The account-level risk profile was replaced (`PUT /account/risk-profile`). */
export interface AccountRiskProfileUpdatedData {
  account_id: string;
  risk_profile: RiskProfile;
  updated_at: string;
}

/** An operator suspended the account (CLI `accounts suspend`); logins answer `ACCOUNT_SUSPENDED`. */
export interface AccountSuspendedData {
  account_id: string;
  reason: string | null;
  suspended_at: string;
}

/** An operator reactivated a suspended or archived account (CLI `accounts reactivate`). */
export interface AccountReactivatedData {
  account_id: string;
  /** Status before the reactivation. */
  previous_status: 'suspended' | 'archived';
  reactivated_at: string;
}

/** An operator archived the account (CLI `accounts archive`); logins answer `ACCOUNT_SUSPENDED`. */
export interface AccountArchivedData {
  account_id: string;
  reason: string | null;
  archived_at: string;
}

/**
 * The account's API secret was stored encrypted as its signing secret, for an account registered before signing
 * secrets existed: recorded at its first key login (`POST /auth/login`), the moment the verified plaintext is at hand.
 */
export interface AccountSigningSecretStoredData {
  account_id: string;
  /** AES-256-GCM ciphertext of the API secret, as `AccountRegistered.api_secret_ciphertext`. */
  api_secret_ciphertext: string;
  stored_at: string;
}

/** Every account event type, for projections' `eventTypes`. */
export const ACCOUNT_EVENT_TYPES = [
  'AccountRegistered',
  'AccountPasswordSet',
  'AccountRiskProfileUpdated',
  'AccountSuspended',
  'AccountReactivated',
  'AccountArchived',
  'AccountSigningSecretStored',
] as const satisfies readonly AccountEvent['type'][];

/** Stream of one account. */
export const accountStreamId = (accountId: string): string => `account-${accountId}`;
