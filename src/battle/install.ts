import { type BattleCommands, createBattleCommands, type LiveBattlePort } from '../../commands/battle';
import { getAgent } from '../../queries/agents';
import { sessionWiring } from '../backtest/install';
import { exclusively } from '../db/exclusive';
import { installed, type Services } from '../services';
import { trading } from '../trading/install';
import { liveBattlePort, participantEquity } from './live';
import { pausedAgentsGuard } from './paused-agents';
import { type BattleSnapshotter, createBattleSnapshotter } from './snapshotter';

declare module '../services' {
  interface Services {
    /** Battles: live and historical competitions between agents (ARCHITECTURE §10; `src/battle`, `commands/battle.ts`). */
    battle?: BattleServices;
  }
}

/** The battle capability's member of {@link Services}. */
export interface BattleServices {
  commands: BattleCommands;
  /** Live mode over trading: fresh wallet sessions at start, rankings now. */
  live: LiveBattlePort;
  /** Live snapshots and durations (runs where projections run; tests call `tick()`). */
  snapshotter: BattleSnapshotter;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Wires battles into the runtime (ARCHITECTURE §10): the command handler over the event store, the agents from the
 * read models, the market's candle index for historical battles (as backtests), the trading capability's wallet
 * commands for live sessions and rankings, the order guard of paused agents, and — with `snapshots` — the snapshot
 * leader (every 5 s).
 */
export const installBattle = (services: Services, options: { snapshots: boolean }): BattleServices => {
  const live = liveBattlePort(services);
  // Historical battles' steps go to the backtest threads too (issue 24 item 4), when backtests run on threads.
  const stepper = services.backtest?.battleStepper;
  const commands = createBattleCommands({
    ...(stepper ? { stepper } : {}),
    ...sessionWiring(services),
    agentInfo: async (accountId, agentId) => {
      const agent = await getAgent(services.database.db, agentId).catch(() => undefined);
      if (!agent || agent.accountId !== accountId) return undefined;
      return {
        agentId,
        accountId,
        name: agent.displayName,
        status: agent.status === 'archived' ? 'archived' : 'active',
        riskProfile: agent.riskProfile,
        // Carried into a historical battle's sandbox (a wallet that never traded opens `realistic`).
        ...(await services.trading?.wallets
          .load(agentId)
          .then((w) =>
            w.state.opened
              ? { fillModel: w.state.fillModel, participationPct: w.state.participationPct }
              : { fillModel: services.config.FILL_MODEL ?? 'realistic' },
          )),
      };
    },
    live,
    exclusive: (names, fn) => exclusively(services.database, names, fn),
    settled: (position) => services.projections.waitFor(position, services.config.READ_MODEL_WAIT_MS),
  });
  const paused = pausedAgentsGuard(services);
  trading(services).orderGuards.push(paused.guard);
  const snapshotter = createBattleSnapshotter({
    database: services.database,
    commands,
    equityOf: (participant) => participantEquity(services, participant),
    logger: services.logger,
  });
  const battle: BattleServices = {
    commands,
    live,
    snapshotter,
    async start() {
      await paused.load();
      if (options.snapshots) {
        services.leaderships.push(snapshotter.leadership);
        await snapshotter.start();
      }
    },
    async stop() {
      if (options.snapshots) await snapshotter.stop();
    },
  };
  services.battle = battle;
  return battle;
};

/** The battle services, or an error when the runtime was built without them. */
export const battle = (services: Services): BattleServices => installed(services, 'battle');
