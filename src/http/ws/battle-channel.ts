import type { z } from 'zod';
import type { LoadedBattle } from '../../../commands/battle';
import type { BattleEvent } from '../../../domain/battle/events';
import { roiPct } from '../../../domain/battle/rankings';
import { type BattleState, evolveBattle } from '../../../domain/battle/state';
import { DomainError } from '../../../domain/shared/errors';
import { canonicalId, isUuid } from '../../../domain/shared/uuid';
import type { OrderFilledData } from '../../../domain/wallet/events';
import { walletStreamId } from '../../../domain/wallet/events';
import type { RecordedEvent } from '../../../ports/event-store';
import { rankingOut } from '../../battle/present';
import type { battleStatusData, battleTradeData, battleUpdateData } from '../../contract/ws';
import type { Services } from '../../services';
import type { WsChannel, WsChannelFactory, WsClientMessage, WsConnection } from './registry';
import { serialPump } from './serial-pump';
import { failSubscription } from './subscription-failure';

/** Re-read period when this process folds no read models (nothing tells it of new events), ms. */
const POLL_MS = 1_000;
const CHANNEL = 'battle';

type BattleTradeData = z.output<typeof battleTradeData>;
type BattleUpdateData = z.output<typeof battleUpdateData>;
type BattleStatusData = z.output<typeof battleStatusData>;

/** `reason` of the `unsubscribed` that ends a subscription whose battle can send nothing more. */
type EndReason = 'battle_completed' | 'battle_cancelled' | 'battle_deleted';

/**
 * The events after which a battle sends nothing more, and the `reason` of the `unsubscribed` that then ends its
 * subscriptions (completed and cancelled battles are final: they can be neither restarted nor deleted).
 */
const FINAL: Partial<Record<BattleEvent['type'], EndReason>> = {
  BattleCompleted: 'battle_completed',
  BattleCancelled: 'battle_cancelled',
  BattleDeleted: 'battle_deleted',
};

/**
 * A completed or cancelled battle as its follower needs it just before its final event: the status it had then
 * (`BattleState.statusBeforeEnd`, the final `battle:status`'s `previous_status`) and the revision before the final
 * event, so that a follower started from it sends that event's `battle:status` (same fields as when it happened)
 * and then ends. The final event is the stream's last (the battle decider refuses every command once a battle is
 * completed or cancelled); the rest of the state is the finished battle's (its participants, its config), which is
 * all a follower of a final event reads. Nothing is read from the store. Any other state (not final, or final
 * without `statusBeforeEnd`) is returned as it is: followed from its own revision.
 */
const beforeFinal = (loaded: LoadedBattle): LoadedBattle => {
  const { status, statusBeforeEnd } = loaded.state;
  // Only a final state that knows its status before the end (else: followed as it is, from its revision).
  if ((status !== 'completed' && status !== 'cancelled') || statusBeforeEnd === null) return loaded;
  return { ...loaded, state: { ...loaded.state, status: statusBeforeEnd }, revision: loaded.revision - 1 };
};

/** `battle:trade` data (spec "Battle channel events"). */
const tradeOf = (battleId: string, agentId: string, d: OrderFilledData): BattleTradeData => ({
  battle_id: battleId,
  agent_id: agentId,
  symbol: d.symbol,
  side: d.side,
  quantity: d.quantity,
  price: d.executed_price,
  timestamp: d.filled_at,
});

/** `agentIds` in the order the battle's participants joined (ids it does not know last, in their given order). */
const joinOrder = (state: BattleState, agentIds: readonly string[]): string[] => {
  const seq = new Map(state.participants.map((p, i) => [p.agentId, i]));
  return agentIds
    .map((id, i) => ({ id, key: seq.get(id) ?? state.participants.length + i }))
    .sort((a, b) => a.key - b.key)
    .map((x) => x.id);
};

/**
 * The messages one battle event becomes (spec "Battle channel events"; payload of `battle:status` decided in
 * `docs/battles.md`): `battle:status` `{battle_id, status, previous_status, event, agent_id, reason, timestamp}`
 * on start, pause, resume, completion (with `final_rankings`), cancel and delete; `battle:update`
 * `{battle_id, participants[{agent_id, equity, roi_pct}], timestamp}` on every live snapshot (every 5 s) and every
 * historical step (virtual time); `battle:trade` on every sandbox fill of a historical battle.
 */
