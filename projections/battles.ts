import { type Kysely, sql } from 'kysely';
import {
  BATTLE_EVENT_TYPES,
  type BattleEvent,
  battleOf,
  type PerformanceSummaryEntry,
  type RankingEntry,
} from '../domain/battle/events';
import type { RecordedEvent } from '../ports/event-store';
import type { Json, NullableTimestamp, Timestamp } from './columns';
import { declareTables, type TableDefinitions } from './ddl';
import { deleteRowsOf } from './entity-rows';
import type { Projection } from './projection';

/** Row of `battles`: one per battle (drafts deleted by `DELETE` are removed). */
export interface BattlesTable {
  battle_id: string;
  account_id: string;
  name: string;
  status: string;
  battle_mode: string;
  starting_balance: string;
  duration_minutes: number | null;
  ranking_metric: string;
  backtest_config: Json<Record<string, unknown> | null>;
  /** The taker fee rate fixed at creation (`BattleCreated.fee_rate`). */
  fee_rate: string;
  /** The maker fee rate fixed at creation (`BattleCreated.maker_fee_rate`; battles created before it: the taker rate). */
  maker_fee_rate: string;
  replay_of: string | null;
  created_at: Timestamp;
  started_at: NullableTimestamp;
  ended_at: NullableTimestamp;
  completion_reason: string | null;
  /** Historical: steps taken and virtual time. */
  step: number;
  virtual_time: NullableTimestamp;
  final_rankings: Json<RankingEntry[] | null>;
  summaries: Json<PerformanceSummaryEntry[] | null>;
  updated_at: Timestamp;
}

/** Row of `battle_participants`: one per agent of a battle, in the order they joined (`seq`). */
export interface BattleParticipantsTable {
  battle_id: string;
  agent_id: string;
  agent_name: string;
  seq: number;
  paused: boolean;
  wallet_session_id: string | null;
  joined_at: Timestamp;
}

/**
 * Row of `battle_snapshots`: every participant's equity at `time` — live: every 5 s (`BattleSnapshotRecorded`),
 * historical: at every step of the virtual clock (step 0 = the start).
 */
export interface BattleSnapshotsTable {
  battle_id: string;
  time: Timestamp;
  participants: Json<{ agent_id: string; equity: string }[]>;
}

/** The read models of battles. */
export interface BattleTables {
  battles: BattlesTable;
  battle_participants: BattleParticipantsTable;
  battle_snapshots: BattleSnapshotsTable;
}

type DB = Kysely<BattleTables>;

/** The DDL of its read-model tables. */
const BATTLES_TABLES: TableDefinitions = {
  battles: {
    columns: {
      battle_id: 'text primary key',
      account_id: 'text not null',
      name: 'text not null',
      status: 'text not null',
      battle_mode: 'text not null',
      starting_balance: 'numeric(38, 8) not null',
      duration_minutes: 'integer',
      ranking_metric: 'text not null',
      backtest_config: 'jsonb',
      fee_rate: 'text not null',
      maker_fee_rate: 'text not null',
      replay_of: 'text',
      created_at: 'timestamptz not null',
      started_at: 'timestamptz',
      ended_at: 'timestamptz',
      completion_reason: 'text',
      step: 'integer not null',
      virtual_time: 'timestamptz',
      final_rankings: 'jsonb',
      summaries: 'jsonb',
      updated_at: 'timestamptz not null',
    },
    indexes: {
      battles_account: ['account_id', 'created_at'],
      battles_status: ['status', 'battle_mode'],
    },
  },
  battle_participants: {
    columns: {
      battle_id: 'text not null',
      agent_id: 'text not null',
      agent_name: 'text not null',
      seq: 'integer not null',
      paused: 'boolean not null',
      wallet_session_id: 'text',
      joined_at: 'timestamptz not null',
    },
    primaryKey: ['battle_id', 'agent_id'],
    indexes: {
      battle_participants_agent: ['agent_id'],
    },
  },
  battle_snapshots: {
    columns: {
      battle_id: 'text not null',
      time: 'timestamptz not null',
      participants: 'jsonb not null',
    },
    primaryKey: ['battle_id', 'time'],
  },
};

/**
 * `battles`, `battle_participants`, `battle_snapshots` (ARCHITECTURE §6, §10): every battle with its configuration,
 * status, progress and final rankings; its participants with their pause flag; the equity snapshots served by
 * `GET /battles/{id}/replay`. Deterministic (event data only), so `projections rebuild --verify` reproduces it.
 */
