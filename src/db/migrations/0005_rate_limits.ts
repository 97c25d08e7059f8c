import { type Kysely, sql } from 'kysely';
import { dropTables } from './drop-tables';

/**
 * The shared rate-limit counters (`src/rate-limits/limiter.ts`, `rate-limiter-flexible`'s PostgreSQL layout): one
 * row per `group:key` with the points consumed in its window and when the window ends (ms since epoch). Used only
 * on a PostgreSQL server; created here (not by the library at run time) so processes starting together do not race.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`create table if not exists rate_limits (
    key varchar(255) primary key,
    points integer not null default 0,
    expire bigint
  )`.execute(db);
};

export const down = dropTables('rate_limits');