export const battleMessages = (
  before: BattleState,
  e: BattleEvent,
  occurredAt: string,
): { type: string; data: Record<string, unknown> }[] => {
  const battleId = before.battleId!;
  const status = (
    event: BattleStatusData['event'],
    to: BattleStatusData['status'],
    extra: Partial<BattleStatusData> & Record<string, unknown> = {},
  ): { type: string; data: Record<string, unknown> } => ({
    type: 'battle:status',
    data: {
      battle_id: battleId,
      status: to,
      previous_status: before.status,
      event,
      agent_id: null,
      reason: null,
      timestamp: occurredAt,
      ...extra,
    } satisfies BattleStatusData,
  });
  const sb = before.config?.starting_balance ?? '0';
  switch (e.type) {
    case 'BattleStarted':
      return [status('started', 'active', { timestamp: e.data.started_at })];
    case 'BattleAgentPaused':
      return [status('agent_paused', e.data.status, { agent_id: e.data.agent_id, timestamp: e.data.at })];
    case 'BattleAgentResumed':
      return [status('agent_resumed', e.data.status, { agent_id: e.data.agent_id, timestamp: e.data.at })];
    case 'BattleCompleted':
      return [
        status('completed', 'completed', {
          reason: e.data.reason,
          timestamp: e.data.completed_at,
          final_rankings: e.data.final_rankings.map(rankingOut),
        }),
      ];
    case 'BattleCancelled':
      return [status('cancelled', 'cancelled', { timestamp: e.data.cancelled_at })];
    case 'BattleDeleted':
      return [status('deleted', 'deleted', { timestamp: e.data.deleted_at })];
    case 'BattleSnapshotRecorded':
      return [
        {
          type: 'battle:update',
          data: {
            battle_id: battleId,
            participants: e.data.participants.map((p) => ({
              agent_id: p.agent_id,
              equity: p.equity,
              roi_pct: roiPct(p.equity, sb),
            })),
            timestamp: e.data.timestamp,
          } satisfies BattleUpdateData,
        },
      ];
    case 'BattleStepped':
      return [
        {
          type: 'battle:update',
          data: {
            battle_id: battleId,
            // In the order the participants joined (the event's object keys come back in storage order).
            participants: joinOrder(before, Object.keys(e.data.equity)).map((agentId) => {
              const equity = e.data.equity[agentId]!;
              const last = equity[equity.length - 1] ?? sb;
              return { agent_id: agentId, equity: last, roi_pct: roiPct(last, sb) };
            }),
            timestamp: e.data.to_time,
          } satisfies BattleUpdateData,
        },
      ];
    case 'BattleSandboxEventRecorded':
      return e.data.event.type === 'OrderFilled'
        ? [{ type: 'battle:trade', data: tradeOf(battleId, e.data.agent_id, e.data.event.data) }]
        : [];
    default:
      return [];
  }
};

/**
 * Delivers one battle's messages to one socket, in order, each once: every delivery reads the battle stream (and,
 * while a live battle runs, its participants' wallet streams) after the last revision sent and folds the battle's
 * state along, so participants, sessions and status are always those of the events being sent.
 */
class BattleFollower {
  private running = true;
  private state: BattleState;
  private revision: number;
  private readonly wallets = new Map<string, number>();

  constructor(
    private readonly services: Services,
    private readonly connection: WsConnection,
    readonly battleId: string,
    loaded: LoadedBattle,
    /** Called once after the battle's final `battle:status` (completed, cancelled, deleted): nothing more can come. */
    private readonly onFinal: (reason: EndReason) => void,
  ) {
    this.state = loaded.state;
    this.revision = loaded.revision;
  }

  /** Streams whose new events concern this follower. */
  streams(): string[] {
    return [`battle-${this.battleId}`, ...this.state.participants.map((p) => walletStreamId(p.agentId))];
  }

  private liveRunning(): boolean {
    return (
      this.state.config?.battle_mode === 'live' &&
      (this.state.status === 'active' || this.state.status === 'paused')
    );
  }

  /** Starting points of the participants' wallet streams (only what comes after the subscription). */
  async init(): Promise<void> {
    for (const p of this.state.participants) {
      this.wallets.set(p.agentId, await this.services.eventStore.streamRevision(walletStreamId(p.agentId)));
    }
  }

  readonly pump = serialPump(
    () => this.drain(),
    (error) => this.services.logger.warn({ err: error, battle: this.battleId }, 'battle channel read failed'),
    () => this.running,
  );

  private send(type: string, data: Record<string, unknown>): void {
    this.connection.send(CHANNEL, type, data);
  }

  private async drain(): Promise<void> {
    const store = this.services.eventStore;
    const events = await store.readStream(`battle-${this.battleId}`, { fromRevision: this.revision + 1 });
    for (const r of events) {
      if (!this.running) return;
      const e = { type: r.type, data: r.data } as BattleEvent;
      if (e.type === 'BattleStarted') {
        // A live battle's trades are the fills of the sessions it began: read each wallet from where the battle
        // recorded it (the session's own fills are told apart by their session id).
        for (const p of e.data.participants) {
          if (p.wallet_revision !== null) this.wallets.set(p.agent_id, p.wallet_revision);
        }
      }
      const final = FINAL[e.type];
      // The live battle's last trades come before its final status, which ends the subscription.
      if (final) await this.drainWallets();
      if (!this.running) return;
      for (const m of battleMessages(this.state, e, r.metadata.occurred_at)) this.send(m.type, m.data);
      this.state = evolveBattle(this.state, e);
      this.revision = r.revision;
      if (final) {
        this.running = false;
        this.onFinal(final);
        return;
      }
    }
    await this.drainWallets();
  }

