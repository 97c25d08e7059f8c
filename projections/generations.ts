import { type Kysely, sql } from 'kysely';
import type { Database, ProjectionGenerationsTable } from '../src/db/schema';
import { type LogPosition, type RecordedEvent, START } from '../src/eventstore/port';
import { generationSchema, type Projection } from './projection';

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

const toGeneration = (r: {
  name: string;
  generation: number;
  version: number;
  schema_name: string;
  status: ProjectionGenerationsTable['status'];
  checkpoint_commit: string;
  checkpoint_prepare: string;
  events_processed: string | number;
}): Generation => ({
  name: r.name,
  generation: r.generation,
  version: r.version,
  schema: r.schema_name,
  status: r.status,
  checkpoint: { commit: BigInt(r.checkpoint_commit), prepare: BigInt(r.checkpoint_prepare) },
  eventsProcessed: Number(r.events_processed),
});

const selectGeneration = (db: Kysely<Database>) =>
  db
    .selectFrom('projection_generations')
    .select([
      'name',
      'generation',
      'version',
      'schema_name',
      'status',
      sql<string>`checkpoint_commit::text`.as('checkpoint_commit'),
      sql<string>`checkpoint_prepare::text`.as('checkpoint_prepare'),
      sql<string>`events_processed::text`.as('events_processed'),
    ]);

/** Registers the projection's name (idempotent). */
export const ensureRegistered = async (db: Kysely<Database>, name: string): Promise<void> => {
  await db
    .insertInto('projections')
    .values({ name, live_generation: null, updated_at: new Date() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
};

/** The generation serving reads, or `undefined` before the first one. */
export const liveGeneration = async (db: Kysely<Database>, name: string): Promise<Generation | undefined> => {
  const row = await selectGeneration(db)
    .where('name', '=', name)
    .where('status', '=', 'live')
    .orderBy('generation', 'desc')
    .executeTakeFirst();
  return row ? toGeneration(row) : undefined;
};

/** Every generation of every projection, newest first per name. */
export const allGenerations = async (db: Kysely<Database>): Promise<Generation[]> =>
  (await selectGeneration(db).orderBy('name').orderBy('generation', 'desc').execute()).map(toGeneration);

/** Reads one generation, locking its row for the rest of the transaction when `lock` is set. */
export const readGeneration = async (
  db: Kysely<Database>,
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
export const createGeneration = async (db: Kysely<Database>, projection: Projection): Promise<Generation> =>
  db.transaction().execute(async (trx) => {
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
  });

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
  trx: Kysely<Database>,
  projection: Projection,
  gen: Pick<Generation, 'generation' | 'schema'>,
  events: readonly RecordedEvent[],
): Promise<LogPosition | 'retired'> => (await applyBatches(trx, [{ projection, gen }], events))[0]!;

/**
 * Folds one page of `$all` into several projections inside the caller's transaction `trx` (ARCHITECTURE §6:
 * rows and checkpoints commit together), so a page costs one transaction for every read model instead of one
 * each. Locks all the generation rows in one statement, in (name, generation) order so that concurrent runners
 * and a rebuild's swap never deadlock; each member folds only its event types after its own committed
 * checkpoint (what an earlier or concurrent run already folded is skipped), then every member's checkpoint moves
 * to the last event in one statement. Returns, per member in input order, `'retired'` (nothing folded: the
 * generation was swapped out meanwhile) or its new checkpoint. Throws what a projector throws (the caller rolls
 * the whole transaction back).
 */
export const applyBatches = async (
  trx: Kysely<Database>,
  members: readonly BatchMember[],
  events: readonly RecordedEvent[],
): Promise<(LogPosition | 'retired')[]> => {
  if (members.length === 0) return [];
  const locked = await selectGeneration(trx)
    .where((eb) =>
      eb.or(
        members.map((m) =>
          eb.and([eb('name', '=', m.projection.name), eb('generation', '=', m.gen.generation)]),
        ),
      ),
    )
    .orderBy('name')
    .orderBy('generation')
    .forUpdate()
    .execute();
  const current = new Map(locked.map((r) => [`${r.name}/${r.generation}`, toGeneration(r)]));
  const last = events[events.length - 1];
  const out: (LogPosition | 'retired')[] = [];
  const moved: { name: string; generation: number; processed: number }[] = [];
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
    moved.push({
      name: m.projection.name,
      generation: m.gen.generation,
      processed: events.filter((e) => isAfter(e.position, cur.checkpoint)).length,
    });
    out.push(last.position);
  }
  if (work.length > 0) {
    // Raw SQL in a projector must hit this generation's tables too, not the public views of the live one. Table
    // names are unique across projections (each is also a public view), so one search path serves them all.
    const path = [...work.map((w) => w.m.gen.schema), 'public'].join(', ');
    await sql`select set_config('search_path', ${path}, true)`.execute(trx);
    for (const { m, fresh } of work) await m.projection.apply(trx.withSchema(m.gen.schema), fresh);
  }
  if (last && moved.length > 0) {
    await sql`
      update projection_generations as g
      set checkpoint_commit = ${last.position.commit.toString()}::numeric,
          checkpoint_prepare = ${last.position.prepare.toString()}::numeric,
          events_processed = g.events_processed + m.processed,
          updated_at = now()
      from unnest(${moved.map((x) => x.name)}::text[], ${moved.map((x) => x.generation)}::int[],
                  ${moved.map((x) => x.processed)}::bigint[]) as m(name, generation, processed)
      where g.name = m.name and g.generation = m.generation`.execute(trx);
  }
  return out;
};

/** The checkpoint of each projection's live generation, by name (one query; API-only processes poll it). */
export const liveCheckpoints = async (db: Kysely<Database>): Promise<Map<string, LogPosition>> => {
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
  trx: Kysely<Database>,
  projection: Projection,
  gen: Generation,
): Promise<string[]> => {
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
  await trx
    .updateTable('projection_generations')
    .set({ status: 'live', updated_at: new Date() })
    .where('name', '=', projection.name)
    .where('generation', '=', gen.generation)
    .execute();
  await trx
    .updateTable('projections')
    .set({ live_generation: gen.generation, updated_at: new Date() })
    .where('name', '=', projection.name)
    .execute();
  return retired.map((r) => r.schema_name);
};

/** Drops a retired generation's schema and tables. */
export const dropSchema = async (db: Kysely<Database>, schema: string): Promise<void> => {
  await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
};
