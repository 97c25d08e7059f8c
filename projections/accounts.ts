import type { Kysely } from 'kysely';
import type { AccountEvent } from '../domain/account/events';
import { ACCOUNT_EVENT_TYPES } from '../domain/account/events';
import type { RecordedEvent } from '../ports/event-store';
import { RISK_COLUMNS, riskColumns, type Timestamp } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import { entityRows, foldEntityEvents } from './entity-rows';
import type { Projection } from './projection';

/** A timestamp column: read as `Date`, written as an ISO string. */

/**
 * Row of the `accounts` read model: one per registered account. Holds no credential material beyond the key
 * preview (the secret and password hashes stay in the account stream; `has_password` only says whether one is set).
 */
export interface AccountsTable {
  account_id: string;
  display_name: string;
  /** Lower-cased contact email, or null. */
  email: string | null;
  status: 'active' | 'suspended' | 'archived';
  /** numeric(38, 8), read as a string. */
  starting_balance: string;
  session_id: string;
  session_started_at: Timestamp;
  max_position_size_pct: number;
  daily_loss_limit_pct: number;
  max_open_orders: number;
  max_order_size_pct: number;
  has_password: boolean;
  /** Password changes so far: JWTs issued at a lower version are refused (`AccountState.credentialsVersion`). */
  credentials_version: number;
  api_key_preview: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** The DDL of its read-model tables. */
const ACCOUNTS_TABLES: TableDefinitions = {
  accounts: {
    columns: {
      account_id: 'uuid primary key',
      display_name: 'text not null',
      email: 'text',
      status: 'text not null',
      starting_balance: 'numeric(38, 8) not null',
      session_id: 'uuid not null',
      session_started_at: 'timestamptz not null',
      ...RISK_COLUMNS,
      has_password: 'boolean not null',
      credentials_version: 'integer not null default 0',
      api_key_preview: 'text not null',
      created_at: 'timestamptz not null',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      accounts_email: ['email'],
    },
  },
};

/**
 * `accounts` (ARCHITECTURE §6): the account resource for `/account/info`, status checks of credentials and the
 * trading capability's risk limits. Deterministic: every value comes from event data.
 */
export const accountsProjection: Projection = {
  name: 'accounts',
  version: 2,
  ...declareTables(ACCOUNTS_TABLES),
  eventTypes: [...ACCOUNT_EVENT_TYPES, 'StreamDeleted'],
  async apply(db: Kysely<{ accounts: AccountsTable }>, events: readonly RecordedEvent[]) {
    const rows = entityRows<AccountsTable>(db, 'accounts', 'account_id');
    const setStatus = (id: string, status: AccountsTable['status'], at: string) =>
      rows.update(id, { status, updated_at: at });
    await foldEntityEvents<AccountEvent>(events, 'account-', rows, async (event) => {
      switch (event.type) {
        case 'AccountRegistered': {
          const d = event.data;
          await rows.insert({
            account_id: d.account_id,
            display_name: d.display_name,
            email: d.email,
            status: 'active',
            starting_balance: d.starting_balance,
            session_id: d.session_id,
            session_started_at: d.registered_at,
            ...riskColumns(d.risk_profile),
            has_password: d.password_hash !== null,
            credentials_version: 0,
            api_key_preview: d.api_key_preview,
            created_at: d.registered_at,
            updated_at: d.registered_at,
          });
          break;
        }
        case 'AccountPasswordSet':
          await db
            .updateTable('accounts')
            .set((eb) => ({
              has_password: true,
              credentials_version: eb('credentials_version', '+', event.data.first_time ? 0 : 1),
              updated_at: event.data.set_at,
            }))
            .where('account_id', '=', event.data.account_id)
            .execute();
          break;
        case 'AccountRiskProfileUpdated':
          await rows.update(event.data.account_id, {
            ...riskColumns(event.data.risk_profile),
            updated_at: event.data.updated_at,
          });
          break;
        case 'AccountSuspended':
          await setStatus(event.data.account_id, 'suspended', event.data.suspended_at);
          break;
        case 'AccountReactivated':
          await setStatus(event.data.account_id, 'active', event.data.reactivated_at);
          break;
        case 'AccountArchived':
          await setStatus(event.data.account_id, 'archived', event.data.archived_at);
          break;
      }
    });
  },
};
