import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import type { ServerMessage, Topic } from '../api/socket';
import { SocketContext } from './socket-context';

/** The state of an asynchronous read. */
export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Reads again (keeps showing the last data meanwhile). */
  reload: () => void;
}

/**
 * Runs `load` when `deps` change, on `reload()`, and after the viewer's socket reconnects (the venue was away: what
 * the page shows may be stale or an error of the outage; docs/dashboard.md "Reading the pages"), keeping the newest
 * answer (an older answer arriving late is dropped). The last data stays visible while a reload runs, so live
 * re-reads do not flicker. Outside the logged-in frame (no socket) there are no reconnects.
 */
export const useAsync = <T>(load: () => Promise<T>, deps: unknown[]): Async<T> => {
  const socket = useContext(SocketContext);
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const seq = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const run = useCallback(() => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    loadRef.current().then(
      (data) => {
        if (n === seq.current) setState({ data, error: undefined, loading: false });
      },
      (error: unknown) => {
        if (n === seq.current) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
  }, []);
  useEffect(() => {
    setState({ data: undefined, error: undefined, loading: true });
    run();
  }, deps);
  useEffect(() => {
    if (!socket) return;
    return socket.onReconnect(run);
  }, [socket, run]);
  return { ...state, reload: run };
};

/**
 * Calls `fn` at most once per `ms`, the last call winning (a burst of pushed events becomes one re-read).
 */
export const useCoalesced = (fn: () => void, ms: number): (() => void) => {
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      fnRef.current();
    }, ms);
  }, [ms]);
};

/**
 * Follows a WebSocket topic while the component is mounted (null: none); `onMessage` hears its messages and,
 * when `onReconnect` is given, it is called after the socket reconnects (for state kept outside {@link useAsync},
 * whose reads re-run by themselves then).
 */
export const useChannel = (
  topic: Topic | null,
  onMessage: (m: ServerMessage) => void,
  onReconnect?: () => void,
): void => {
  const socket = useContext(SocketContext);
  const handler = useRef(onMessage);
  handler.current = onMessage;
  const again = useRef(onReconnect);
  again.current = onReconnect;
  const key = topic ? `${topic.channel}:${topic.symbol ?? ''}:${topic.battle_id ?? ''}` : '';
  useEffect(() => {
    if (!socket || !topic) return;
    const off = socket.subscribe(topic, (m) => handler.current(m));
    const offReconnect = socket.onReconnect(() => again.current?.());
    return () => {
      off();
      offReconnect();
    };
  }, [socket, key]);
};

/**
 * False until the browser is idle after the first render (at most `timeoutMs`), then true: panels that are not
 * the page's first figures (the order ticket's pair list and fee rate) start their reads after those, so the
 * first figures are not queued behind them (a browser opens at most six connections to a host).
 */
export const useIdle = (timeoutMs = 400): boolean => {
  const [idle, setIdle] = useState(false);
  useEffect(() => {
    if (typeof requestIdleCallback === 'function') {
      const id = requestIdleCallback(() => setIdle(true), { timeout: timeoutMs });
      return () => cancelIdleCallback(id);
    }
    const t = setTimeout(() => setIdle(true), timeoutMs);
    return () => clearTimeout(t);
  }, [timeoutMs]);
  return idle;
};
