import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { ProjectionRunner } from '../../projections/runner';
import { useTestApp } from '../support/test-app';
import { registerAccount } from './support';

/**
 * `ProjectionRunner.lagging` in a process that does not fold (it polls the checkpoints): a checkpoint's `prepare`
 * is its last event's in transaction order, not the highest global position folded. When the position another
 * process announced belongs to an earlier transaction than the checkpoint's event (it took its global position
 * later), the read models include it although it is past the checkpoint's `prepare`; the lag must end then, not
 * at the next append (an idle venue would otherwise poll and confirm every key on the write side forever).
 */
const t = useTestApp();

describe('lagging() of a process that does not fold', () => {
  it('ends once the announced position is folded, compared in full, and stays ended with no further append', async () => {
    await registerAccount(t.app, {}, { plain: true });
    const { eventStore, projections, database } = t.runtime.services;
    const head = await eventStore.headPosition();
    expect(await projections.waitFor(head, 10_000)).toBe(true);
    // The checkpoints' event: a later transaction than the head event's, with a lower global position (what
    // concurrent appends give: the head's transaction took its position after the other's).
    await sql`update projection_generations set checkpoint_commit = ${(head.commit + 1n).toString()},
      checkpoint_prepare = ${(head.prepare - 1n).toString()} where status = 'live'`.execute(database.db);
    const polling = new ProjectionRunner(
      { ...eventStore, heardHead: () => head },
      database.db,
      projections.projections,
    );
    expect(await polling.lagging(['api_keys', 'accounts', 'agents'])).toBe(false);
    await new Promise((r) => setTimeout(r, 50));
    expect(polling.lagging(['api_keys', 'accounts', 'agents'])).toBe(false);
  });
});
