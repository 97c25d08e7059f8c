import type * as C from './contract';

/** A server message of `/ws/v1`: `{channel, type, data}` (docs/market-data.md "WebSocket"). */
export type ServerMessage =
  | { channel: 'portfolio'; type: 'portfolio'; data: C.Portfolio }
  | { channel: 'orders'; type: string; data: C.WalletEvent }
  | { channel: 'ticker'; type: 'ticker'; data: C.TickerData }
  | { channel: 'battle'; type: 'battle:update'; data: C.BattleUpdate }
  | { channel: 'battle'; type: 'battle:trade'; data: C.BattleTrade }
  | { channel: 'battle'; type: 'battle:status'; data: C.BattleStatusChange }
  | { channel: string; type: string; data: Record<string, unknown> };

/** A subscription: the channel and its parameters (`symbol` of `ticker`, `battle_id` of `battle`). */
export interface Topic {
  channel: 'portfolio' | 'orders' | 'ticker' | 'battle';
  symbol?: string;
  battle_id?: string;
}

/** Connection state shown in the header. */
export type SocketState = 'connecting' | 'live' | 'offline';

/** Channels whose every message is the whole current state (not an event of a log). */
const SNAPSHOT_CHANNELS = new Set<Topic['channel']>(['ticker', 'portfolio']);

const keyOf = (t: Topic): string => `${t.channel}:${t.symbol ?? t.battle_id ?? ''}`;

/** Does `m` belong to topic `t` (the server tags `ticker` data with its symbol and `battle` data with its id)? */
const matches = (t: Topic, m: ServerMessage): boolean => {
  if (m.channel !== t.channel || m.type === 'subscribed' || m.type === 'unsubscribed') return false;
  const data = m.data as { symbol?: string; battle_id?: string };
  if (t.symbol) return data.symbol === t.symbol;
  if (t.battle_id) return data.battle_id === t.battle_id;
  return true;
};

/**
 * The venue's WebSocket (`/ws/v1`) for one viewer: `?token=` (the JWT) and `?agent_id=` (the viewed agent) on
 * the handshake, so `portfolio` and `orders` follow the viewed wallet and `battle` the account's battles.
 * Subscriptions are counted per topic (one `subscribe` however many listeners) and re-sent after a reconnect;
 * reconnects back off from 0.5 s to 10 s. `onReconnect` listeners hear every reconnection after the first
 * connection, to read again what they may have missed. Pages never poll: they re-read on a message.
 */
export class VenueSocket {
  private socket: WebSocket | null = null;
  private closed = false;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private connectedOnce = false;
  private readonly topics = new Map<
    string,
    { topic: Topic; listeners: Set<(m: ServerMessage) => void>; last?: ServerMessage }
  >();
  private readonly stateListeners = new Set<(s: SocketState) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private readonly errorListeners = new Set<
    (m: { code: string; message: string; channel?: string }) => void
  >();
  state: SocketState = 'connecting';

  constructor(private readonly url: string) {
    this.connect();
  }

  /** Follows `topic`; returns the unsubscribe. */
  subscribe(topic: Topic, listener: (m: ServerMessage) => void): () => void {
    const key = keyOf(topic);
    let entry = this.topics.get(key);
    if (!entry) {
      entry = { topic, listeners: new Set() };
      this.topics.set(key, entry);
      this.send({ action: 'subscribe', ...topic });
    }
    entry.listeners.add(listener);
    // A snapshot channel's newest message is the state now: a listener joining a topic already followed gets it
    // at once (the server sends the current ticker or portfolio only to a new subscription).
    if (entry.last && SNAPSHOT_CHANNELS.has(topic.channel)) listener(entry.last);
    return () => {
      const e = this.topics.get(key);
      if (!e) return;
      e.listeners.delete(listener);
      if (e.listeners.size === 0) {
        this.topics.delete(key);
        this.send({ action: 'unsubscribe', ...topic });
      }
    };
  }

  onState(listener: (s: SocketState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** `system` `error` messages (a refused subscription, e.g. a battle of another account). */
  onError(listener: (m: { code: string; message: string; channel?: string }) => void): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.socket?.close(1000, 'bye');
    this.setState('offline');
  }

  private setState(s: SocketState): void {
    if (this.state === s) return;
    this.state = s;
    for (const l of this.stateListeners) l(s);
  }

  private send(message: Record<string, unknown>): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private connect(): void {
    if (this.closed) return;
    this.setState('connecting');
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onmessage = (event) => {
      let m: ServerMessage;
      try {
        m = JSON.parse(String(event.data)) as ServerMessage;
      } catch {
        return;
      }
      if (m.channel === 'system') {
        if (m.type === 'welcome') this.opened();
        else if (m.type === 'error') {
          for (const l of this.errorListeners)
            l(m.data as { code: string; message: string; channel?: string });
        }
        return;
      }
      for (const entry of this.topics.values()) {
        if (!matches(entry.topic, m)) continue;
        entry.last = m;
        for (const l of entry.listeners) l(m);
      }
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (this.closed) return;
      this.setState('offline');
      const delay = Math.min(10_000, 500 * 2 ** this.attempts++);
      this.timer = setTimeout(() => this.connect(), delay);
    };
  }

  /** The welcome message: (re)subscribe everything, and tell reconnect listeners. */
  private opened(): void {
    this.attempts = 0;
    for (const { topic } of this.topics.values()) this.send({ action: 'subscribe', ...topic });
    this.setState('live');
    if (this.connectedOnce) for (const l of this.reconnectListeners) l();
    this.connectedOnce = true;
  }
}

/** The socket URL for a viewer: this origin's `/ws/v1` with the token and the viewed agent. */
export const socketUrl = (token: string, agentId: string | null): string => {
  const u = new URL('/ws/v1', location.href);
  u.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  u.searchParams.set('token', token);
  if (agentId) u.searchParams.set('agent_id', agentId);
  return u.toString();
};
