import type { Kysely } from 'kysely';
import type { RecordedEvent } from '../ports/event-store';

/**
 * A projection (ARCHITECTURE §6): a named, versioned fold of `$all` into read-model tables.
 *
 * Its tables live in a schema per generation (`proj_<name>_g<generation>`); the public names are views over the
 * live generation, so a rebuild builds the next generation beside the live one and swaps the views atomically.
 * Bump `version` whenever the tables or the folding change: the runner then rebuilds without downtime.
 */
export interface Projection {
  /** Unique, lower-case, `[a-z0-9_]+`. */
  readonly name: string;
  /** Positive integer; bump to force a rebuild. */
  readonly version: number;
  /** Names of the read-model tables it owns (each exposed as a public view of the same name). */
  readonly tables: readonly string[];
  /** Event types it folds; events of other types only advance the checkpoint. All types when absent. */
  readonly eventTypes?: readonly string[];
  /**
   * Creates its (empty) tables in `schema`. Use `db.schema.withSchema(schema)` or `sql` with the
   * schema-qualified names; indexes too.
   */
  createTables(db: Kysely<any>, schema: string): Promise<void>;
  /**
   * Folds a batch of events into the tables. `db` is the batch's transaction already scoped with
   * `withSchema(schema)`, and the transaction's `search_path` starts with the generation's schema, so plain
   * table names hit this generation both in the query builder and in raw `sql`. Must be deterministic: a rebuild from
   * position 0 has to produce the same rows as the live run (use event data and metadata, never the clock).
   */
  apply(db: Kysely<any>, events: readonly RecordedEvent[]): Promise<void>;
}

/** Name of the schema that holds generation `generation` of projection `name`. */
export const generationSchema = (name: string, generation: number): string => `proj_${name}_g${generation}`;