  /** `battle:trade` for every fill of a participant's battle session while the live battle runs. */
  private async drainWallets(): Promise<void> {
    if (!this.liveRunning()) return;
    for (const p of this.state.participants) {
      const from = (this.wallets.get(p.agentId) ?? -1) + 1;
      const events: RecordedEvent[] = await this.services.eventStore.readStream(walletStreamId(p.agentId), {
        fromRevision: from,
      });
      for (const r of events) {
        if (!this.running) return;
        if (r.type === 'OrderFilled') {
          const d = r.data as OrderFilledData;
          if (d.session_id === p.walletSessionId)
            this.send('battle:trade', tradeOf(this.battleId, p.agentId, d));
        }
        this.wallets.set(p.agentId, r.revision);
      }
    }
  }

  stop(): void {
    this.running = false;
  }
}

/**
 * The `battle` channel of `/ws/v1` (spec "Events": `battle:update`, `battle:trade`, `battle:status`; ARCHITECTURE
 * §13). Subscribe with `{action: 'subscribe', channel: 'battle', battle_id}` on an authenticated socket; only the
 * battle's account may follow it (another: `PERMISSION_DENIED`, unknown: `BATTLE_NOT_FOUND`, sent as a `system`
 * error). Messages follow the battle's committed events (woken by this process's projection folds, or a 1 s
 * poll when it folds none). After the final `battle:status` (completed, cancelled, deleted) the subscription ends
 * with an `unsubscribed` `{battle_id, reason}`; a subscribe to a battle already completed or cancelled is answered
 * with that final `battle:status` and the same `unsubscribed`, so no subscription holds a slot for nothing.
 */
class BattleChannel implements WsChannel {
  readonly name = CHANNEL;
  readonly requiresAuth = true;
  private readonly followers = new Set<BattleFollower>();
  private readonly unfollow: (() => void) | undefined;
  private readonly poll: NodeJS.Timeout | undefined;

  constructor(private readonly services: Services) {
    if (services.projections.folding) {
      this.unfollow = services.projections.onFolded((change) => {
        if (change === 'swapped') return;
        const streams = new Set(change.map((e) => e.streamId));
        for (const f of this.followers) if (f.streams().some((s) => streams.has(s))) f.pump();
      });
    } else {
      this.poll = setInterval(() => {
        for (const f of this.followers) f.pump();
      }, POLL_MS);
      this.poll.unref();
    }
  }

  subscription(message: WsClientMessage, connection: WsConnection) {
    // `channel: "battle:<id>"` (the original SDK's form) names the battle after the colon.
    const given = message['battle_id'] ?? message['target'];
    if (typeof given !== 'string' || !isUuid(given)) {
      throw new DomainError('VALIDATION_ERROR', '"battle_id" must be a battle id (UUID)', {
        field: 'battle_id',
      });
    }
    // UUIDs are case-insensitive on input; the battle's stream is keyed by the lowercase form.
    const battleId = canonicalId(given);
    const principal = connection.principal!;
    return {
      key: `battle:${battleId}`,
      ack: { battle_id: battleId },
      start: (ended: () => void) => {
        let follower: BattleFollower | undefined;
        let stopped = false;
        const commands = this.services.battle?.commands;
        void (async () => {
          if (!commands) throw new DomainError('SERVICE_UNAVAILABLE', 'battles are not available');
          // The battle's state and the account check only: a follower reads no candles (a finished historical
          // battle whose market data changed, or a server with no market source, is still followed).
          // An already finished battle will send nothing more: answer with its final status, then end (below).
          const loaded = beforeFinal(await commands.state({ accountId: principal.accountId }, battleId));
          const f = new BattleFollower(this.services, connection, battleId, loaded, (reason) => {
            // The battle's final `battle:status` was just sent: free the slot and say so, as an `unsubscribed`
            // the client did not ask for, naming why.
            this.followers.delete(f);
            if (stopped) return;
            stopped = true;
            ended();
            connection.send(CHANNEL, 'unsubscribed', { battle_id: battleId, reason });
          });
          await f.init();
          if (stopped) return;
          follower = f;
          this.followers.add(f);
          f.pump();
        })().catch((error: unknown) => {
          // The subscription is over: free its slot (unless the client unsubscribed meanwhile), so the client can
          // retry or subscribe to something else, and answer its subscribe with the error, naming the battle.
          const end = () => {
            if (stopped) return;
            stopped = true;
            ended();
          };
          failSubscription(connection, CHANNEL, error, end, this.services.logger, { battle_id: battleId });
        });
        return () => {
          stopped = true;
          if (follower) {
            follower.stop();
            this.followers.delete(follower);
          }
        };
      },
    };
  }

  close(): void {
    this.unfollow?.();
    if (this.poll) clearInterval(this.poll);
    for (const f of this.followers) f.stop();
    this.followers.clear();
  }
}

/** Registers the `battle` channel (needs the battle capability). */
export const battleChannels: WsChannelFactory[] = [
  { name: CHANNEL, create: (services) => (services.battle ? new BattleChannel(services) : undefined) },
];
