import { type Kysely, sql } from 'kysely';
import type { AccountStatus } from '../domain/account/state';
import type { RiskProfile } from '../domain/shared/risk-profile';
import type { ReadModels } from '../projections/read-models';
import { decimal8, iso } from './format';

/** An account as the read side shows it (spec "Account" resource). */
export interface AccountView {
  accountId: string;
  displayName: string;
  email: string | null;
  status: AccountStatus;
  /** USDT, 8 decimal places. */
  startingBalance: string;
  sessionId: string;
  /** ISO 8601. */
  sessionStartedAt: string;
  riskProfile: RiskProfile;
  hasPassword: boolean;
  apiKeyPreview: string;
  createdAt: string;
  updatedAt: string;
}

/** The account `accountId` from the `accounts` read model, or `undefined`. */
export const getAccount = async (
  db: Kysely<ReadModels>,
  accountId: string,
): Promise<AccountView | undefined> => {
  const row = await db
    .selectFrom('accounts')
    .selectAll()
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    accountId: row.account_id,
    displayName: row.display_name,
    email: row.email,
    status: row.status,
    startingBalance: decimal8(row.starting_balance),
    sessionId: row.session_id,
    sessionStartedAt: iso(row.session_started_at),
    riskProfile: {
      max_position_size_pct: row.max_position_size_pct,
      daily_loss_limit_pct: row.daily_loss_limit_pct,
      max_open_orders: row.max_open_orders,
      max_order_size_pct: row.max_order_size_pct,
    },
    hasPassword: row.has_password,
    apiKeyPreview: row.api_key_preview,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
};

/**
 * What authenticating a JWT needs of an account: its status and its credentials version (a token issued at a
 * lower version is refused), or `undefined` when there is none.
 */
export const getAccountAuthState = async (
  db: Kysely<ReadModels>,
  accountId: string,
): Promise<{ status: AccountStatus; credentialsVersion: number } | undefined> => {
  const row = await db
    .selectFrom('accounts')
    .select(['status', 'credentials_version'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? { status: row.status, credentialsVersion: row.credentials_version } : undefined;
};

/**
 * {@link getAccountAuthState} of many accounts in one statement (`account_id = any($1)`): each account found, by
 * id; an id without a row is absent. What a heartbeat's check of every open socket reads (`AuthService.prefetch`).
 */
export const getAccountsAuthState = async (
  db: Kysely<ReadModels>,
  accountIds: readonly string[],
): Promise<Map<string, { status: AccountStatus; credentialsVersion: number }>> => {
  const found = new Map<string, { status: AccountStatus; credentialsVersion: number }>();
  if (accountIds.length === 0) return found;
  const rows = await db
    .selectFrom('accounts')
    .select(['account_id', 'status', 'credentials_version'])
    .where(sql<boolean>`account_id = any(${[...accountIds]}::uuid[])`)
    .execute();
  for (const r of rows)
    found.set(r.account_id, { status: r.status, credentialsVersion: r.credentials_version });
  return found;
};
