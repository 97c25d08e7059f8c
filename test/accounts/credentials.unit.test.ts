import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSigner } from 'fast-jwt';
import { describe, expect, it } from 'vitest';
import {
  generateApiKey,
  generateApiSecret,
  hashSecret,
  isWellFormedApiKey,
  keyPreview,
  sha256Hex,
  verifySecret,
} from '../../commands/credentials';
import { DomainError } from '../../domain/shared/errors';
import { createKeyring } from '../../src/auth/keyring';
import { loadServerKeys, SECRETS_FILE } from '../../src/auth/server-keys';
import { createTokenService, TOKEN_TTL_SECONDS } from '../../src/auth/tokens';
import { ConfigError, loadConfig } from '../../src/config';

const ACCOUNT = '0b8a7f5e-2c1d-4e3f-9a8b-7c6d5e4f3a2b';

describe('keys and secrets', () => {
  it('generates ak_live_/sk_live_ values with 32 random bytes, all different', () => {
    const keys = new Set(Array.from({ length: 50 }, generateApiKey));
    expect(keys.size).toBe(50);
    for (const k of keys) {
      expect(k).toMatch(/^ak_live_[A-Za-z0-9_-]{43}$/);
      expect(isWellFormedApiKey(k)).toBe(true);
    }
    expect(generateApiSecret()).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    expect(isWellFormedApiKey('ak_live_short')).toBe(false);
  });

  it('previews the first 12 characters and hashes with SHA-256', () => {
    expect(keyPreview('ak_live_ABCDEFGHIJ')).toBe('ak_live_ABCD...');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('scrypt-hashes with a per-value salt and verifies in constant time', async () => {
    const [a, b] = await Promise.all([hashSecret('s3cret-value'), hashSecret('s3cret-value')]);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(a).not.toContain('s3cret-value');
    expect(await verifySecret('s3cret-value', a)).toBe(true);
    expect(await verifySecret('s3cret-valuf', a)).toBe(false);
    expect(await verifySecret('x', 'garbage')).toBe(false);
    expect(await verifySecret('x', 'scrypt$0$8$1$AAAA$BBBB')).toBe(false);
  });
});

describe('keyring (AES-256-GCM)', () => {
  const keyring = createKeyring(Buffer.alloc(32, 7));
  it('round-trips, uses a fresh IV each time and binds the ciphertext to its context', () => {
    const a = keyring.encrypt('ak_live_secret', 'agent-1');
    const b = keyring.encrypt('ak_live_secret', 'agent-1');
    expect(a).not.toBe(b);
    expect(a).not.toContain('ak_live_secret');
    expect(keyring.decrypt(a, 'agent-1')).toBe('ak_live_secret');
    expect(() => keyring.decrypt(a, 'agent-2')).toThrow();
    const parts = a.split(':');
    parts[2] = Buffer.from('tampered').toString('base64url');
    expect(() => keyring.decrypt(parts.join(':'), 'agent-1')).toThrow();
    expect(() => createKeyring(Buffer.alloc(31)).encrypt('x', 'y')).toThrow();
    expect(() => createKeyring(Buffer.alloc(32, 8)).decrypt(a, 'agent-1')).toThrow();
  });
});

describe('server keys', () => {
  const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-keys-'));

  it('generates DATA_DIR/secrets.json once (mode 0600) and reads it back unchanged', () => {
    const dir = tmp();
    const first = loadServerKeys({ DATA_DIR: dir });
    expect(first.source).toEqual({ jwt: 'generated', encryption: 'generated' });
    expect(first.encryptionKey).toHaveLength(32);
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32);
    const file = path.join(dir, SECRETS_FILE);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const second = loadServerKeys({ DATA_DIR: dir });
    expect(second.source).toEqual({ jwt: 'file', encryption: 'file' });
    expect(second.jwtSecret.equals(first.jwtSecret)).toBe(true);
    expect(second.encryptionKey.equals(first.encryptionKey)).toBe(true);
  });

  it('takes JWT_SECRET and ENCRYPTION_KEY (hex or base64) from the configuration', () => {
    const hex = 'ab'.repeat(32);
    const keys = loadServerKeys({ DATA_DIR: tmp(), JWT_SECRET: 'j'.repeat(40), ENCRYPTION_KEY: hex });
    expect(keys.source).toEqual({ jwt: 'config', encryption: 'config' });
    expect(keys.encryptionKey.toString('hex')).toBe(hex);
    const b64 = Buffer.alloc(32, 1).toString('base64');
    expect(
      loadServerKeys({ DATA_DIR: tmp(), JWT_SECRET: 'j'.repeat(40), ENCRYPTION_KEY: b64 }).encryptionKey,
    ).toEqual(Buffer.alloc(32, 1));
  });

  it('refuses a malformed secrets file rather than replacing it', () => {
    const dir = tmp();
    fs.writeFileSync(path.join(dir, SECRETS_FILE), '{"jwt_secret":"x"}');
    expect(() => loadServerKeys({ DATA_DIR: dir })).toThrow(/malformed/);
  });

  it('validates the settings without echoing their values', () => {
    let error: unknown;
    try {
      loadConfig({ JWT_SECRET: 'too-short-secret' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('JWT_SECRET');
    expect((error as Error).message).not.toContain('too-short-secret');
    expect(() => loadConfig({ ENCRYPTION_KEY: 'abc' })).toThrow(/ENCRYPTION_KEY/);
  });
});

describe('tokens (HS256, 1 hour)', () => {
  const secret = Buffer.alloc(48, 3);
  const tokens = createTokenService(secret);
  const reason = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      expect(e).toBeInstanceOf(DomainError);
      expect((e as DomainError).code).toBe('INVALID_TOKEN');
      return (e as DomainError).details?.['reason'];
    }
    throw new Error('expected INVALID_TOKEN');
  };

  it('issues sub/iat/exp/jti/cv claims, expiring one hour after issue', () => {
    const now = new Date();
    const issued = tokens.issue(ACCOUNT, now);
    expect(issued.tokenType).toBe('Bearer');
    const claims = tokens.verify(issued.token);
    expect(claims.accountId).toBe(ACCOUNT);
    expect(claims.expiresAt - claims.issuedAt).toBe(TOKEN_TTL_SECONDS);
    expect(new Date(issued.expiresAt).getTime()).toBe(claims.expiresAt * 1000);
    const payload = JSON.parse(Buffer.from(issued.token.split('.')[1]!, 'base64url').toString());
    expect(Object.keys(payload).sort()).toEqual(['cv', 'exp', 'iat', 'jti', 'sub']);
    // The credentials version the token was issued at (a later password change refuses it).
    expect(claims.credentialsVersion).toBe(0);
    expect(tokens.verify(tokens.issue(ACCOUNT, now, 3).token).credentialsVersion).toBe(3);
    expect(JSON.parse(Buffer.from(issued.token.split('.')[0]!, 'base64url').toString()).alg).toBe('HS256');
    expect(tokens.issue(ACCOUNT).token).not.toBe(tokens.issue(ACCOUNT).token);
  });

  it('refuses expired, malformed, wrongly signed and unsigned tokens', () => {
    const expired = tokens.issue(ACCOUNT, new Date(Date.now() - 2 * 3600_000)).token;
    expect(reason(() => tokens.verify(expired))).toBe('expired');
    expect(reason(() => tokens.verify('not-a-jwt'))).toBe('malformed');
    expect(reason(() => tokens.verify('a.b.c'))).toBe('malformed');
    const foreign = createTokenService(Buffer.alloc(48, 4)).issue(ACCOUNT).token;
    expect(reason(() => tokens.verify(foreign))).toBe('bad_signature');
    const now = Math.floor(Date.now() / 1000);
    const none = createSigner({ algorithm: 'none' })({ sub: ACCOUNT, iat: now, exp: now + 60, jti: 'x' });
    expect(['bad_signature', 'malformed']).toContain(reason(() => tokens.verify(none)));
    const noJti = createSigner({ key: secret, algorithm: 'HS256' })({ sub: ACCOUNT, exp: now + 60 });
    expect(reason(() => tokens.verify(noJti))).toBe('malformed');
    const badSub = createSigner({ key: secret, algorithm: 'HS256' })({
      sub: 'nobody',
      exp: now + 60,
      jti: 'j',
    });
    expect(reason(() => tokens.verify(badSub))).toBe('malformed');
  });
});
