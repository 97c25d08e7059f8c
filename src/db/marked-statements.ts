import type pg from 'pg';
import { COPY_TEXT } from '../../projections/copy-text';
import { runCopyText } from './copy-text';
import { PREPARED, preparedStatementOf } from './prepared';

/**
 * Makes `client.query(text, values)` answer the statements whose text starts with a marker comment: {@link PREPARED}
 * ones go out as named prepared statements (`prepared.ts`), {@link COPY_TEXT} ones run as `COPY … TO STDOUT` and
 * answer their rows as bytes (`copy-text.ts`); everything else goes to the query it had. One wrapper for both, so a
 * statement (every one on the order path) is looked at once.
 */
export const answerMarkedStatements = (client: pg.ClientBase): void => {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
    const [text, values] = args;
    if (args.length <= 2 && typeof text === 'string' && text.startsWith('/* ')) {
      if (text.startsWith(PREPARED)) return query(preparedStatementOf(text, values));
      if (text.startsWith(COPY_TEXT)) return runCopyText(query, text, values as unknown[] | undefined);
    }
    return query(...args);
  };
};
