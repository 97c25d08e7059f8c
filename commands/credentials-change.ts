import type { LogPosition } from '../ports/event-store';

/**
 * A change that affects how credentials resolve (ARCHITECTURE §12): a key replaced or destroyed, an agent
 * archived or deleted, an account's status changed. The auth layer drops its cached lookups for these owners at
 * once and refuses revoked key hashes immediately, before the read models have caught up.
 */
export interface CredentialsChange {
  accountId?: string;
  agentId?: string;
  /** SHA-256 hashes of keys that must stop working now. */
  revokedKeyHashes?: string[];
  /** Log position of the change (cache bypass lasts until read models reach it). */
  position?: LogPosition;
}

/** Receives {@link CredentialsChange}s (the auth service's `invalidate`). */
export type CredentialsChangeListener = (change: CredentialsChange) => void;
