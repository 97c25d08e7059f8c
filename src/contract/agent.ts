import { z } from 'zod';
import type { CreateAgentInput } from '../../commands/agents';
import type { AgentProfileFields } from '../../domain/agent/events';
import { AGENT_LIMITS, COLOR_PATTERN } from '../../domain/agent/profile';
import type { AgentState } from '../../domain/agent/state';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import type { AgentView } from '../../queries/agents';
import type { CreatedAgent } from '../application/agents';
import {
  decimalOutput,
  oneLine,
  pageFields,
  partialRiskProfileSchema,
  riskProfileOut,
  riskProfileResponse,
  startingBalanceInput,
  timestamp,
} from './common';

/** `{agent_id}` path parameter. */
export const agentIdParams = z.object({
  // A UUID is case-insensitive: agents are stored (and their streams named) by the lower-case form.
  agent_id: z
    .uuid()
    .transform((id) => id.toLowerCase())
    .describe('agent id (UUID, any letter case)'),
});

const label = oneLine(z.string().max(AGENT_LIMITS.label));
const tags = z
  .array(oneLine(z.string().min(1).max(AGENT_LIMITS.tag)))
  .max(AGENT_LIMITS.tags)
  .describe(`at most ${AGENT_LIMITS.tags} tags of 1–${AGENT_LIMITS.tag} characters`);
const color = z
  .string()
  .regex(COLOR_PATTERN, 'must be a hex colour #RRGGBB')
  .describe('hex colour `#RRGGBB`');
const avatarUrl = z
  .string()
  .max(AGENT_LIMITS.avatarUrl)
  .regex(/^https?:\/\/\S+$/i, 'must be an http(s) URL');
const displayName = oneLine(z.string().trim().min(1).max(AGENT_LIMITS.displayName));

/** `POST /agents` body (spec "Agent endpoints"). */
export const createAgentBody = z
  .object({
    display_name: displayName.describe('1–100 characters'),
    starting_balance: startingBalanceInput('default "10000.00"').optional(),
    llm_model: label.nullable().optional(),
    framework: label.nullable().optional(),
    strategy_tags: tags.optional(),
    risk_profile: partialRiskProfileSchema
      .optional()
      .describe('missing fields take the defaults (25 / 20 / 50, max_order_size_pct 50)'),
    color: color.nullable().optional(),
    avatar_url: avatarUrl.nullable().optional(),
  })
  .strict();

/** `PUT /agents/{id}` body: every field optional; only supplied fields change (null clears a label). */
export const updateAgentBody = z
  .object({
    display_name: displayName.optional(),
    llm_model: label.nullable().optional(),
    framework: label.nullable().optional(),
    strategy_tags: tags.optional().describe('replaces the tags'),
    color: color.nullable().optional(),
    avatar_url: avatarUrl.nullable().optional(),
  })
  .strict();

/**
 * `POST /agents/{id}/clone` query: `new_name` only. Strict, as every write's input is (`served`, `src/endpoints`):
 * a misspelt `?new_nam=` is `VALIDATION_ERROR` 422 naming it, not a clone under the default name.
 */
export const cloneQuery = z.strictObject({
  new_name: displayName.optional().describe('default: the original name followed by " (copy)"'),
});

/**
 * A boolean query flag: `true`/`false` in any letter case (Python's `requests` sends `True`/`False`) or `1`/`0`.
 */
const booleanQuery = z
  .union([
    z.boolean(),
    z
      .string()
      .regex(/^(true|false|1|0)$/i, 'must be true or false')
      .describe('true or false (any letter case), or 1 or 0'),
  ])
  .transform((v) => v === true || (typeof v === 'string' && /^(true|1)$/i.test(v)));

/** `GET /agents` query (spec: `include_archived`, `limit` 1–500 default 100, `offset` default 0). */
export const listAgentsQuery = z.object({
  include_archived: booleanQuery.default(false),
  ...pageFields(500, 100),
});

/** `GET /agents/overview` query: paging only (archived agents are always excluded). */
export const overviewQuery = listAgentsQuery.omit({ include_archived: true });

/** AgentResponse (spec "Agent"). */
export const agentResponse = z.object({
  id: z.uuid(),
  account_id: z.uuid(),
  display_name: z.string(),
  api_key_preview: z.string().describe('first 12 characters of the key, then an ellipsis'),
  starting_balance: decimalOutput,
  llm_model: z.string().nullable(),
  framework: z.string().nullable(),
  strategy_tags: z.array(z.string()),
  risk_profile: riskProfileResponse,
  avatar_url: z.string().nullable(),
  color: z.string().nullable(),
  status: z.enum(['active', 'archived']),
  created_at: timestamp,
  updated_at: timestamp,
});

/** `GET /agents` and `/agents/overview` response. */
export const agentListResponse = z.object({ agents: z.array(agentResponse), total: z.number().int() });

/** `POST /agents` and clone response 201. */
export const createdAgentResponse = z.object({
  agent_id: z.uuid(),
  api_key: z.string().describe('the agent key; also readable later via GET /agents/{id}/api-key'),
  api_secret: z
    .string()
    .describe(
      "the key's HMAC signing secret (signed requests, e.g. the Binance API's `secret`); shown only now, POST /agents/{id}/signing-secret replaces it",
    ),
  display_name: z.string(),
  starting_balance: decimalOutput,
});

