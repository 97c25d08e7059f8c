/**
 * The text a read statement starts with when its rows should reach the process as bytes instead of strings (issue
 * 24: a finished whole-year backtest's ~4.4 MB of packed equity, which as strings on the request thread went
 * straight to V8's old generation and brought on its mark-compacts). On a server the pool's clients
 * (`src/db/copy-text.ts`) run it as `COPY (statement) TO STDOUT` in the connection's transaction, so it sees what the
 * transaction wrote, and answer one row {@link CopyTextRow}: PostgreSQL's COPY text of the rows as the protocol's
 * `CopyData` bytes, never decoded into a string. PGlite runs the statement as the select it is (the marker is a
 * comment); {@link copyTextOf} turns either answer into the same bytes.
 *
 * For statements whose `$n` are parameters only (the server inlines them as literals: `COPY` takes no
 * parameters), with string, number or null values, and no result column named `copy_text`.
 */
export const COPY_TEXT = '/* copy-text */';

/**
 * A server's answer to a {@link COPY_TEXT} statement: the rows' COPY text in parts (one per `CopyData` message: a
 * row), to be read in order; each part an array that owns its buffer (not a view).
 */
export interface CopyTextRow {
  copy_text: Uint8Array[];
}

/** COPY's text escapes (PostgreSQL's `CopyAttributeOutText`): backslash and the control characters it names. */
const ESCAPES: Readonly<Record<string, string>> = {
  '\\': '\\\\',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/** A value as COPY's text writes it (`\N` for null); throws `TypeError` for any but a string, number or null. */
const copyField = (value: unknown): string => {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') throw new TypeError(`a ${typeof value} in a copy-text row`);
  return value.replace(/[\\\b\f\n\r\t\v]/g, (c) => ESCAPES[c]!);
};

/**
 * The COPY text of a {@link COPY_TEXT} statement's answer, in parts to be read in order: the server's parts as they
 * came, or, from PGlite's rows, the same text written out as one part (per row its values in column order, TAB
 * between them, LF after each; strings escaped as COPY escapes them, null as `\N`, numbers as `String` writes
 * them: integers as the server does). Each part has a buffer of its own (a caller may transfer it). Throws
 * `TypeError` for a value of another type.
 */
export const copyTextOf = (rows: readonly Record<string, unknown>[]): Uint8Array[] => {
  const only = rows.length === 1 ? rows[0]!.copy_text : undefined;
  if (Array.isArray(only) && only.every((part) => part instanceof Uint8Array)) return only;
  if (rows.length === 0) return [];
  const text = rows.map((row) => `${Object.values(row).map(copyField).join('\t')}\n`).join('');
  return [new TextEncoder().encode(text)];
};
