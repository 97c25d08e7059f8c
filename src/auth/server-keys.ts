import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config';

/** The server's own secrets (ARCHITECTURE §12). */
export interface ServerKeys {
  /** HS256 key of JWTs. */
  jwtSecret: Buffer;
  /** 32-byte AES-256-GCM key of agent API keys. */
  encryptionKey: Buffer;
  /** Where each came from: the configuration, or `DATA_DIR/secrets.json` (read or generated now). */
  source: { jwt: 'config' | 'file' | 'generated'; encryption: 'config' | 'file' | 'generated' };
}

/** Name of the generated secrets file inside `DATA_DIR`. */
export const SECRETS_FILE = 'secrets.json';

interface SecretsFile {
  jwt_secret: string;
  encryption_key: string;
  created_at: string;
}

/**
 * Loads the server keys: `JWT_SECRET` and `ENCRYPTION_KEY` from the configuration when set, otherwise from
 * `DATA_DIR/secrets.json`, which is generated once (48 and 32 random bytes, file mode 0600, created exclusively
 * so two processes starting together agree on one file). Warns when `DATABASE_URL` is set and a key comes from
 * the local file: processes sharing that database must share the keys (set both in production).
 * Throws `Error` when the file exists but is unreadable or malformed (never silently replaced: that would
 * invalidate every token and make every agent key unreadable).
 */
export const loadServerKeys = (
  config: Pick<Config, 'DATA_DIR' | 'JWT_SECRET' | 'ENCRYPTION_KEY' | 'DATABASE_URL'>,
  logger?: Logger,
): ServerKeys => {
  const fromConfig = {
    jwt: config.JWT_SECRET ? Buffer.from(config.JWT_SECRET, 'utf8') : undefined,
    encryption: config.ENCRYPTION_KEY ? decodeKey(config.ENCRYPTION_KEY) : undefined,
  };
  let file: { data: SecretsFile; generated: boolean } | undefined;
  if (!fromConfig.jwt || !fromConfig.encryption) {
    file = readOrCreateSecrets(path.join(config.DATA_DIR, SECRETS_FILE));
    if (config.DATABASE_URL) {
      logger?.warn(
        { file: path.join(config.DATA_DIR, SECRETS_FILE) },
        'JWT_SECRET or ENCRYPTION_KEY not configured: using keys from the data directory; every process sharing DATABASE_URL must use the same keys (set both in production)',
      );
    }
  }
  const fileSource = file?.generated ? 'generated' : 'file';
  return {
    jwtSecret: fromConfig.jwt ?? Buffer.from(file!.data.jwt_secret, 'base64url'),
    encryptionKey: fromConfig.encryption ?? Buffer.from(file!.data.encryption_key, 'base64url'),
    source: {
      jwt: fromConfig.jwt ? 'config' : fileSource,
      encryption: fromConfig.encryption ? 'config' : fileSource,
    },
  };
};

/** Decodes a 32-byte key given as 64 hex characters or base64/base64url; throws `Error` otherwise. */
export const decodeKey = (text: string): Buffer => {
  const key = /^[0-9a-fA-F]{64}$/.test(text)
    ? Buffer.from(text, 'hex')
    : Buffer.from(text.replace(/=+$/, ''), text.includes('+') || text.includes('/') ? 'base64' : 'base64url');
  if (key.length !== 32) throw new Error('ENCRYPTION_KEY must be 32 bytes');
  return key;
};

const readOrCreateSecrets = (file: string): { data: SecretsFile; generated: boolean } => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const data: SecretsFile = {
    jwt_secret: randomBytes(48).toString('base64url'),
    encryption_key: randomBytes(32).toString('base64url'),
    created_at: new Date().toISOString(),
  };
  try {
    // Exclusive create: of two processes racing, one writes and the other reads its file.
    const fd = fs.openSync(file, 'wx', 0o600);
    try {
      fs.writeFileSync(fd, `${JSON.stringify(data, null, 2)}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    return { data, generated: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return { data: parseSecrets(file), generated: false };
};

const parseSecrets = (file: string): SecretsFile => {
  let parsed: Partial<SecretsFile>;
  for (let attempt = 0; ; attempt++) {
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<SecretsFile>;
      break;
    } catch (error) {
      // A process that created the file a moment ago may still be writing it.
      if (attempt >= 20) throw new Error(`${file} is not valid JSON: ${(error as Error).message}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
    }
  }
  const jwt = typeof parsed.jwt_secret === 'string' ? Buffer.from(parsed.jwt_secret, 'base64url') : undefined;
  const enc =
    typeof parsed.encryption_key === 'string' ? Buffer.from(parsed.encryption_key, 'base64url') : undefined;
  if (!jwt || jwt.length < 32 || !enc || enc.length !== 32) {
    throw new Error(`${file} is malformed: expected jwt_secret (≥ 32 bytes) and encryption_key (32 bytes)`);
  }
  return parsed as SecretsFile;
};
