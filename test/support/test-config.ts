/**
 * Configuration every in-process test app starts from, before the file's own `env`.
 *
 * `READ_MODEL_WAIT_MS` (default 2,000 ms in production) bounds how long a read waits for its own writes' fold
 * before answering `SERVICE_UNAVAILABLE` 503 or a `stale` receipt. On PostgreSQL the log is read only below the
 * server-wide transaction horizon, so in CI another file's migrations or open transactions in *its* database, on
 * the same server and two loaded cores, can hold a fold past 2 s (a results read right after a cancel answered 503
 * "being computed" once in CI). Tests that assert what a read returns give it 15 s; tests of the bound itself
 * (`*-lag*.int.test.ts`) set their own value.
 */
export const TEST_CONFIG_DEFAULTS: Readonly<Record<string, string>> = { READ_MODEL_WAIT_MS: '15000' };
