import type { Logger } from 'pino';
import type { BattleCommands } from '../../commands/battle';
import { isDomainError } from '../../domain/shared/errors';
import { runningLiveBattles } from '../../queries/battles';
import type { DatabaseHandle } from '../db/database';
import { createLeadership, type Leadership } from '../matching/leader';
import { type LiveParticipant, SNAPSHOT_INTERVAL_MS } from './live';

/** The advisory lock key of the battle snapshot leader (distinct from every other leader's: test/core/leader-lock-keys.unit.test.ts). */
export const BATTLE_SNAPSHOT_LOCK_KEY = 7_208_114_305_551_003n;

/** Options of {@link createBattleSnapshotter}. */
export interface SnapshotterOptions {
  database: DatabaseHandle;
  commands: BattleCommands;
  /** Equity of a participant in its battle now (USDT, 8 places; `participantEquity`). */
  equityOf: (participant: LiveParticipant) => Promise<string>;
  logger: Logger;
  intervalMs?: number;
  now?: () => Date;
}

/** The process that records live battle snapshots (one leader among all processes). */
export interface BattleSnapshotter {
  /** One round: every running live battle is stopped when its duration elapsed, else snapshotted. */
  tick(): Promise<void>;
  /** Its leadership (shown by `/health` and `/metrics`). */
  readonly leadership: Leadership;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Records every participant's equity of every running live battle every 5 s on the battle's stream
 * (`BattleSnapshotRecorded`; spec "Battle": snapshots every 5 seconds while active) and stops a battle whose
 * `duration_minutes` elapsed (`BattleCompleted`, reason `duration_elapsed`). Only the leader does it (the matching
 * engine's advisory-lock leadership, `src/matching/leader.ts`, with its own key; PGlite: always the leader), so
 * several processes never record the same snapshot twice.
 */
export const createBattleSnapshotter = (options: SnapshotterOptions): BattleSnapshotter => {
  const intervalMs = options.intervalMs ?? SNAPSHOT_INTERVAL_MS;
  const now = options.now ?? (() => new Date());
  const leadership: Leadership = createLeadership(options.database, {
    name: 'battle_snapshots',
    key: BATTLE_SNAPSHOT_LOCK_KEY,
    logger: options.logger,
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const meta = { actor: 'system' };

  const tick = async () => {
    const battles = await runningLiveBattles(options.database.db);
    for (const b of battles) {
      try {
        const started = b.started_at ? new Date(b.started_at).getTime() : null;
        if (
          b.duration_minutes !== null &&
          started !== null &&
          now().getTime() >= started + b.duration_minutes * 60_000
        ) {
          await options.commands.expire(b.battle_id, meta);
          continue;
        }
        const battle = await options.commands.load(b.battle_id);
        const participants = [];
        for (const p of battle.state.participants) {
          participants.push({ agentId: p.agentId, equity: await options.equityOf(p) });
        }
        await options.commands.recordSnapshot(b.battle_id, participants, meta);
      } catch (error) {
        // A battle that ended meanwhile is not an error of the snapshotter.
        if (
          isDomainError(error) &&
          (error.code === 'BATTLE_INVALID_STATE' || error.code === 'BATTLE_NOT_FOUND')
        )
          continue;
        options.logger.warn({ err: error, battle_id: b.battle_id }, 'battle snapshot failed');
      }
    }
  };

  const loop = () => {
    timer = setTimeout(() => {
      running = (leadership.isLeader() ? tick() : Promise.resolve())
        .catch((error) => options.logger.warn({ err: error }, 'battle snapshot round failed'))
        .finally(() => {
          running = undefined;
          if (timer) loop();
        });
    }, intervalMs);
    timer.unref();
  };

  return {
    tick,
    leadership,
    async start() {
      await leadership.start();
      loop();
    },
    async stop() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      await leadership.stop();
    },
  };
};
