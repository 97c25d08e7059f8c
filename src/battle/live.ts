import type { LiveBattlePort, LoadedBattle } from '../../commands/battle';
import { metricsFillOf, rankParticipants } from '../../domain/battle/rankings';
import type { MetricsFill } from '../../domain/metrics/trades';
import { dec, roundHalfEven8 } from '../../domain/trading/decimal';
import { type WalletResetData, walletStreamId } from '../../domain/wallet/events';
import { walletEquity } from '../../domain/wallet/state';
import { battleSnapshots, runningBattlesOfAgent } from '../../queries/battles';
import type { Services } from '../services';
import { trading } from '../trading/install';

/** Δ between live equity snapshots (spec "Battle": every 5 seconds), ms. */
export const SNAPSHOT_INTERVAL_MS = 5_000;

/**
 * A participant's equity now (ARCHITECTURE §10): cash + locked cash + Σ quantity × the live price (the price
 * cache; a coin without a price counts at its cost basis, as the wallet does), USDT, rounded half to even to 8
 * places.
 */
export const liveEquity = async (services: Services, agentId: string): Promise<string> => {
  const { state } = await trading(services).wallets.load(agentId);
  const prices = services.market?.feed.prices;
  const equity = walletEquity(state, (symbol) => {
    const p = prices?.get(symbol);
    return p ? dec(p.price) : undefined;
  });
  return roundHalfEven8(equity).toFixed(8);
};

/** What the live mode knows of a participant: its agent and where its battle wallet session began. */
export interface LiveParticipant {
  agentId: string;
  walletSessionId: string | null;
  walletRevision: number | null;
}

/**
 * A participant's equity in the battle (ARCHITECTURE §10: only activity inside the battle window counts): while
 * its wallet is still in the session the battle began, the equity now ({@link liveEquity}); once that session
 * ended (the agent or its account was reset during the battle, which starts a new session with a new balance),
 * the equity the battle session ended with (`WalletReset.ending_equity`), so a reset can neither lift nor sink
 * a participant's standing.
 */
export const participantEquity = async (
  services: Services,
  participant: LiveParticipant,
): Promise<string> => {
  const { state } = await trading(services).wallets.load(participant.agentId);
  if (participant.walletSessionId === null || state.session?.id === participant.walletSessionId) {
    return liveEquity(services, participant.agentId);
  }
  const events = await services.eventStore.readStream(walletStreamId(participant.agentId), {
    fromRevision: (participant.walletRevision ?? -1) + 1,
  });
  const ended = events.find(
    (e) =>
      e.type === 'WalletReset' &&
      (e.data as WalletResetData).previous_session_id === participant.walletSessionId,
  );
  if (!ended) return liveEquity(services, participant.agentId);
  return roundHalfEven8(dec((ended.data as WalletResetData).ending_equity)).toFixed(8);
};

/**
 * The fills of a participant inside the battle window (ARCHITECTURE §10): the wallet's `OrderFilled` events
 * after the revision recorded at start that belong to the wallet session the battle began (the closing fills of
 * the session before, and anything after a later reset of the agent, are not the battle's), up to `until` (ms).
 */
export const battleFills = async (
  services: Services,
  participant: LiveParticipant,
  until: number,
): Promise<MetricsFill[]> => {
  if (participant.walletSessionId === null) return [];
  const events = await services.eventStore.readStream(walletStreamId(participant.agentId), {
    fromRevision: (participant.walletRevision ?? -1) + 1,
  });
  const fills: MetricsFill[] = [];
  for (const e of events) {
    if (e.type !== 'OrderFilled') continue;
    const fill = metricsFillOf(e.data as Parameters<typeof metricsFillOf>[0]);
    const data = e.data as { session_id: string };
    if (data.session_id === participant.walletSessionId && fill.time <= until) fills.push(fill);
  }
  return fills;
};

/**
 * The live mode of battles over the trading capability: a participant's fresh wallet session at start (the wallet
 * command `ResetWallet` with the battle's starting balance: positions closed at market, orders cancelled, history
 * kept) and the rankings now — equity points from the start (the starting balance), every recorded 5 s snapshot
 * and the equity now, fills inside the window; metrics by `domain/metrics` at a 5 s interval.
 */
export const liveBattlePort = (services: Services, now: () => Date = () => new Date()): LiveBattlePort => ({
  async startSession(accountId, agentId, startingBalance, meta) {
    const wallets = trading(services).wallets;
    const before = await wallets.load(agentId);
    const outcome = await wallets.reset({ accountId, agentId }, startingBalance, meta);
    const session = outcome.state.session;
    if (!session) throw new Error(`wallet of ${agentId} has no session after the reset`);
    return { sessionId: session.id, revision: before.revision };
  },

  async runningBattleOf(agentId) {
    const rows = await runningBattlesOfAgent(services.database.db, agentId);
    return rows[0]?.battle_id;
  },

  async rank(battle: LoadedBattle) {
    const { state } = battle;
    const config = state.config!;
    const at = now().getTime();
    const start = state.startedAt ? Date.parse(state.startedAt) : at;
    // The snapshots recorded so far, from the read model once it includes this battle's last event.
    if (battle.position)
      await services.projections.waitFor(battle.position, services.config.READ_MODEL_WAIT_MS);
    const rows = await battleSnapshots(services.database.db, battle.id);
    const records = [];
    for (const p of state.participants) {
      // Orders of the participant that answered before their fold (READ_YOUR_WRITES=on-read) count.
      await services.trading?.ownWrites.settle(p.agentId);
      const equityNow = await participantEquity(services, p);
      const snapshots = rows.flatMap((r) => {
        const hit = r.participants.find((x) => x.agent_id === p.agentId);
        return hit ? [{ time: new Date(r.time).getTime(), equity: hit.equity }] : [];
      });
      records.push({
        agentId: p.agentId,
        agentName: p.agentName,
        startingBalance: config.starting_balance,
        equity: [
          { time: start, equity: config.starting_balance },
          ...snapshots,
          { time: at, equity: equityNow },
        ],
        intervalMs: SNAPSHOT_INTERVAL_MS,
        fills: await battleFills(services, p, at),
        period: { start, end: at },
      });
    }
    const { rankings, summaries } = rankParticipants(records, config.ranking_metric);
    return { rankings, summaries };
  },
});
