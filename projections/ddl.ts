import { type ColumnDefinitionBuilder, type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Projection } from './projection';

/**
 * A column as SQL says it: its type, then optionally `primary key`, `not null` and `default <integer>`, in that
 * order (`'numeric(38, 8) not null'`, `'uuid primary key'`, `'integer not null default 0'`).
 */
export type ColumnDefinition = string;

/** An index of a read-model table: its columns, or its columns and the one column a partial index requires set. */
export type IndexDefinition =
  | readonly string[]
  | { readonly columns: readonly string[]; readonly whereNotNull: string };

/**
 * One read-model table declared once: its columns in order (name → {@link ColumnDefinition}), the composite
 * primary key (the constraint `<table>_pk`), and its indexes by name.
 */
export interface TableDefinition {
  readonly columns: Readonly<Record<string, ColumnDefinition>>;
  readonly primaryKey?: readonly string[];
  readonly indexes?: Readonly<Record<string, IndexDefinition>>;
}

/** The tables of a projection by name, created in this order (each table, then its indexes). */
export type TableDefinitions = Readonly<Record<string, TableDefinition>>;

const COLUMN = /^(.+?)( primary key)?( not null)?(?: default (-?\d+))?$/;

/** Applies a {@link ColumnDefinition}'s constraints (after its type) to kysely's column builder. */
const constraintsOf =
  (definition: ColumnDefinition) =>
  (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder => {
    const [, , primaryKey, notNull, defaultValue] = COLUMN.exec(definition) ?? [];
    let column = primaryKey ? c.primaryKey() : c;
    if (notNull) column = column.notNull();
    return defaultValue === undefined ? column : column.defaultTo(Number(defaultValue));
  };

/** The SQL type of a {@link ColumnDefinition} (what precedes its constraints). */
const typeOf = (definition: ColumnDefinition): string => COLUMN.exec(definition)?.[1] ?? definition;

/**
 * Creates `tables` in `schema` with kysely's schema builder: per table its columns in declaration order, the
 * `<table>_pk` constraint when it has a composite key, then its indexes. The SQL is what the equivalent
 * `createTable(...).addColumn(...)` chain writes.
 */
const createTables = async (db: Kysely<any>, schema: string, tables: TableDefinitions): Promise<void> => {
  const s = db.schema.withSchema(schema);
  for (const [table, definition] of Object.entries(tables)) {
    let create: CreateTableBuilder<string, string> = s.createTable(table);
    for (const [column, type] of Object.entries(definition.columns)) {
      create = create.addColumn(column, sql.raw(typeOf(type)), constraintsOf(type));
    }
    if (definition.primaryKey)
      create = create.addPrimaryKeyConstraint(`${table}_pk`, [...definition.primaryKey]);
    await create.execute();
    for (const [name, index] of Object.entries(definition.indexes ?? {})) {
      const columns = 'columns' in index ? index.columns : (index as readonly string[]);
      const on = s
        .createIndex(name)
        .on(table)
        .columns([...columns]);
      await ('whereNotNull' in index ? on.where(sql.ref(index.whereNotNull), 'is not', null) : on).execute();
    }
  }
};

/**
 * A projection's `tables` and `createTables` from its table definitions: the names in declaration order, and the
 * DDL of {@link createTables}. Spread into the projection (`...declareTables(ORDERS_TABLES)`).
 */
export const declareTables = (tables: TableDefinitions): Pick<Projection, 'tables' | 'createTables'> => ({
  tables: Object.keys(tables),
  createTables: (db, schema) => createTables(db, schema, tables),
});
