import { describe, expect, it } from 'vitest';
import { SNAPSHOTTER_LOCK_KEY } from '../../src/analytics/install';
import { BATTLE_SNAPSHOT_LOCK_KEY } from '../../src/battle/snapshotter';
import { MATCHING_LOCK_KEY } from '../../src/matching/leader';
import { WEBHOOK_WORKER_LOCK_KEY } from '../../src/webhooks/install';

/**
 * Each leader (one process at a time on PostgreSQL) holds its own advisory lock: two leaders on one key would
 * leave one of them never elected — the battle and equity snapshotters once shared a key, so on PostgreSQL only
 * one of the two ever ran.
 */
describe('leader advisory lock keys', () => {
  it('are distinct', () => {
    const keys = [MATCHING_LOCK_KEY, SNAPSHOTTER_LOCK_KEY, BATTLE_SNAPSHOT_LOCK_KEY, WEBHOOK_WORKER_LOCK_KEY];
    expect(new Set(keys).size).toBe(keys.length);
  });
});
