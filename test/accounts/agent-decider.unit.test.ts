import { describe, expect, it } from 'vitest';
import type { AgentCommand, CreateAgentData } from '../../domain/agent/commands';
import { agentDecider } from '../../domain/agent/decide';
import type { AgentEvent } from '../../domain/agent/events';
import type { BaseContext } from '../../domain/shared/decider';
import { agentCreatedWithDefaults } from '../support/agent-events';
import { deciderSpec } from '../support/decider-spec';

const now = new Date('2025-03-04T05:06:07.000Z');
const at = now.toISOString();
let ids = 0;
const ctx: BaseContext = { now, newId: () => `session-${++ids}` };
const OWNER = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const OTHER = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const AGENT = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const key = { hash: 'hash-1', preview: 'ak_live_1234...', ciphertext: 'v1:iv:ct:tag' };
const spec = deciderSpec(agentDecider);

const create = (over: Partial<CreateAgentData> = {}): AgentCommand => ({
  type: 'CreateAgent',
  data: {
    agentId: AGENT,
    accountId: OWNER,
    profile: { display_name: 'Bot' },
    startingBalance: undefined,
    riskProfile: undefined,
    key,
    clonedFrom: null,
    ...over,
  },
});

const created: AgentEvent = {
  type: 'AgentCreated',
  data: agentCreatedWithDefaults({
    agent_id: AGENT,
    account_id: OWNER,
    display_name: 'Bot',
    api_key_hash: 'hash-1',
    api_key_preview: 'ak_live_1234...',
    api_key_ciphertext: 'v1:iv:ct:tag',
    session_id: 'session-1',
    created_at: at,
  }),
};

