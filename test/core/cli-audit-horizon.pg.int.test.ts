import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { expect, it } from 'vitest';
import { createPostgresEventStore } from '../../src/eventstore/postgres';
import { runCli } from '../support/cli-process';
import { postgresServerUrl, postgresTestDatabaseOrSkip } from '../support/databases';
import { agentWalletOpening, limitBuyPlaced } from '../support/wallet-events';

/**
 * `audit replay` beside an older open transaction on the same PostgreSQL server: a stream read sees every committed
 * event, `$all` (which the read models fold) only those below every older open transaction. An audit that waited
 * for the readable head alone compared read models without the wallet's newest event against a replay with it and
 * reported "the read models include revision 2 of the stream, the log ends at 3". It must wait until they fold it.
 * Run alone (vitest.config.ts `RUN_ALONE`): the open transaction holds back every database's `$all` on the server.
 */
it('waits for an event $all cannot read yet rather than report a mismatch', async (ctx) => {
  const database = await postgresTestDatabaseOrSkip(ctx, 'audit beside an open transaction');
  if (!database) return;
  const store = createPostgresEventStore(database);
  const holder = new pg.Client({ connectionString: postgresServerUrl() });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ptv-cli-horizon-'));
  let release: NodeJS.Timeout | undefined;
  try {
    const owner = randomUUID();
    const session = randomUUID();
    const at = new Date().toISOString();
    await store.append(
      `wallet-${owner}`,
      agentWalletOpening({ owner, accountId: randomUUID(), session, at }),
    );
    const env = { DATABASE_URL: database.url!, DATA_DIR: dataDir };
    // The read models fold the first two events (a first audit matches).
    const first = await runCli(['audit', 'replay', '--agent', owner], env);
    expect(first.stdout + first.stderr).toContain('read models: match the folded state');

    // An older transaction with a transaction id, then the wallet's next event, committed behind it.
    await holder.connect();
    await holder.query('begin');
    await holder.query('select pg_current_xact_id()');
    await store.append(`wallet-${owner}`, [
      {
        type: 'OrderPlaced',
        data: limitBuyPlaced({ order_id: randomUUID(), session_id: session, placed_at: at }),
        metadata: { occurred_at: at },
      },
    ]);
    // Released 4 s after the CLI connects: long after an audit that does not wait compared.
    const sessions = async () => {
      // The holder is inside its transaction, where the activity statistics would stay as first read.
      await holder.query('select pg_stat_clear_snapshot()');
      const { rows } = await holder.query<{ n: string }>(
        'select count(*)::text as n from pg_stat_activity where datname = $1',
        [new URL(database.url!).pathname.slice(1)],
      );
      return Number(rows[0]!.n);
    };
    const before = await sessions();
    const running = runCli(['audit', 'replay', '--agent', owner], env);
    let done = false;
    void running.then(() => {
      done = true;
    });
    while (!done && (await sessions()) <= before) await new Promise((r) => setTimeout(r, 50));
    release = setTimeout(() => void holder.query('commit').catch(() => undefined), 4_000);
    const run = await running;
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('3 events');
    expect(run.stdout).toContain('read models: match the folded state');
  } finally {
    clearTimeout(release);
    await holder.query('commit').catch(() => undefined);
    await holder.end().catch(() => undefined);
    await store.close();
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}, 180_000);
