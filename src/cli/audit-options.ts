import { isUuid } from '../../domain/shared/uuid';
import { portfolioQuery } from '../contract/trading';
import { usageError } from './errors';

/*
 * The arguments of `audit replay`, checked before anything else is loaded: a usage error (exit code 2) costs the
 * CLI no runtime, database or event store modules (src/main.ts imports this module, not src/cli/audit.ts).
 */

/**
 * Parses `--as-of` exactly like `GET /account/portfolio?as_of=`: an ISO 8601 date-time with a time zone
 * (`Z` or `±hh:mm`), or a date (00:00 UTC of that day). Anything else (`1`, `yesterday`, a time without zone,
 * which would be read in the machine's local time) is a usage error.
 */
export const parseAsOf = (text: string): Date => {
  const at = new Date(text);
  if (!portfolioQuery.safeParse({ as_of: text }).success || !text || Number.isNaN(at.getTime())) {
    throw usageError(
      `--as-of must be an ISO 8601 date-time with a time zone (e.g. 2026-01-31T12:00:00Z) or a date (00:00 UTC), got "${text}"`,
    );
  }
  return at;
};

type OwnerKind = 'agent' | 'account';

/** The wallet `audit replay` reads: `--agent ID` or `--account ID` (one of them, a UUID); throws a usage error. */
export const ownerOf = (options: { agent?: string; account?: string }): { kind: OwnerKind; id: string } => {
  if (options.agent !== undefined && options.account !== undefined)
    throw usageError('give either --agent ID or --account ID, not both');
  const kind: OwnerKind | undefined =
    options.agent !== undefined ? 'agent' : options.account !== undefined ? 'account' : undefined;
  if (!kind) throw usageError('give --agent ID (an agent wallet) or --account ID (an account wallet)');
  const id = (kind === 'agent' ? options.agent : options.account)!.trim();
  if (!isUuid(id)) throw usageError(`--${kind} must be an ${kind} id (a UUID), got "${id}"`);
  return { kind, id: id.toLowerCase() };
};

/** Checks the arguments of `audit replay` without touching the database; throws a usage error. */
export const checkReplayOptions = (options: { agent?: string; account?: string; asOf?: string }): void => {
  ownerOf(options);
  if (options.asOf !== undefined) parseAsOf(options.asOf);
};
