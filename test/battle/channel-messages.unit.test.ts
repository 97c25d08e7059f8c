import { describe, expect, it } from 'vitest';
import type { BattleEvent } from '../../domain/battle/events';
import { evolveBattle, initialBattleState } from '../../domain/battle/state';
import { DEFAULT_RISK_PROFILE } from '../../domain/shared/risk-profile';
import { battleMessages } from '../../src/http/ws/battle-channel';
import { historicalBattleCreated, historicalBattleStepped } from './fixtures';

const BATTLE = '00000000-0000-4000-8000-0000000000c1';
const AT = '2030-01-01T00:00:00.000Z';

const created = historicalBattleCreated(BATTLE, 'Msgs', AT);
const started: BattleEvent = {
  type: 'BattleStarted',
  data: {
    battle_id: BATTLE,
    started_at: AT,
    participants: [
      { agent_id: 'a', risk_profile: DEFAULT_RISK_PROFILE, wallet_session_id: null, wallet_revision: null },
    ],
    virtual_time: '2022-01-01T00:00:00.000Z',
    data_fingerprint: 'fp',
  },
};

describe('battle channel messages (spec "Battle channel events")', () => {
  const draft = evolveBattle(initialBattleState(), created);
  const active = evolveBattle(draft, started);

  it('announces status changes with the previous status', () => {
    expect(battleMessages(draft, started, AT)).toEqual([
      {
        type: 'battle:status',
        data: {
          battle_id: BATTLE,
          status: 'active',
          previous_status: 'draft',
          event: 'started',
          agent_id: null,
          reason: null,
          timestamp: AT,
        },
      },
    ]);
  });

  it('a historical step is a battle:update at virtual time with equity and ROI', () => {
    const stepped = historicalBattleStepped(BATTLE, 2, { a: ['1000.00000000', '1012.50000000'] });
    expect(battleMessages(active, stepped, AT)).toEqual([
      {
        type: 'battle:update',
        data: {
          battle_id: BATTLE,
          participants: [{ agent_id: 'a', equity: '1012.50000000', roi_pct: '1.25000000' }],
          timestamp: '2022-01-01T02:00:00.000Z',
        },
      },
    ]);
  });

  it('a sandbox fill is a battle:trade; other sandbox events say nothing', () => {
    const fill = {
      type: 'OrderFilled',
      data: {
        symbol: 'BTCUSDT',
        side: 'buy',
        quantity: '0.10000000',
        executed_price: '46000.00000000',
        filled_at: '2022-01-01T01:00:00.000Z',
      },
    };
    const wrapped = {
      type: 'BattleSandboxEventRecorded',
      data: { battle_id: BATTLE, agent_id: 'a', event: fill },
    } as unknown as BattleEvent;
    expect(battleMessages(active, wrapped, AT)).toEqual([
      {
        type: 'battle:trade',
        data: {
          battle_id: BATTLE,
          agent_id: 'a',
          symbol: 'BTCUSDT',
          side: 'buy',
          quantity: '0.10000000',
          price: '46000.00000000',
          timestamp: '2022-01-01T01:00:00.000Z',
        },
      },
    ]);
    const placed = {
      type: 'BattleSandboxEventRecorded',
      data: { battle_id: BATTLE, agent_id: 'a', event: { type: 'OrderPlaced', data: {} } },
    } as unknown as BattleEvent;
    expect(battleMessages(active, placed, AT)).toEqual([]);
  });
});
