import type { Insertable, Kysely, Updateable } from 'kysely';
import type { RecordedEvent } from '../ports/event-store';
import { deletedIdOf } from './columns';

/**
 * The writes of a read model that keeps one row per entity (an account, an agent, a webhook), addressed by its key
 * column: what the projection's event arms do, each in one call.
 */
export interface EntityRows<Row> {
  /** Inserts the entity's row. */
  insert(row: Insertable<Row>): Promise<unknown>;
  /** Sets `set` on the row whose key is `id` (no row, no change). */
  update(id: string, set: Updateable<Row>): Promise<unknown>;
  /** Deletes the row whose key is `id`. */
  remove(id: string): Promise<unknown>;
}

/** {@link EntityRows} of `table` keyed by its `key` column, written through `db` (the batch's transaction). */
export const entityRows = <Row>(db: Kysely<any>, table: string, key: keyof Row & string): EntityRows<Row> => {
  const column: string = key;
  return {
    insert: (row) => db.insertInto(table).values(row).execute(),
    update: (id, set) => db.updateTable(table).set(set).where(column, '=', id).execute(),
    remove: (id) => db.deleteFrom(table).where(column, '=', id).execute(),
  };
};

/**
 * Removes the rows of one entity from each of `tables`, those whose `column` is `id`, one `DELETE` a table in the
 * order given: what a projection does when the stream its rows came from is deleted (a wallet's `StreamDeleted`, a
 * `BattleDeleted`). Written through `db` (the batch's transaction).
 */
export const deleteRowsOf = async <DB>(
  db: Kysely<DB>,
  tables: readonly (keyof DB & string)[],
  column: string,
  id: string,
): Promise<void> => {
  const any = db as Kysely<any>;
  for (const table of tables as readonly string[])
    await any.deleteFrom(table).where(column, '=', id).execute();
};

/**
 * Folds a batch into a read model of {@link EntityRows}, event by event: a `StreamDeleted` of a `{prefix}{id}`
 * stream removes the row `id`, an event of such a stream goes to `apply` (as the entity's event type `E`), any
 * other event is skipped.
 */
export const foldEntityEvents = async <E>(
  events: readonly RecordedEvent[],
  prefix: string,
  rows: EntityRows<unknown>,
  apply: (event: E) => Promise<unknown>,
): Promise<void> => {
  for (const e of events) {
    const deleted = deletedIdOf(e, prefix);
    if (deleted !== undefined) await rows.remove(deleted);
    else if (e.streamId.startsWith(prefix)) await apply({ type: e.type, data: e.data } as E);
  }
};
