/**
 * Symmetric encryption of agent keys (ARCHITECTURE §12): AES-256-GCM under the server key, a random 96-bit IV
 * per value, and the owner's id as additional authenticated data so a ciphertext cannot be moved to another
 * agent. Format: `v1:<iv>:<ciphertext>:<tag>` (base64url parts); the version tag allows key rotation later.
 */
export interface Keyring {
  /** Encrypts `plaintext` bound to `context` (e.g. the agent id). */
  encrypt(plaintext: string, context: string): string;
  /** Decrypts a value of {@link Keyring.encrypt}; throws `Error` when it was tampered with or the context differs. */
  decrypt(ciphertext: string, context: string): string;
}
