import type { Kysely } from 'kysely';
import type { ReadModels } from '../projections/read-models';

/**
 * Runs `read` on one snapshot of the read models: a `REPEATABLE READ, READ ONLY` transaction, so every query
 * inside sees the same committed projection pages and none of a page folded meanwhile. Use it wherever one answer
 * combines several read models whose figures must agree (a portfolio's cash, positions, realized PnL and fees;
 * the revision they reflect): separate queries could straddle a fill the matching engine commits between them,
 * and `total_equity − starting_balance = net_pnl` would no longer hold. On PGlite the transaction also holds the
 * only connection, which serializes it with the projection pages.
 *
 * @param read queries to run; they must use the `trx` they are given (the transaction), never the outer `db`.
 * @returns what `read` returns. Throws what `read` or the database throws; nothing is ever written.
 */
export const readSnapshot = <T>(
  db: Kysely<ReadModels>,
  read: (trx: Kysely<ReadModels>) => Promise<T>,
): Promise<T> =>
  db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
