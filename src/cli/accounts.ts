import type { Logger } from 'pino';
import {
  type AccountCommands,
  type AccountStatusAction,
  createAccountCommands,
} from '../../commands/accounts';
import { DomainError } from '../../domain/shared/errors';
import { isUuid } from '../../domain/shared/uuid';
import type { LogPosition } from '../../ports/event-store';
import type { Config } from '../config';
import { createRuntime } from '../runtime';
import { usageError } from './errors';

/** Outcome of an operator status change. */
export interface StatusChangeOutcome {
  accountId: string;
  status: string;
  /** False when the account already had that status (nothing recorded). */
  changed: boolean;
  /** Log position of the recorded change (absent when nothing changed). */
  position?: LogPosition;
}

/**
 * Suspends, reactivates or archives an account (ARCHITECTURE §14b: the spec shows no transitions, so they are
 * operator actions). Recorded on the account stream with actor `system`. Throws `DomainError`:
 * `VALIDATION_ERROR` for an id that is not a UUID, `ACCOUNT_NOT_FOUND`, `CONFLICT` (suspending an archived
 * account).
 */
export const changeAccountStatus = async (
  accounts: AccountCommands,
  action: AccountStatusAction,
  accountId: string,
  reason: string | null = null,
): Promise<StatusChangeOutcome> => {
  if (!isUuid(accountId)) throw new DomainError('VALIDATION_ERROR', `not an account id: ${accountId}`);
  const id = accountId.toLowerCase();
  const result = await accounts.changeStatus(id, action, reason, { actor: 'system' });
  return {
    accountId: id,
    status: result.account.status,
    changed: result.position !== undefined,
    ...(result.position ? { position: result.position } : {}),
  };
};

/**
 * `accounts suspend|reactivate|archive ID [--reason TEXT]`: prints the new status; exit code 1 on a refused
 * change or an unknown account, 2 (a {@link CliError} thrown) for an id that is not a UUID. Running API processes
 * see the change within their credential cache lifetime (2 s); logins answer `ACCOUNT_SUSPENDED` for suspended and
 * archived accounts. With the embedded PGlite, stop the server first
 * (one process per data directory).
 */
export const accountsCli = async (
  config: Config,
  logger: Logger,
  action: AccountStatusAction,
  accountId: string,
  options: { reason?: string },
): Promise<number> => {
  // A usage error (exit code 2, docs/operations.md "Command line"), before the database is opened.
  if (!isUuid(accountId)) throw usageError(`not an account id (a UUID): ${accountId}`);
  const runtime = await createRuntime(config, logger, { runProjections: false, market: false });
  try {
    const accounts = createAccountCommands({ store: runtime.services.eventStore });
    const outcome = await changeAccountStatus(accounts, action, accountId, options.reason ?? null);
    console.log(
      `account ${outcome.accountId}: ${outcome.status}${outcome.changed ? '' : ' (unchanged: it already was)'}`,
    );
    return 0;
  } catch (error) {
    if (error instanceof DomainError) {
      console.error(`${error.code}: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await runtime.close();
  }
};
