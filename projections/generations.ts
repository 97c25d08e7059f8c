import { type Kysely, sql } from 'kysely';
import { type LogPosition, type RecordedEvent, START } from '../ports/event-store';
import { asText } from './columns';
import { generationSchema, type Projection } from './projection';
import type { ProjectionGenerationsTable, ReadModels } from './read-models';

/**
 * Storage of projection generations (ARCHITECTURE §6): creating a generation's schema and tables, folding a
 * batch with its checkpoint in the same transaction, and promoting a generation to serve reads through views.
 * Plain functions that take `db` (STYLE: kysely) so they compose inside one transaction.
 */

/** A generation as the runner sees it. */
export interface Generation {
  name: string;
  generation: number;
  version: number;
  schema: string;
  status: ProjectionGenerationsTable['status'];
  checkpoint: LogPosition;
  eventsProcessed: number;
}

/** A `projection_generations` row with the positions and counters as text. */
interface GenerationRow {
  name: string;
  generation: number;
  version: number;
  schema_name: string;
  status: ProjectionGenerationsTable['status'];
  checkpoint_commit: string;
  checkpoint_prepare: string;
  events_processed: string | number;
}

const toGeneration = (r: GenerationRow): Generation => ({
  name: r.name,
  generation: r.generation,
  version: r.version,
  schema: r.schema_name,
  status: r.status,
  checkpoint: { commit: BigInt(r.checkpoint_commit), prepare: BigInt(r.checkpoint_prepare) },
  eventsProcessed: Number(r.events_processed),
});

const selectGeneration = (db: Kysely<ReadModels>) =>
  db
    .selectFrom('projection_generations')
    .select([
      'name',
      'generation',
      'version',
      'schema_name',
      'status',
      ...asText('checkpoint_commit', 'checkpoint_prepare', 'events_processed'),
    ]);

/** Sets the status of generation `generation` of projection `name` (promoted `live`, or given up `retired`). */
export const setGenerationStatus = async (
  db: Kysely<ReadModels>,
  name: string,
  generation: number,
  status: ProjectionGenerationsTable['status'],
): Promise<void> => {
  await db
    .updateTable('projection_generations')
    .set({ status, updated_at: new Date() })
    .where('name', '=', name)
    .where('generation', '=', generation)
    .execute();
};

