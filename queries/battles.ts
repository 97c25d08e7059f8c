import { type Kysely, sql } from 'kysely';
import type { BattleTables } from '../projections/battles';

/** The battle read models (`projections/battles.ts`), typed on any kysely handle of the application database. */
const tables = (db: Kysely<any>): Kysely<BattleTables> => db as Kysely<BattleTables>;

const columns = [
  'battle_id',
  'account_id',
  'name',
  'status',
  'battle_mode',
  sql<string>`starting_balance::text`.as('starting_balance'),
  'duration_minutes',
  'ranking_metric',
  'backtest_config',
  'fee_rate',
  'maker_fee_rate',
  'replay_of',
  'created_at',
  'started_at',
  'ended_at',
  'completion_reason',
  'step',
  'virtual_time',
  'final_rankings',
  'summaries',
] as const;

/** A battle row (numerics as text, times as dates). */
export type BattleRow = NonNullable<Awaited<ReturnType<typeof getBattleRow>>>;

/** One battle's row, or undefined. */
export const getBattleRow = (db: Kysely<any>, battleId: string) =>
  tables(db).selectFrom('battles').select(columns).where('battle_id', '=', battleId).executeTakeFirst();

/** A participant row. */
export type ParticipantRow = Awaited<ReturnType<typeof battleParticipants>>[number];

/** The participants of a battle in the order they joined. */
export const battleParticipants = (db: Kysely<any>, battleId: string) =>
  tables(db)
    .selectFrom('battle_participants')
    .select(['agent_id', 'agent_name', 'paused', 'wallet_session_id', 'joined_at'])
    .where('battle_id', '=', battleId)
    .orderBy('seq')
    .execute();

/** Statuses a list may filter by. */
export type BattleStatusFilter = 'draft' | 'pending' | 'active' | 'paused' | 'completed' | 'cancelled';

/**
 * The account's battles (ARCHITECTURE §14b: query `status`, `limit`, `offset`; response `battles`, `total`),
 * newest first (ties by id), each with its participants.
 */
export const listBattles = async (
  db: Kysely<any>,
  accountId: string,
  options: { status?: BattleStatusFilter; limit: number; offset: number },
) => {
  let q = tables(db).selectFrom('battles').where('account_id', '=', accountId);
  if (options.status) q = q.where('status', '=', options.status);
  const total = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q
    .select(columns)
    .orderBy('created_at', 'desc')
    .orderBy('battle_id')
    .limit(options.limit)
    .offset(options.offset)
    .execute();
  const ids = rows.map((r) => r.battle_id);
  const participants = ids.length
    ? await tables(db)
        .selectFrom('battle_participants')
        .select(['battle_id', 'agent_id', 'agent_name', 'paused', 'wallet_session_id', 'joined_at'])
        .where('battle_id', 'in', ids)
        .orderBy('battle_id')
        .orderBy('seq')
        .execute()
    : [];
  const byBattle = new Map<string, ParticipantRow[]>();
  for (const p of participants) {
    const list = byBattle.get(p.battle_id) ?? [];
    list.push(p);
    byBattle.set(p.battle_id, list);
  }
  return {
    battles: rows.map((row) => ({ row, participants: byBattle.get(row.battle_id) ?? [] })),
    total: Number(total.n),
  };
};

/** The equity snapshots of a battle, oldest first (`GET /battles/{id}/replay`). */
export const battleSnapshots = (db: Kysely<any>, battleId: string) =>
  tables(db)
    .selectFrom('battle_snapshots')
    .select(['time', 'participants'])
    .where('battle_id', '=', battleId)
    .orderBy('time')
    .execute();

/** Live battles that are running (the snapshot leader's work list). */
export const runningLiveBattles = (db: Kysely<any>) =>
  tables(db)
    .selectFrom('battles')
    .select(['battle_id', 'started_at', 'duration_minutes'])
    .where('battle_mode', '=', 'live')
    .where('status', 'in', ['active', 'paused'])
    .execute();

/** The participants (`p`) of the battles (`b`), live or historical, that are running (active or paused), to select from. */
const participantsOfRunningBattles = (db: Kysely<any>) =>
  tables(db)
    .selectFrom('battle_participants as p')
    .innerJoin('battles as b', 'b.battle_id', 'p.battle_id')
    .where('b.status', 'in', ['active', 'paused']);

/** The participants (`p`) of the live battles (`b`) that are running (active or paused), to select from. */
const participantsOfRunningLiveBattles = (db: Kysely<any>) =>
  participantsOfRunningBattles(db).where('b.battle_mode', '=', 'live');

/**
 * The running (active or paused) battles, live or historical, an agent takes part in, with their mode: what refuses
 * its deletion (docs/battles.md "Participants").
 */
export const runningBattlesWithAgent = (db: Kysely<any>, agentId: string) =>
  participantsOfRunningBattles(db)
    .where('p.agent_id', '=', agentId)
    .select(['b.battle_id', 'b.battle_mode'])
    .orderBy('b.battle_id')
    .execute();

/** Running battles an agent takes part in, and whether it is paused there (the live order guard). */
export const runningBattlesOfAgent = (db: Kysely<any>, agentId: string) =>
  participantsOfRunningLiveBattles(db)
    .select(['b.battle_id', 'p.paused'])
    .where('p.agent_id', '=', agentId)
    .execute();

/** Agents paused in a running live battle (the order guard's starting set). */
export const pausedLiveParticipants = (db: Kysely<any>) =>
  participantsOfRunningLiveBattles(db)
    .select(['p.agent_id', 'b.battle_id'])
    .where('p.paused', '=', true)
    .execute();