/** `GET /agents/{id}/api-key` and regenerate response. */
export const agentKeyResponse = z.object({
  agent_id: z.uuid(),
  api_key: z.string(),
  api_key_preview: z.string(),
  api_secret: z
    .string()
    .optional()
    .describe("regenerate only: the new key's HMAC signing secret, shown only in this response"),
  message: z.string(),
});

/** `POST /agents/{id}/signing-secret` response: the new signing secret, shown once. */
export const agentSigningSecretResponse = z.object({
  agent_id: z.uuid(),
  api_key_preview: z.string(),
  api_secret: z.string().describe("the key's new HMAC signing secret; shown only in this response"),
  message: z.string(),
});

/** The wire form of an agent (one mapping layer: camelCase inside, spec names outside). */
export const agentOut = (a: AgentView): z.infer<typeof agentResponse> => ({
  id: a.agentId,
  account_id: a.accountId,
  display_name: a.displayName,
  api_key_preview: a.apiKeyPreview,
  starting_balance: a.startingBalance,
  llm_model: a.llmModel,
  framework: a.framework,
  strategy_tags: a.strategyTags,
  risk_profile: riskProfileOut(a.riskProfile),
  avatar_url: a.avatarUrl,
  color: a.color,
  status: a.status,
  created_at: a.createdAt,
  updated_at: a.updatedAt,
});

/** The wire form of an agent from its write-side state (command responses do not wait on read models). */
export const agentStateOut = (s: AgentState): z.infer<typeof agentResponse> => ({
  id: s.agentId,
  account_id: s.accountId,
  display_name: s.profile.display_name,
  api_key_preview: s.apiKeyPreview,
  starting_balance: s.startingBalance,
  llm_model: s.profile.llm_model,
  framework: s.profile.framework,
  strategy_tags: s.profile.strategy_tags,
  risk_profile: riskProfileOut(s.riskProfile ?? DEFAULT_RISK_PROFILE),
  avatar_url: s.profile.avatar_url,
  color: s.profile.color,
  status: s.status === 'archived' ? 'archived' : 'active',
  created_at: s.createdAt,
  updated_at: s.updatedAt,
});

/** The wire form of a created (or cloned) agent: its id, key, name and starting balance (spec create 201). */
export const createdAgentOut = (created: CreatedAgent): z.infer<typeof createdAgentResponse> => ({
  agent_id: created.agent.agentId,
  api_key: created.apiKey,
  api_secret: created.apiSecret,
  display_name: created.agent.profile.display_name,
  starting_balance: created.agent.startingBalance,
});

/** The use case's input from a `POST /agents` body: only the fields sent (the others keep their defaults). */
export const createAgentInputOf = (b: z.output<typeof createAgentBody>): CreateAgentInput => ({
  displayName: b.display_name,
  ...(b.starting_balance !== undefined ? { startingBalance: b.starting_balance } : {}),
  ...(b.llm_model !== undefined ? { llmModel: b.llm_model } : {}),
  ...(b.framework !== undefined ? { framework: b.framework } : {}),
  ...(b.strategy_tags !== undefined ? { strategyTags: b.strategy_tags } : {}),
  ...(b.risk_profile !== undefined ? { riskProfile: b.risk_profile } : {}),
  ...(b.color !== undefined ? { color: b.color } : {}),
  ...(b.avatar_url !== undefined ? { avatarUrl: b.avatar_url } : {}),
});

/** The use case's changes from a `PUT /agents/{id}` body: only the fields sent (`null` clears a label). */
export const agentChangesOf = (body: z.output<typeof updateAgentBody>): Partial<AgentProfileFields> =>
  Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<AgentProfileFields>;

/** `GET /agents/{id}/api-key`: the agent's full key, with how to use it. */
export const agentKeyOut = (revealed: {
  apiKey: string;
  agent: AgentState;
}): z.infer<typeof agentKeyResponse> => ({
  agent_id: revealed.agent.agentId,
  api_key: revealed.apiKey,
  api_key_preview: revealed.agent.apiKeyPreview,
  message: 'Send it as X-API-Key. Keep it secret; POST /agents/{agent_id}/regenerate-key replaces it.',
});

/** `POST /agents/{id}/regenerate-key`: the new key and its signing secret (shown only now). */
export const regeneratedKeyOut = (created: CreatedAgent): z.infer<typeof agentKeyResponse> => ({
  agent_id: created.agent.agentId,
  api_key: created.apiKey,
  api_key_preview: created.agent.apiKeyPreview,
  api_secret: created.apiSecret,
  message: 'New key issued; the previous key no longer works.',
});

/** `POST /agents/{id}/signing-secret`: the new HMAC signing secret (shown only now). */
export const signingSecretOut = (issued: {
  agent: AgentState;
  apiSecret: string;
}): z.infer<typeof agentSigningSecretResponse> => ({
  agent_id: issued.agent.agentId,
  api_key_preview: issued.agent.apiKeyPreview,
  api_secret: issued.apiSecret,
  message:
    'New signing secret issued (HMAC-SHA256 of signed requests, e.g. the Binance API); it is shown only now.',
});
