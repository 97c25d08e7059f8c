import { type Kysely, sql } from 'kysely';
import { dropTables } from './drop-tables';

/**
 * Projection bookkeeping (ARCHITECTURE §6): which generation of each projection serves reads, and each
 * generation's checkpoint, written in the same transaction as the generation's rows.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table projections (
      name text primary key,
      live_generation int,
      updated_at timestamptz not null default now()
    )`.execute(db);
  await sql`
    create table projection_generations (
      name text not null,
      generation int not null,
      version int not null,
      schema_name text not null,
      status text not null check (status in ('building', 'live', 'retired')),
      checkpoint_commit numeric(20, 0) not null default 0,
      checkpoint_prepare numeric(20, 0) not null default 0,
      events_processed bigint not null default 0,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      primary key (name, generation)
    )`.execute(db);
}

export const down = dropTables('projection_generations', 'projections');