/** Registers the projection's name (idempotent). */
export const ensureRegistered = async (db: Kysely<ReadModels>, name: string): Promise<void> => {
  await db
    .insertInto('projections')
    .values({ name, live_generation: null, updated_at: new Date() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
};

/** The generation serving reads, or `undefined` before the first one. */
export const liveGeneration = async (
  db: Kysely<ReadModels>,
  name: string,
): Promise<Generation | undefined> => {
  const row = await selectGeneration(db)
    .where('name', '=', name)
    .where('status', '=', 'live')
    .orderBy('generation', 'desc')
    .executeTakeFirst();
  return row ? toGeneration(row) : undefined;
};

/** Every generation of every projection, newest first per name. */
export const allGenerations = async (db: Kysely<ReadModels>): Promise<Generation[]> =>
  (await selectGeneration(db).orderBy('name').orderBy('generation', 'desc').execute()).map(toGeneration);

/** Reads one generation, locking its row for the rest of the transaction when `lock` is set. */
export const readGeneration = async (
  db: Kysely<ReadModels>,
  name: string,
  generation: number,
  lock = false,
): Promise<Generation | undefined> => {
  let q = selectGeneration(db).where('name', '=', name).where('generation', '=', generation);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row ? toGeneration(row) : undefined;
};

/** Creates the next generation (status `building`, checkpoint at the start) with empty tables. */
export const createGeneration = async (db: Kysely<ReadModels>, projection: Projection): Promise<Generation> =>
  db.transaction().execute((trx) => createGenerationIn(trx, projection));

/**
 * The live generation of `projection`, created (empty, at the start of the log) and promoted first when there is
 * none. Safe when several processes start together on a fresh database (issue 16, item 3): the check and the
 * creation run in one transaction holding the projection's `projections` row lock, so the first process creates
 * the generation and the others wait, then find it live (READ COMMITTED: each statement after the lock sees what
 * the first committed). Registers the name first.
 */
export const ensureLiveGeneration = async (
  db: Kysely<ReadModels>,
  projection: Projection,
): Promise<Generation> => {
  await ensureRegistered(db, projection.name);
  return db.transaction().execute(async (trx) => {
    await sql`select 1 from projections where name = ${projection.name} for update`.execute(trx);
    const live = await liveGeneration(trx, projection.name);
    if (live) return live;
    const created = await createGenerationIn(trx, projection);
    await promote(trx, projection, created);
    return { ...created, status: 'live' as const };
  });
};

/** {@link createGeneration} inside the caller's transaction. */
const createGenerationIn = async (trx: Kysely<ReadModels>, projection: Projection): Promise<Generation> => {
  await sql`select 1 from projections where name = ${projection.name} for update`.execute(trx);
  const { max } = await trx
    .selectFrom('projection_generations')
    .select(sql<number | null>`max(generation)`.as('max'))
    .where('name', '=', projection.name)
    .executeTakeFirstOrThrow();
  const generation = (max ?? 0) + 1;
  const schema = generationSchema(projection.name, generation);
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(trx);
  await sql`create schema ${sql.id(schema)}`.execute(trx);
  await projection.createTables(trx, schema);
  await trx
    .insertInto('projection_generations')
    .values({
      name: projection.name,
      generation,
      version: projection.version,
      schema_name: schema,
      status: 'building',
      checkpoint_commit: '0',
      checkpoint_prepare: '0',
      events_processed: '0',
      updated_at: new Date(),
    })
    .execute();
  return {
    name: projection.name,
    generation,
    version: projection.version,
    schema,
    status: 'building',
    checkpoint: START,
    eventsProcessed: 0,
  };
};

/** One projection generation taking part in {@link applyBatches}. */
export interface BatchMember {
  projection: Projection;
  gen: Pick<Generation, 'generation' | 'schema'>;
}

/**
 * Folds `events` into generation `gen` and moves its checkpoint to the last event, inside the caller's
 * transaction `trx`. Locks the generation row first; returns `'retired'` (and folds nothing) when the
 * generation was swapped out meanwhile, else the new checkpoint.
 */
export const applyBatch = async (
  trx: Kysely<ReadModels>,
  projection: Projection,
  gen: Pick<Generation, 'generation' | 'schema'>,
  events: readonly RecordedEvent[],
): Promise<LogPosition | 'retired'> => (await applyBatches(trx, [{ projection, gen }], events))[0]!;

/**
 * Folds one page of `$all` into several projections inside the caller's transaction `trx` (ARCHITECTURE §6:
 * rows and checkpoints commit together), so a page costs one transaction for every read model instead of one
 * each. One statement locks all the generation rows, in (name, generation) order so that concurrent runners
 * and a rebuild's swap never deadlock, sets the search path and moves every live member's checkpoint to the
 * last event; then each member folds only its event types after its own committed checkpoint (what an earlier
 * or concurrent run already folded is skipped). Returns, per member in input order, `'retired'` (nothing folded: the
 * generation was swapped out meanwhile) or its new checkpoint. Throws what a projector throws (the caller rolls
 * the whole transaction back).
 */
export const applyBatches = async (
  trx: Kysely<ReadModels>,
  members: readonly BatchMember[],
  events: readonly RecordedEvent[],
): Promise<(LogPosition | 'retired')[]> => {
  if (members.length === 0) return [];
  // Raw SQL in a projector must hit the generations' tables too, not the public views of the live ones. Table
  // names are unique across projections (each is also a public view), so one search path serves them all; it is
  // set by the locking statement itself. A schema that no longer exists (a retired generation dropped
  // meanwhile) is skipped by PostgreSQL when it resolves names.
  const path = [...members.map((m) => m.gen.schema), 'public'].join(', ');
  const last = events[events.length - 1];
  // The page's commit does not wait for its WAL flush (`synchronous_commit = off` for this transaction only):
  // a read model is derived from the durable log, and its checkpoint commits with its rows, so a crash can only
  // lose whole recent pages, which the runner folds again from the surviving checkpoint. Visibility to other
  // sessions (what read-your-writes needs) does not wait for the flush either way.
  // One statement locks the rows and moves the checkpoints (rows and checkpoints commit together, so the order
  // inside the transaction does not matter): `locked` takes the row locks in (name, generation) order and
  // returns the checkpoints as they were; `moved` sets every live member that is behind the page's last event
  // to it, counting the page's events after its old checkpoint, exactly as the fold below skips them.
  const { rows: locked } = await sql<GenerationRow>`
    with locked as (
      select name, generation, version, schema_name, status, checkpoint_commit, checkpoint_prepare,
             events_processed, set_config('search_path', ${path}, true) as search_path,
             set_config('synchronous_commit', 'off', true) as synchronous_commit
      from projection_generations
      where (name, generation) in (
        select * from unnest(${members.map((m) => m.projection.name)}::text[],
                             ${members.map((m) => m.gen.generation)}::int[]))
      order by name, generation
      for update of projection_generations
    ), moved as (
      update projection_generations as g
      set checkpoint_commit = ${last?.position.commit.toString() ?? null}::numeric,
          checkpoint_prepare = ${last?.position.prepare.toString() ?? null}::numeric,
          events_processed = g.events_processed + (
            select count(*) from unnest(${events.map((e) => e.position.commit.toString())}::numeric[],
                                        ${events.map((e) => e.position.prepare.toString())}::numeric[]) as e(c, p)
            where (e.c, e.p) > (l.checkpoint_commit, l.checkpoint_prepare)),
          updated_at = now()
      from locked as l
      where g.name = l.name and g.generation = l.generation and l.status <> 'retired'
        and (${last?.position.commit.toString() ?? null}::numeric, ${last?.position.prepare.toString() ?? null}::numeric)
            > (l.checkpoint_commit, l.checkpoint_prepare)
    )
    select name, generation, version, schema_name, status, checkpoint_commit::text as checkpoint_commit,
           checkpoint_prepare::text as checkpoint_prepare, events_processed::text as events_processed
    from locked`.execute(trx);
  const current = new Map(locked.map((r) => [`${r.name}/${r.generation}`, toGeneration(r)]));
  const out: (LogPosition | 'retired')[] = [];
  const work: { m: BatchMember; fresh: RecordedEvent[] }[] = [];
  for (const m of members) {
    const cur = current.get(`${m.projection.name}/${m.gen.generation}`);
    if (!cur || cur.status === 'retired') {
      out.push('retired');
      continue;
    }
    const types = m.projection.eventTypes;
    // Skip what an earlier (crashed or raced) run already folded: the checkpoint is the truth.
    const fresh = events.filter(
      (e) => isAfter(e.position, cur.checkpoint) && (!types || types.includes(e.type)),
    );
    if (fresh.length > 0) work.push({ m, fresh });
    if (!last || !isAfter(last.position, cur.checkpoint)) {
      out.push(cur.checkpoint);
      continue;
    }
    out.push(last.position);
  }
  for (const { m, fresh } of work) await m.projection.apply(trx.withSchema(m.gen.schema), fresh);
  return out;
};

/** The checkpoint of each projection's live generation, by name (one query; API-only processes poll it). */
export const liveCheckpoints = async (db: Kysely<ReadModels>): Promise<Map<string, LogPosition>> => {
  const rows = await selectGeneration(db).where('status', '=', 'live').execute();
  const out = new Map<string, LogPosition>();
  for (const r of rows) {
    const g = toGeneration(r);
    const seen = out.get(g.name);
    if (!seen || isAfter(g.checkpoint, seen)) out.set(g.name, g.checkpoint);
  }
  return out;
};

const isAfter = (a: LogPosition, b: LogPosition): boolean =>
  a.commit > b.commit || (a.commit === b.commit && a.prepare > b.prepare);

/**
 * Makes `gen` the live generation inside `trx`: points each public view at its tables, marks it `live` and
 * every other generation of the projection `retired`. Returns the schemas of the retired generations (to drop
 * after commit).
 */
export const promote = async (
  trx: Kysely<ReadModels>,
  projection: Projection,
  gen: Generation,
): Promise<string[]> => {
  // A swap is not re-derivable like a page: it commits durably even when a page folded in the same transaction
  // turned the flush wait off (see applyBatches).
  await sql`reset synchronous_commit`.execute(trx);
  for (const table of projection.tables) {
    await sql`drop view if exists ${sql.id('public', table)}`.execute(trx);
    await sql`create view ${sql.id('public', table)} as select * from ${sql.id(gen.schema, table)}`.execute(
      trx,
    );
  }
  const retired = await trx
    .updateTable('projection_generations')
    .set({ status: 'retired', updated_at: new Date() })
    .where('name', '=', projection.name)
    .where('generation', '<>', gen.generation)
    .where('status', '<>', 'retired')
    .returning('schema_name')
    .execute();
  await setGenerationStatus(trx, projection.name, gen.generation, 'live');
  await trx
    .updateTable('projections')
    .set({ live_generation: gen.generation, updated_at: new Date() })
    .where('name', '=', projection.name)
    .execute();
  return retired.map((r) => r.schema_name);
};

/** Drops a retired generation's schema and tables. */
export const dropSchema = async (db: Kysely<ReadModels>, schema: string): Promise<void> => {
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
};
