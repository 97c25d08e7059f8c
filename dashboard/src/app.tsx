import { useEffect, useMemo, useState } from 'preact/hooks';
import { setCredentials } from './api/http';
import { type SocketState, socketUrl, VenueSocket } from './api/socket';
import { agents, login, ownAccount } from './api/venue';
import { theme, toggleTheme } from './charts/theme';
import { AuditPage } from './pages/audit';
import { BacktestComparePage, BacktestPage, BacktestsPage } from './pages/backtests';
import { BattlePage, BattlesPage } from './pages/battles';
import { LeaderboardPage } from './pages/leaderboard';
import { LoginPage } from './pages/login';
import { MarketPage } from './pages/market';
import { OverviewPage } from './pages/overview';
import { href, type Route, useRoute } from './router';
import { endSession, resumeSession, type Session, selectAgent, session } from './session';
import { useStore } from './store';
import { ErrorNotice } from './ui/components';
import { useAsync, useCoalesced } from './ui/hooks';
import { SocketContext } from './ui/socket-context';

const NAV = [
  { path: 'overview', label: 'Overview' },
  { path: 'market', label: 'Market' },
  { path: 'backtests', label: 'Backtests' },
  { path: 'battles', label: 'Battles' },
  { path: 'leaderboard', label: 'Leaderboard' },
  { path: 'audit', label: 'Audit' },
] as const;

resumeSession((c) => login({ api_key: c.apiKey, api_secret: c.apiSecret }));

/** The dashboard: the login page, or the pages of the logged-in account. */
export const App = () => {
  const s = useStore(session);
  return s ? <Shell session={s} /> : <LoginPage />;
};

/**
 * The page of `route`. `accountId` is the logged-in account's id as the frame read it (`GET /account/info`,
 * again after a reconnect), undefined until then: the leaderboard marks the account's wallets by it.
 */
const page = (route: Route, accountId: string | undefined) => {
  const [first = 'overview', second] = route.parts;
  switch (first) {
    case 'market':
      return <MarketPage symbol={second?.toUpperCase() ?? null} />;
    case 'backtests':
      if (second === 'compare') return <BacktestComparePage ids={route.query.get('ids')?.split(',') ?? []} />;
      return second ? <BacktestPage id={second} /> : <BacktestsPage />;
    case 'battles':
      return second ? <BattlePage id={second} /> : <BattlesPage />;
    case 'audit':
      return <AuditPage />;
    case 'leaderboard':
      return <LeaderboardPage period={route.query.get('period')} accountId={accountId} />;
    default:
      return <OverviewPage />;
  }
};

/**
 * The logged-in frame: navigation, the wallet picker (the account's own wallet or one of its agents', sent as
 * `X-Agent-Id` and `?agent_id=`), the live connection's state, the theme switch and logout. Every page below
 * is keyed by the viewed wallet, so choosing another one reads everything afresh.
 */
const Shell = ({ session: s }: { session: Session }) => {
  const route = useRoute();
  const account = useAsync(() => ownAccount(), [s.token]);
  const list = useAsync(() => agents(), [s.token]);
  const rereadAgents = useCoalesced(() => list.reload(), 200);
  setCredentials({
    token: s.token,
    agentId: s.agentId,
    onUnauthorized: (e) => {
      if (e.code === 'INVALID_TOKEN')
        endSession(`The venue refused the session (${e.message}): log in again.`);
    },
    onAgentRefused: rereadAgents,
  });
  // The viewed agent is gone from the account (deleted, here or elsewhere): show the account's own wallet and
  // say why, rather than every panel's refusal and a socket refused forever.
  const [goneAgent, setGoneAgent] = useState<string | null>(null);
  useEffect(() => {
    if (!s.agentId || !list.data || list.data.agents.some((a) => a.id === s.agentId)) return;
    setGoneAgent(s.agentId);
    selectAgent(null);
  }, [list.data, s.agentId]);
  const socket = useMemo(() => new VenueSocket(socketUrl(s.token, s.agentId)), [s.token, s.agentId]);
  useEffect(() => () => socket.close(), [socket]);
  // The frame's own reads are above the socket's context: re-read them after a reconnect as the pages' are.
  useEffect(
    () =>
      socket.onReconnect(() => {
        account.reload();
        list.reload();
      }),
    [socket],
  );
  const [state, setState] = useState<SocketState>(socket.state);
  useEffect(() => {
    setState(socket.state);
    return socket.onState(setState);
  }, [socket]);
  const t = useStore(theme);
  const current = route.parts[0] ?? 'overview';
  const agentList = list.data?.agents ?? [];

  return (
    <SocketContext.Provider value={socket}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href('overview')}>
          Paper-trading venue
        </a>
        <nav aria-label="Pages">
          {NAV.map((n) => (
            <a key={n.path} href={href(n.path)} aria-current={current === n.path ? 'page' : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <div class="tools">
          <label class="picker">
            <span>Wallet</span>
            <select
              name="wallet"
              value={s.agentId ?? ''}
              onChange={(e) => selectAgent(e.currentTarget.value || null)}
            >
              <option value="">{account.data ? `${account.data.display_name} (account)` : 'Account'}</option>
              {agentList.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.display_name}
                  {a.status === 'archived' ? ' (archived)' : ''}
                </option>
              ))}
            </select>
          </label>
          <span class={`conn ${state}`} role="status" title="Live updates over the venue's WebSocket">
            {state === 'live' ? 'live' : state === 'connecting' ? 'connecting…' : 'offline, retrying'}
          </span>
          <button
            type="button"
            onClick={toggleTheme}
            aria-label={`Switch to ${t === 'dark' ? 'light' : 'dark'} theme`}
          >
            {t === 'dark' ? 'Light' : 'Dark'}
          </button>
          <button type="button" onClick={() => endSession(null)}>
            Log out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <ErrorNotice error={account.error} title="Account" />
        {goneAgent && !s.agentId ? (
          <p class="notice" role="status" data-testid="agent-gone">
            The agent you were viewing (<code>{goneAgent}</code>) is no longer in this account: showing the
            account's own wallet.
          </p>
        ) : null}
        <div key={s.agentId ?? 'account'}>{page(route, account.data?.account_id)}</div>
      </main>
    </SocketContext.Provider>
  );
};
