import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Credential primitives (ARCHITECTURE §12): key and secret generation from the CSPRNG, SHA-256 for key lookup,
 * scrypt for secrets and passwords. Nothing here logs or stores; callers keep plaintexts out of events, read
 * models and logs.
 */

/** Prefix of every API key (spec "Account"). */
export const API_KEY_PREFIX = 'ak_live_';
/** Prefix of every API secret (spec "Account"). */
export const API_SECRET_PREFIX = 'sk_live_';

/** Random bytes behind a key or secret (≥ 32, ARCHITECTURE §12). */
const RANDOM_BYTES = 32;

/** A new API key: `ak_live_` + 32 random bytes in base64url (43 characters). */
export const generateApiKey = (): string => API_KEY_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');

/** A new API secret: `sk_live_` + 32 random bytes in base64url. */
export const generateApiSecret = (): string =>
  API_SECRET_PREFIX + randomBytes(RANDOM_BYTES).toString('base64url');

/** Shape of a well-formed API key (prefix and 43 base64url characters). */
export const API_KEY_PATTERN = /^ak_live_[A-Za-z0-9_-]{43}$/;

/** True when `value` looks like an API key this service issues (before any lookup). */
export const isWellFormedApiKey = (value: string): boolean => API_KEY_PATTERN.test(value);

/**
 * The additional authenticated data binding a signing secret's ciphertext to its owner (an account or agent id),
 * distinct from an agent key's (the bare agent id), so neither ciphertext can stand in for the other.
 */
export const signingSecretContext = (ownerId: string): string => `signing-secret:${ownerId}`;

/** SHA-256 of `value` as lower-case hex: the lookup hash of an API key and of a lower-cased email. */
export const sha256Hex = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** The key's preview (spec "Agent" `api_key_preview`): its first 12 characters, then an ellipsis. */
export const keyPreview = (key: string): string => `${key.slice(0, 12)}...`;

/** Hash of a lower-cased, trimmed email (stream names and lookups never carry the address). */
export const emailHash = (email: string): string => sha256Hex(email.trim().toLowerCase());

// scrypt cost: N = 2^14, r = 8, p = 1 (OWASP's minimum for scrypt), 32-byte output, 16-byte salt.
const SCRYPT = { N: 16_384, r: 8, p: 1, keylen: 32, maxmem: 64 * 1024 * 1024 } as const;

const scryptAsync = (
  secret: string,
  salt: Buffer,
  params: { N: number; r: number; p: number },
  keylen: number,
) =>
  new Promise<Buffer>((resolve, reject) => {
    scrypt(secret.normalize('NFC'), salt, keylen, { ...params, maxmem: SCRYPT.maxmem }, (error, derived) =>
      error ? reject(error) : resolve(derived),
    );
  });

/**
 * Slow hash of a secret or password with a fresh 16-byte salt:
 * `scrypt$<N>$<r>$<p>$<salt base64url>$<hash base64url>` (parameters stored, so they can be raised later).
 */
export const hashSecret = async (secret: string): Promise<string> => {
  const salt = randomBytes(16);
  const hash = await scryptAsync(secret, salt, SCRYPT, SCRYPT.keylen);
  return [
    'scrypt',
    SCRYPT.N,
    SCRYPT.r,
    SCRYPT.p,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
};

/**
 * Checks `secret` against a {@link hashSecret} value in constant time. Resolves `false` for a mismatch or a
 * malformed stored value; never throws for bad input.
 */
export const verifySecret = async (secret: string, stored: string): Promise<boolean> => {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0)) return false;
  const salt = Buffer.from(parts[4]!, 'base64url');
  const expected = Buffer.from(parts[5]!, 'base64url');
  if (expected.length < 16) return false;
  try {
    const actual = await scryptAsync(secret, salt, { N, r, p }, expected.length);
    return timingSafeEqual(actual, expected);
  } catch {
    return false;
  }
};

let decoy: Promise<string> | undefined;

/**
 * A valid scrypt hash of a random value, made once per process: verifying a password against it costs as much
 * as a real check, so an unknown email answers as slowly as a wrong password (no timing oracle).
 */
export const decoyHash = (): Promise<string> => {
  decoy ??= hashSecret(randomBytes(24).toString('base64url'));
  return decoy;
};
