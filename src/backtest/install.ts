import {
  type AgentStanding,
  type BacktestCommandDeps,
  type BacktestCommands,
  createBacktestCommands,
} from '../../commands/backtest';
import type { BattleStepper } from '../../commands/battle';
import { DomainError } from '../../domain/shared/errors';
import { getTradingProfile } from '../../queries/trading-profile';
import { installed, type Services } from '../services';
import { backtestMarketSource } from './market-source';
import { createPooledStepper } from './stepper';

declare module '../services' {
  interface Services {
    /** Backtests: sessions on a virtual clock (ARCHITECTURE §9; `src/backtest`, `commands/backtest.ts`). */
    backtest?: BacktestServices;
  }
}

/** The backtest capability's member of {@link Services}. */
export interface BacktestServices {
  commands: BacktestCommands;
  /** Historical battles' steps on the same worker threads (none when `BACKTEST_THREADS=0`). */
  battleStepper?: BattleStepper;
  /**
   * Starts the worker threads a session will use — the stepping threads, and `warmResults` of
   * {@link installBacktest} — without waiting for them: called when a session is created, so its first batch and
   * its results do not wait for a thread to start. Nothing when `BACKTEST_THREADS=0`.
   */
  warm(): void;
  /** Stops the stepping worker threads (none when `BACKTEST_THREADS=0` or before the first batch). */
  stop(): Promise<void>;
}

/**
 * An agent's status and its account's as live trading decides its orders with them (`wallets.profile`: the read
 * models, or the agent's own stream while they lag behind a change made here, so an archive applies at once);
 * undefined when the agent no longer exists or is not the account's. Without trading, from the read models.
 */
const agentStanding = async (
  services: Services,
  accountId: string,
  agentId: string,
): Promise<AgentStanding | undefined> => {
  const profile = services.trading
    ? await services.trading.wallets.profile({ accountId, agentId }).catch((error: unknown) => {
        if (error instanceof DomainError && error.code === 'ACCOUNT_NOT_FOUND') return undefined;
        throw error;
      })
    : await getTradingProfile(services.database.db, { accountId, agentId });
  return profile?.ownerType === 'agent'
    ? { status: profile.status, accountStatus: profile.accountStatus }
    : undefined;
};

/**
 * What the commands of backtests and of historical battles are both wired with: the event store, the market
 * services' candle index (`market-source.ts`, built on first use with `BACKTEST_CHUNK_CANDLES`; `undefined` while
 * the runtime has no market services), and the trading capability's taker and maker fee rates (decimal strings;
 * 0.1% each without trading), fixed per session or battle at creation; and the standing of an agent (its status and
 * its account's, as live trading reads them) asked before a sandbox's new trading request.
 */
export const sessionWiring = (
  services: Services,
): Pick<BacktestCommandDeps, 'store' | 'market' | 'feeRate' | 'makerFeeRate' | 'agentStanding'> => {
  let source: ReturnType<typeof backtestMarketSource> | undefined;
  return {
    store: services.eventStore,
    agentStanding: (accountId, agentId) => agentStanding(services, accountId, agentId),
    market: () => {
      if (!services.market) return undefined;
      source ??= backtestMarketSource(services.market, {
        chunkCandles: services.config.BACKTEST_CHUNK_CANDLES,
      });
      return source;
    },
    feeRate: services.trading?.feeRate.toFixed() ?? '0.001',
    makerFeeRate: services.trading?.makerFeeRate.toFixed() ?? '0.001',
  };
};

/**
 * Wires backtests into the runtime (ARCHITECTURE §9): the command handler over the event store, the agents' risk
 * profiles from the read models, the market services' candle index, and the trading capability's fee rate
 * (`FEE_RATE`, default 0.1%), fixed per session at creation. Batches are stepped on `BACKTEST_THREADS` worker
 * threads (`stepper.ts`).
 */
export const installBacktest = (
  services: Services,
  options: {
    /** Starts the thread computing the sessions' results (`metrics-pool.ts`), when this process computes them. */
    warmResults?: () => void;
  } = {},
): BacktestServices => {
  const threads = services.config.BACKTEST_THREADS;
  const stepper =
    threads > 0
      ? createPooledStepper({ threads, stepping: services.config.BACKTEST_STEPPING, log: services.logger })
      : undefined;
  const commands = createBacktestCommands({
    ...(stepper ? { stepper } : {}),
    ...sessionWiring(services),
    agentProfile: async (accountId, agentId) => {
      const profile = await getTradingProfile(services.database.db, { accountId, agentId });
      if (profile?.ownerType !== 'agent') return undefined;
      // The agent wallet's fill model is carried into the session (a wallet that never traded opens `realistic`).
      const wallet = await services.trading?.wallets.load(agentId);
      return {
        agentId,
        accountId,
        status: profile.status,
        riskProfile: profile.riskProfile,
        fillModel: wallet?.state.opened
          ? wallet.state.fillModel
          : (services.config.FILL_MODEL ?? 'realistic'),
        participationPct: wallet?.state.opened ? wallet.state.participationPct : undefined,
      };
    },
  });
  const backtest: BacktestServices = {
    commands,
    ...(stepper ? { battleStepper: stepper.battles } : {}),
    warm: () => {
      stepper?.warm();
      options.warmResults?.();
    },
    stop: async () => stepper?.close(),
  };
  services.backtest = backtest;
  return backtest;
};

/** The backtest services, or an error when the runtime was built without them. */
export const backtest = (services: Services): BacktestServices => installed(services, 'backtest');
