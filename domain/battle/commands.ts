import type { BacktestCatalog } from '../backtest/commands';
import type { SessionMarket } from '../backtest/market';
import type { FillModelName } from '../fill-model/model';
import type { BaseContext } from '../shared/decider';
import type { RiskProfile } from '../shared/risk-profile';
import type { OrderRequest } from '../wallet/commands';
import type { BattleRequest } from './config';
import type { PerformanceSummaryEntry, RankingEntry, ReplayFill } from './events';

/** An agent as the accounts capability knows it when a command names it. */
export interface AgentInfo {
  agentId: string;
  accountId: string;
  name: string;
  status: 'active' | 'suspended' | 'archived';
  riskProfile: RiskProfile;
  /** The agent wallet's fill model (a wallet that never traded: `realistic`). */
  fillModel?: FillModelName | undefined;
  /** The agent wallet's participation share, % (a wallet that never traded: 10). */
  participationPct?: number | undefined;
}

/** What a participant starts with: the copied risk profile and, live, the wallet session begun for the battle. */
export interface ParticipantStart {
  agentId: string;
  riskProfile: RiskProfile;
  /** Historical: the agent wallet's fill model, copied into its sandbox (absent: `instant`). */
  fillModel?: FillModelName | undefined;
  /** Historical: the agent wallet's participation share (%), copied into its sandbox (absent: 10). */
  participationPct?: number | undefined;
  walletSessionId: string | null;
  walletRevision: number | null;
}

/** Commands of the battle aggregate (spec "Battle endpoints"). */
export type BattleCommand =
  /** `POST /battles`, or the new draft of `POST /battles/{id}/replay` (with its participants). */
  | {
      type: 'CreateBattle';
      data: {
        battleId: string;
        accountId: string;
        request: BattleRequest;
        feeRate: string;
        /** The maker fee rate in effect (absent: `feeRate`). */
        makerFeeRate?: string | undefined;
        replayOf: string | null;
        /** A historical replay: the original's fill settings by agent (`BattleCreated.replay_fills`). */
        replayFills?: ReplayFill[] | undefined;
        participants: AgentInfo[];
      };
    }
  /** `PUT /battles/{id}`: the full configuration after merging the client's fields onto the current one. */
  | { type: 'UpdateBattle'; data: { request: BattleRequest } }
  | { type: 'AddParticipant'; data: { agent: AgentInfo } }
  | { type: 'RemoveParticipant'; data: { agentId: string } }
  /** `POST /battles/{id}/start`; historical: the candles are in the context's `market`. */
  | { type: 'StartBattle'; data: { participants: ParticipantStart[]; fingerprint: string | null } }
  | { type: 'PauseAgent'; data: { agentId: string } }
  | { type: 'ResumeAgent'; data: { agentId: string } }
  /** Live: the snapshot leader valued every participant (every 5 s). */
  | { type: 'RecordSnapshot'; data: { participants: { agentId: string; equity: string }[] } }
  /**
   * `POST /battles/{id}/stop` or the end of `duration_minutes`. Live: the handler ranks (it reads the wallets and
   * live prices) and passes the rankings; historical: the decider ranks from the sandboxes at virtual time.
   */
  | {
      type: 'StopBattle';
      data: {
        reason: 'stopped' | 'duration_elapsed';
        live?: { rankings: RankingEntry[]; summaries: PerformanceSummaryEntry[] };
      };
    }
  /** `DELETE /battles/{id}`: delete a draft, cancel an active or paused battle. */
  | { type: 'DeleteBattle'; data: Record<string, never> }
  /** Historical: `POST /battles/{id}/step` (1) and `/step/batch`. */
  | { type: 'StepBattle'; data: { steps: number } }
  /** Historical: `POST /battles/{id}/trade/order`. */
  | { type: 'PlaceBattleOrder'; data: { agentId: string; order: OrderRequest } }
  /** Historical: `DELETE /battles/{id}/trade/order/{order_id}` (the participant whose sandbox holds it open). */
  | { type: 'CancelBattleOrder'; data: { orderId: string } };

/**
 * The context of a battle command (ARCHITECTURE §4): `now` is the wall clock; a historical battle's virtual clock
 * is its own state. `newId` must be deterministic for replays. `catalog` validates a historical configuration;
 * `market` (the battle's candles) is needed by a historical start, step, order and stop.
 */
export interface BattleContext extends BaseContext {
  catalog?: BacktestCatalog;
  market?: SessionMarket;
}