export const battlesProjection: Projection = {
  name: 'battles',
  // 2: `battles.maker_fee_rate` (`GET /battles` shows both fee rates).
  version: 2,
  ...declareTables(BATTLES_TABLES),
  eventTypes: BATTLE_EVENT_TYPES.filter((t) => t !== 'BattleSandboxEventRecorded'),
  async apply(db: DB, events: readonly RecordedEvent[]) {
    for (const e of events) {
      const id = battleOf(e.streamId);
      if (!id) continue;
      const event = { type: e.type, data: e.data } as BattleEvent;
      const at = e.metadata.occurred_at;
      const touch = (values: Record<string, unknown>) =>
        db
          .updateTable('battles')
          .set({ ...values, updated_at: at } as never)
          .where('battle_id', '=', id)
          .execute();
      switch (event.type) {
        case 'BattleCreated': {
          const d = event.data;
          await db
            .insertInto('battles')
            .values({
              battle_id: id,
              account_id: d.account_id,
              name: d.name,
              status: 'draft',
              battle_mode: d.battle_mode,
              starting_balance: d.starting_balance,
              duration_minutes: d.duration_minutes,
              ranking_metric: d.ranking_metric,
              backtest_config: JSON.stringify(d.backtest_config),
              fee_rate: d.fee_rate,
              maker_fee_rate: d.maker_fee_rate ?? d.fee_rate,
              replay_of: d.replay_of,
              created_at: d.created_at,
              started_at: null,
              ended_at: null,
              completion_reason: null,
              step: 0,
              virtual_time: d.backtest_config?.start_time ?? null,
              final_rankings: JSON.stringify(null),
              summaries: JSON.stringify(null),
              updated_at: d.created_at,
            })
            .execute();
          break;
        }
        case 'BattleConfigUpdated': {
          const d = event.data;
          await touch({
            name: d.name,
            battle_mode: d.battle_mode,
            starting_balance: d.starting_balance,
            duration_minutes: d.duration_minutes,
            ranking_metric: d.ranking_metric,
            backtest_config: JSON.stringify(d.backtest_config),
            virtual_time: d.backtest_config?.start_time ?? null,
          });
          break;
        }
        case 'BattleParticipantAdded':
          await db
            .insertInto('battle_participants')
            .values({
              battle_id: id,
              agent_id: event.data.agent_id,
              agent_name: event.data.agent_name,
              seq: e.revision,
              paused: false,
              wallet_session_id: null,
              joined_at: event.data.added_at,
            })
            .execute();
          break;
        case 'BattleParticipantRemoved':
          await db
            .deleteFrom('battle_participants')
            .where('battle_id', '=', id)
            .where('agent_id', '=', event.data.agent_id)
            .execute();
          break;
        case 'BattleStarted': {
          const d = event.data;
          await touch({ status: 'active', started_at: d.started_at, virtual_time: d.virtual_time, step: 0 });
          for (const p of d.participants) {
            await db
              .updateTable('battle_participants')
              .set({ wallet_session_id: p.wallet_session_id })
              .where('battle_id', '=', id)
              .where('agent_id', '=', p.agent_id)
              .execute();
          }
          if (d.virtual_time !== null) {
            const row = await db
              .selectFrom('battles')
              .select(sql<string>`starting_balance::text`.as('sb'))
              .where('battle_id', '=', id)
              .executeTakeFirstOrThrow();
            await db
              .insertInto('battle_snapshots')
              .values({
                battle_id: id,
                time: d.virtual_time,
                participants: JSON.stringify(
                  d.participants.map((p) => ({ agent_id: p.agent_id, equity: row.sb })),
                ),
              })
              .execute();
          }
          break;
        }
        case 'BattleAgentPaused':
        case 'BattleAgentResumed':
          await touch({ status: event.data.status });
          await db
            .updateTable('battle_participants')
            .set({ paused: event.type === 'BattleAgentPaused' })
            .where('battle_id', '=', id)
            .where('agent_id', '=', event.data.agent_id)
            .execute();
          break;
        case 'BattleSnapshotRecorded':
          await db
            .insertInto('battle_snapshots')
            .values({
              battle_id: id,
              time: event.data.timestamp,
              participants: JSON.stringify(event.data.participants),
            })
            .onConflict((oc) => oc.columns(['battle_id', 'time']).doNothing())
            .execute();
          break;
        case 'BattleStepped': {
          const d = event.data;
          const from = Date.parse(d.from_time);
          const n = d.to_step - d.from_step;
          const interval = n > 0 ? (Date.parse(d.to_time) - from) / n : 0;
          const agents = Object.keys(d.equity);
          const rows = Array.from({ length: n }, (_, i) => ({
            battle_id: id,
            time: new Date(from + (i + 1) * interval).toISOString(),
            participants: JSON.stringify(agents.map((a) => ({ agent_id: a, equity: d.equity[a]![i]! }))),
          }));
          for (let i = 0; i < rows.length; i += 1000) {
            await db
              .insertInto('battle_snapshots')
              .values(rows.slice(i, i + 1000))
              .execute();
          }
          await touch({ step: d.to_step, virtual_time: d.to_time });
          break;
        }
        case 'BattleCompleted': {
          const d = event.data;
          await touch({
            status: 'completed',
            ended_at: d.completed_at,
            completion_reason: d.reason,
            final_rankings: JSON.stringify(d.final_rankings),
            summaries: JSON.stringify(d.summaries),
          });
          await db
            .updateTable('battle_participants')
            .set({ paused: false })
            .where('battle_id', '=', id)
            .execute();
          break;
        }
        case 'BattleCancelled':
          await touch({
            status: 'cancelled',
            ended_at: event.data.cancelled_at,
            completion_reason: 'cancelled',
          });
          break;
        case 'BattleDeleted':
          await deleteRowsOf(db, ['battles', 'battle_participants', 'battle_snapshots'], 'battle_id', id);
          break;
        default:
          break;
      }
    }
  },
};
