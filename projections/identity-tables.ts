import type { AccountsTable } from './accounts';
import type { AgentsTable } from './agents';
import type { ApiKeysTable } from './api-keys';

/** Read models of accounts, agents and API keys (joined into `Database` in `schema.ts`). */
export interface IdentityTables {
  accounts: AccountsTable;
  agents: AgentsTable;
  api_keys: ApiKeysTable;
}
