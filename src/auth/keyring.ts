import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

import type { Keyring } from '../../ports/keyring';

/** A keyring over a 32-byte key; throws `Error` for another key length. */
export const createKeyring = (key: Buffer): Keyring => {
  if (key.length !== 32) throw new Error('the encryption key must be 32 bytes');
  const secret = Buffer.from(key);
  return {
    encrypt(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return ['v1', iv.toString('base64url'), body.toString('base64url'), tag.toString('base64url')].join(
        ':',
      );
    },
    decrypt(ciphertext, context) {
      const parts = ciphertext.split(':');
      if (parts.length !== 4 || parts[0] !== 'v1') throw new Error('unknown ciphertext format');
      const decipher = createDecipheriv('aes-256-gcm', secret, Buffer.from(parts[1]!, 'base64url'));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(parts[3]!, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(parts[2]!, 'base64url')), decipher.final()]).toString(
        'utf8',
      );
    },
  };
};
