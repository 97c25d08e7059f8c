/**
 * The text a statement starts with when the pool should send it as a named prepared statement: the server parses
 * and analyzes it once per connection, and plans it once per connection when its generic plan is no dearer than
 * its custom ones (PostgreSQL's plan cache), instead of parsing, analyzing and planning it on every execution
 * (what an unnamed statement costs; most of the server's CPU per statement on the order path, docs/benchmarks.md,
 * "Issue 23, PostgreSQL's CPU and WAL per order"). Only for statements whose text is fixed (their values all
 * parameters) and whose result columns do not depend on `search_path`, so the set of names stays small and a
 * prepared statement never outlives its result type. A comment, so PGlite (and the server) run the same text.
 */
export const PREPARED = '/* prepared */';

/** Statement text → its name, shared by every connection of the process (one name per text, `ptv_<n>`). */
const preparedNames = new Map<string, string>();

/**
 * The query config of a {@link PREPARED} text: the named statement (`pg` parses each name once per connection and
 * reuses it after), one name per text for the process (`ptv_<n>`). `answerMarkedStatements` (`marked-statements.ts`)
 * sends it for every marked text.
 */
export const preparedStatementOf = (
  text: string,
  values: unknown,
): { name: string; text: string; values: unknown } => {
  let name = preparedNames.get(text);
  if (name === undefined) {
    name = `ptv_${preparedNames.size + 1}`;
    preparedNames.set(text, name);
  }
  return { name, text, values };
};
