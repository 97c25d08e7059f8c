import type { AccountsTable } from '../../projections/accounts';
import type { AgentsTable } from '../../projections/agents';
import type { ApiKeysTable } from '../../projections/api-keys';

/** Read models of accounts, agents and API keys (joined into `Database` in `schema.ts`). */
export interface IdentityTables {
  accounts: AccountsTable;
  agents: AgentsTable;
  api_keys: ApiKeysTable;
}
