import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';

describe('configuration', () => {
  it('has defaults that run on a bare machine', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      HOST: '127.0.0.1',
      PORT: 8000,
      EVENT_STORE: 'postgres',
      LOG_LEVEL: 'info',
    });
    expect(config.DATA_DIR).toBe(path.resolve('./data'));
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('lets flags override the environment', () => {
    expect(loadConfig({ PORT: '9000' }, { PORT: '9100' }).PORT).toBe(9100);
    expect(loadConfig({ DATABASE_URL: '' }).DATABASE_URL).toBeUndefined();
  });

  it('waits for the read models on the read in the process that folds them, before the answer in an API process', () => {
    expect(loadConfig({}).READ_YOUR_WRITES).toBe('on-read');
    expect(loadConfig({ PROJECTIONS: 'false' }).READ_YOUR_WRITES).toBe('on-response');
    expect(loadConfig({ PROJECTIONS: 'false', READ_YOUR_WRITES: 'on-read' }).READ_YOUR_WRITES).toBe(
      'on-read',
    );
    expect(loadConfig({ READ_YOUR_WRITES: 'on-response' }).READ_YOUR_WRITES).toBe('on-response');
  });

  it.each([
    [{ READ_YOUR_WRITES: 'sometimes' }, /READ_YOUR_WRITES/],
    [{ PORT: 'eighty' }, /^invalid configuration: PORT \(got "eighty"\)/],
    [{ PORT: '70000' }, /PORT/],
    [{ EVENT_STORE: 'mongo' }, /EVENT_STORE/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL.*postgres/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL/],
    [{ EVENT_STORE: 'esdb' }, /ESDB_URL is required/],
    [{ ESDB_URL: 'http://x' }, /ESDB_URL/],
  ])('refuses %o with a one-line message naming the variable', (env, message) => {
    let error: unknown;
    try {
      loadConfig(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});
