import { describe, expect, it } from 'vitest';
import type { BattleEvent, RankingEntry } from '../../domain/battle/events';
import { evolveBattle, initialBattleState } from '../../domain/battle/state';
import { battleMessages } from '../../src/http/ws/battle-channel';
import { historicalBattleCreated, historicalBattleStepped, RANKING_FIELDS } from './fixtures';

/**
 * Regressions found by the battles audit, `battle` channel: a historical `battle:update` lists the participants
 * in the order they joined (the step event's equity object comes back from the database in key order), and a
 * completion's `final_rankings` keep the documented field order.
 */
const BATTLE = '00000000-0000-4000-8000-0000000000c2';
const AT = '2030-01-01T00:00:00.000Z';

const events: BattleEvent[] = [
  historicalBattleCreated(BATTLE, 'Order', AT),
  ...['zz', 'aa', 'mm'].map(
    (id): BattleEvent => ({
      type: 'BattleParticipantAdded',
      data: { battle_id: BATTLE, agent_id: id, agent_name: id, added_at: AT },
    }),
  ),
];
const state = events.reduce(evolveBattle, initialBattleState());

describe('battle channel messages (audit regressions)', () => {
  it('a historical battle:update lists the participants in join order', () => {
    const stepped = historicalBattleStepped(BATTLE, 1, {
      // Key order as PostgreSQL's jsonb returns it (by length, then bytes), not the join order.
      aa: ['1001.00000000'],
      mm: ['1002.00000000'],
      zz: ['1003.00000000'],
    });
    const [m] = battleMessages(state, stepped, AT);
    expect((m!.data['participants'] as { agent_id: string }[]).map((p) => p.agent_id)).toEqual([
      'zz',
      'aa',
      'mm',
    ]);
  });

  it('final_rankings of a completion keep the documented field order', () => {
    const stored = {
      rank: 1,
      equity: '1000.00000000',
      roi_pct: '0.00000000',
      agent_id: 'zz',
      win_rate: null,
      total_pnl: '0.00000000',
      agent_name: 'zz',
      trade_count: 0,
      sharpe_ratio: null,
      profit_factor: null,
    } as RankingEntry;
    const completed: BattleEvent = {
      type: 'BattleCompleted',
      data: {
        battle_id: BATTLE,
        reason: 'stopped',
        completed_at: AT,
        virtual_time: null,
        final_rankings: [stored],
        summaries: [],
      },
    };
    const [m] = battleMessages(state, completed, AT);
    expect(Object.keys((m!.data['final_rankings'] as RankingEntry[])[0]!)).toEqual(RANKING_FIELDS);
  });
});
