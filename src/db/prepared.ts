import type pg from 'pg';

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
 * Makes `client.query(text, values)` send texts that start with {@link PREPARED} as named statements (`pg` parses
 * each name once per connection and reuses it after); everything else goes out as before.
 */
export const sendMarkedPrepared = (client: pg.ClientBase): void => {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length <= 2 && typeof text === 'string' && text.startsWith(PREPARED)) {
      let name = preparedNames.get(text);
      if (name === undefined) {
        name = `ptv_${preparedNames.size + 1}`;
        preparedNames.set(text, name);
      }
      return query({ name, text, values });
    }
    return query(...args);
  };
};
