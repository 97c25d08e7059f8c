import type { AgentCreatedData } from '../../domain/agent/events';

/**
 * The data of an `AgentCreated` event as `CreateAgent` records it when given no options: no labels, a starting
 * balance of 10000 USDT and the default risk profile 25/20/50/50 (spelled out, not imported, so a test that
 * compares with it checks the defaults). The caller names the agent, its owner, its key material, its session
 * and its time; any other field may be overridden.
 */
export const agentCreatedWithDefaults = (
  fields: Pick<
    AgentCreatedData,
    | 'agent_id'
    | 'account_id'
    | 'display_name'
    | 'api_key_hash'
    | 'api_key_preview'
    | 'api_key_ciphertext'
    | 'session_id'
    | 'created_at'
  > &
    Partial<AgentCreatedData>,
): AgentCreatedData => ({
  llm_model: null,
  framework: null,
  strategy_tags: [],
  avatar_url: null,
  color: null,
  starting_balance: '10000.00000000',
  risk_profile: {
    max_position_size_pct: 25,
    daily_loss_limit_pct: 20,
    max_open_orders: 50,
    max_order_size_pct: 50,
  },
  cloned_from: null,
  ...fields,
});