describe('agent decider', () => {
  it('creates with defaults (balance 10000, risk 25/20/50/50, no labels) and a session id from the context', () => {
    ids = 0;
    spec.given([]).when(create(), ctx).thenEmits([created]);
  });

  it('creates with every optional field, normalising labels', () => {
    spec
      .given([])
      .when(
        create({
          profile: {
            display_name: ' Momentum ',
            llm_model: ' gpt-x ',
            framework: '',
            strategy_tags: ['trend', ' trend', 'mean-rev'],
            color: '#a1b2c3',
            avatar_url: 'https://example.com/a.png',
          },
          startingBalance: '500',
          riskProfile: { max_open_orders: 7 },
        }),
        ctx,
      )
      .thenAssert(([e]) => {
        if (e?.type !== 'AgentCreated') throw new Error('expected AgentCreated');
        expect(e.data).toMatchObject({
          display_name: 'Momentum',
          llm_model: 'gpt-x',
          framework: null,
          strategy_tags: ['trend', 'mean-rev'],
          color: '#a1b2c3',
          avatar_url: 'https://example.com/a.png',
          starting_balance: '500.00000000',
          risk_profile: {
            max_position_size_pct: 25,
            daily_loss_limit_pct: 20,
            max_open_orders: 7,
            max_order_size_pct: 50,
          },
        });
      });
  });

  it.each([
    ['empty name', { profile: { display_name: ' ' } }],
    ['101-character name', { profile: { display_name: 'n'.repeat(101) } }],
    ['bad colour', { profile: { display_name: 'x', color: 'red' } }],
    ['short colour', { profile: { display_name: 'x', color: '#abc' } }],
    [
      '21 tags',
      { profile: { display_name: 'x', strategy_tags: Array.from({ length: 21 }, (_, i) => `t${i}`) } },
    ],
    ['empty tag', { profile: { display_name: 'x', strategy_tags: [''] } }],
    ['line break in llm_model', { profile: { display_name: 'x', llm_model: 'a\nb' } }],
    ['tab in framework', { profile: { display_name: 'x', framework: 'a\tb' } }],
    ['terminal escape in a tag', { profile: { display_name: 'x', strategy_tags: ['ok', '\u001b[31mred'] } }],
    ['risk out of bounds', { riskProfile: { max_position_size_pct: 0 } }],
    ['zero balance', { startingBalance: '0.00' }],
  ])('refuses %s with VALIDATION_ERROR', (_n, over) => {
    spec
      .given([])
      .when(create(over as Partial<CreateAgentData>), ctx)
      .thenThrows('VALIDATION_ERROR');
  });

  it('refuses commands on an unknown agent and on another account’s agent alike (PERMISSION_DENIED)', () => {
    spec
      .given([])
      .when({ type: 'ArchiveAgent', data: { accountId: OWNER } }, ctx)
      .thenThrows('PERMISSION_DENIED');
    for (const command of [
      { type: 'ArchiveAgent', data: { accountId: OTHER } },
      { type: 'ResetAgent', data: { accountId: OTHER } },
      { type: 'UpdateAgentProfile', data: { accountId: OTHER, changes: { display_name: 'x' } } },
      { type: 'UpdateAgentRiskProfile', data: { accountId: OTHER, riskProfile: { max_open_orders: 3 } } },
      { type: 'RegenerateAgentKey', data: { accountId: OTHER, key } },
    ] as AgentCommand[]) {
      spec.given([created]).when(command, ctx).thenThrows('PERMISSION_DENIED');
    }
  });

  it('updates only the supplied fields that change; nothing when none does', () => {
    spec
      .given([created])
      .when(
        {
          type: 'UpdateAgentProfile',
          data: { accountId: OWNER, changes: { display_name: 'Bot', color: '#000000' } },
        },
        ctx,
      )
      .thenEmits([
        {
          type: 'AgentProfileUpdated',
          data: { agent_id: AGENT, changes: { color: '#000000' }, updated_at: at },
        },
      ]);
    spec
      .given([created])
      .when({ type: 'UpdateAgentProfile', data: { accountId: OWNER, changes: { display_name: 'Bot' } } }, ctx)
      .thenEmits([]);
    spec
      .given([created])
      .when(
        { type: 'UpdateAgentProfile', data: { accountId: OWNER, changes: { strategy_tags: ['a', 'b'] } } },
        ctx,
      )
      .thenAssert((_e, state) => expect(state.profile.strategy_tags).toEqual(['a', 'b']));
  });

  it('replaces the risk profile', () => {
    spec
      .given([created])
      .when(
        {
          type: 'UpdateAgentRiskProfile',
          data: {
            accountId: OWNER,
            riskProfile: { max_position_size_pct: 100, daily_loss_limit_pct: 1, max_open_orders: 1 },
          },
        },
        ctx,
      )
      .thenEmits([
        {
          type: 'AgentRiskProfileUpdated',
          data: {
            agent_id: AGENT,
            risk_profile: {
              max_position_size_pct: 100,
              daily_loss_limit_pct: 1,
              max_open_orders: 1,
              max_order_size_pct: 50,
            },
            updated_at: at,
          },
        },
      ]);
  });

  it('regenerates the key naming the replaced hash', () => {
    const next = { hash: 'hash-2', preview: 'ak_live_5678...', ciphertext: 'v1:b' };
    spec
      .given([created])
      .when({ type: 'RegenerateAgentKey', data: { accountId: OWNER, key: next } }, ctx)
      .thenEmits([
        {
          type: 'AgentKeyRegenerated',
          data: {
            agent_id: AGENT,
            api_key_hash: 'hash-2',
            api_key_preview: 'ak_live_5678...',
            api_key_ciphertext: 'v1:b',
            previous_key_hash: 'hash-1',
            regenerated_at: at,
          },
        },
      ]);
  });

  it('archives once, and reset brings an archived agent back to active with a new session', () => {
    const archived: AgentEvent = { type: 'AgentArchived', data: { agent_id: AGENT, archived_at: at } };
    spec
      .given([created])
      .when({ type: 'ArchiveAgent', data: { accountId: OWNER } }, ctx)
      .thenEmits([archived]);
    spec
      .given([created, archived])
      .when({ type: 'ArchiveAgent', data: { accountId: OWNER } }, ctx)
      .thenEmits([]);
    ids = 10;
    spec
      .given([created, archived])
      .when({ type: 'ResetAgent', data: { accountId: OWNER } }, ctx)
      .thenAssert((events, state) => {
        expect(events).toEqual([
          {
            type: 'AgentReset',
            data: {
              agent_id: AGENT,
              session_id: 'session-11',
              previous_session_id: 'session-1',
              starting_balance: '10000.00000000',
              reset_at: at,
            },
          },
        ]);
        expect(state.status).toBe('active');
      });
  });
});
