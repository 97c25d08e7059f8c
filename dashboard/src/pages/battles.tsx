import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { BattleReplay, BattleStatus, BattleTrade, Ranking } from '../api/contract';
import { baseAsset, QUOTE } from '../api/pairs';
import * as venue from '../api/venue';
import { LineChart } from '../charts/chart';
import { href } from '../router';
import { Empty, ErrorNotice, Loading, Panel } from '../ui/components';
import { Badge, Count, Num, Ord, ShortId, Side, Time } from '../ui/format';
import { useAsync, useChannel, useCoalesced } from '../ui/hooks';
import { AGENTS, FILLS } from '../ui/nouns';
import { markReady } from '../ui/ready';
import { Head, NumCell, right, StackedNumCell } from '../ui/table';

const tone = (s: BattleStatus | string) =>
  s === 'active'
    ? 'live'
    : s === 'completed'
      ? 'ok'
      : s === 'cancelled'
        ? 'bad'
        : s === 'paused'
          ? 'warn'
          : '';

/** Battles (docs/dashboard.md): the account's battles (`GET /battles`), newest first. */
export const BattlesPage = () => {
  const list = useAsync(() => venue.battles(), []);
  useEffect(() => {
    if (list.data) markReady('battles');
  }, [list.data]);
  return (
    <div class="page">
      <h1>Battles</h1>
      <ErrorNotice error={list.error} />
      {list.data && list.data.battles.length === 0 ? (
        <Empty>
          No battles yet. Create one between your agents through the API (<code>POST /api/v1/battles</code>,
          then add participants and start it; see <code>docs/battles.md</code>).
        </Empty>
      ) : list.data ? (
        <div class="table-scroll">
          <table data-testid="battle-list">
            <Head
              cols={[
                'Name',
                'Mode',
                'Status',
                right('Agents'),
                'Ranked by',
                right('Starting balance', QUOTE),
                'Started',
                'Ended',
              ]}
            />
            <tbody>
              {list.data.battles.map((b) => (
                <tr key={b.battle_id} data-battle={b.battle_id}>
                  <th scope="row">
                    <a href={href('battles', b.battle_id)}>{b.name}</a>
                  </th>
                  <td>{b.battle_mode}</td>
                  <td>
                    <Badge tone={tone(b.status)}>{b.status}</Badge>
                  </td>
                  <td class="r">
                    <Count n={b.participants.length} of={AGENTS} />
                  </td>
                  <td>{b.ranking_metric}</td>
                  <NumCell value={b.starting_balance} />
                  <td>
                    <Time iso={b.started_at} />
                  </td>
                  <td>
                    <Time iso={b.ended_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <Loading what="battles" />
      )}
    </div>
  );
};

/**
 * One battle: while active or paused, the live leaderboard (`/battles/{id}/live`) re-read on every message of
 * the `battle` channel (a snapshot, a fill, a status change), with the fills as they come; once completed, the
 * final rankings and the replay of its equity snapshots as an animated race.
 */
export const BattlePage = ({ id }: { id: string }) => {
  const battle = useAsync(() => venue.battle(id), [id]);
  const status = battle.data?.status;
  const running = status === 'active' || status === 'paused';
  const live = useAsync(() => (running ? venue.battleLive(id) : Promise.resolve(null)), [id, running]);
  const results = useAsync(
    () => (status === 'completed' ? venue.battleResults(id) : Promise.resolve(null)),
    [id, status],
  );
  const [trades, setTrades] = useState<BattleTrade[]>([]);
  const rereadLive = useCoalesced(() => live.reload(), 100);
  useChannel({ channel: 'battle', battle_id: id }, (m) => {
    if (m.channel !== 'battle') return;
    if (m.type === 'battle:trade') setTrades((t) => [m.data as BattleTrade, ...t].slice(0, 50));
    if (m.type === 'battle:status') battle.reload();
    rereadLive();
  });
  useEffect(() => {
    if (battle.data) markReady('battle');
  }, [battle.data]);

  const b = battle.data;
  if (battle.error) return <ErrorNotice error={battle.error} title="Battle" />;
  if (!b) return <Loading what="the battle" />;
  const names = new Map(b.participants.map((p) => [p.agent_id, p.agent_name]));
  return (
    <div class="page battle" data-battle={b.battle_id} data-status={b.status}>
      <p>
        <a href={href('battles')}>← All battles</a>
      </p>
      <h1>
        {b.name} <Badge tone={tone(b.status)}>{b.status}</Badge>
      </h1>
      <p class="muted">
        {b.battle_mode} battle of {b.participants.length} agents · ranked by {b.ranking_metric} · starting
        balance <Num value={b.starting_balance} unit={QUOTE} />
        {b.started_at ? (
          <>
            {' '}
            · started <Time iso={b.started_at} />
          </>
        ) : null}
        {b.ended_at ? (
          <>
            {' '}
            · ended <Time iso={b.ended_at} />
          </>
        ) : null}
      </p>
      {running ? (
        <div class="two">
          <Panel
            id="leaderboard"
            title="Live leaderboard"
            actions={
              live.data ? (
                <span class="muted small">
                  <Num value={live.data.elapsed_seconds} unit="s" /> in
                </span>
              ) : null
            }
          >
            <ErrorNotice error={live.error} />
            {live.data ? <Rankings rankings={live.data.rankings} /> : <Loading what="the leaderboard" />}
            <p class="muted small">
              Updated on every snapshot (every 5 s) and every fill, from the battle channel.
            </p>
          </Panel>
          <Panel id="battle-trades" title="Fills">
            {trades.length === 0 ? (
              <Empty>
                No fills since this page opened. Agents trade with their own keys on the live venue.
              </Empty>
            ) : (
              <table data-testid="battle-trades">
                <tbody>
                  {trades.map((t, i) => (
                    <tr key={`${t.timestamp}-${i}`}>
                      <td>
                        <Time iso={t.timestamp} />
                      </td>
                      <td>{names.get(t.agent_id) ?? <ShortId id={t.agent_id} />}</td>
                      <td>
                        <Side side={t.side} />
                      </td>
                      <NumCell value={t.quantity} unit={baseAsset(t.symbol)} />
                      <td>{t.symbol}</td>
                      <NumCell value={t.price} unit={QUOTE} />
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </Panel>
        </div>
      ) : null}
      {b.status === 'draft' ? (
        <Empty>
          This battle is a draft with {b.participants.length} participants: start it with{' '}
          <code>POST /api/v1/battles/{b.battle_id}/start</code>.
        </Empty>
      ) : null}
      {results.data ? (
        <Panel id="final" title="Final rankings">
          <Rankings rankings={results.data.rankings} />
          <p class="muted small">
            Completed <Time iso={results.data.completed_at} />
            {results.data.completion_reason ? ` (${results.data.completion_reason})` : ''}.
          </p>
        </Panel>
      ) : null}
      <ErrorNotice error={results.error} title="Results" />
      {b.status === 'completed' || b.status === 'cancelled' ? <Replay id={b.battle_id} /> : null}
    </div>
  );
};

/**
 * A battle's standings. Each agent's PnL sits under its equity (one USDT column), so the table fits the live
 * leaderboard's half-width panel at 1280 px without scrolling inside it.
 */
const Rankings = ({ rankings }: { rankings: Ranking[] }) =>
  rankings.length === 0 ? (
    <Empty>No participants.</Empty>
  ) : (
    <table data-testid="rankings">
      <Head
        cols={[
          right('Rank'),
          'Agent',
          right('Equity / PnL', QUOTE),
          right('ROI', '%'),
          right('Fills'),
          right('Win rate', '%'),
          right('Sharpe', 'ratio'),
        ]}
      />
      <tbody>
        {rankings.map((r) => (
          <tr key={r.agent_id} data-agent={r.agent_id} data-trades={r.trade_count}>
            <td class="r">
              <Ord n={r.rank} />
            </td>
            <th scope="row">{r.agent_name}</th>
            <StackedNumCell
              main={{ value: r.equity }}
              sub={{ value: r.total_pnl, signed: true }}
              field="total_pnl"
            />
            <NumCell value={r.roi_pct} signed />
            <td class="r" data-field="trade_count">
              <Count n={r.trade_count} of={FILLS} />
            </td>
            <NumCell value={r.win_rate} />
            <NumCell value={r.sharpe_ratio} />
          </tr>
        ))}
      </tbody>
    </table>
  );

type Snapshot = BattleReplay['snapshots'][number];

/**
 * The equity race of a finished battle (`GET /battles/{id}/replay`): its snapshots played frame by frame, each
 * agent's equity line growing, the standings at the current frame beside it (ordered by equity at that frame:
 * a picture of the race, not the battle's ranking, which is above). Play, pause, speed and a scrubber; all
 * keyboard-usable.
 */
const Replay = ({ id }: { id: string }) => {
  const replay = useAsync(() => venue.battleReplay(id), [id]);
  const snapshots = replay.data?.snapshots ?? [];
  const [frame, setFrame] = useState(0);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1);
  const last = Math.max(0, snapshots.length - 1);
  const timer = useRef<ReturnType<typeof setInterval> | undefined>(undefined);
  useEffect(() => {
    if (replay.data) {
      setFrame(last);
    }
  }, [replay.data, last]);
  useEffect(() => {
    clearInterval(timer.current);
    if (!playing) return;
    // The whole race in about 10 s at 1×, whatever the number of snapshots.
    const step = Math.max(1, Math.round(snapshots.length / 100));
    timer.current = setInterval(() => {
      setFrame((f) => {
        if (f >= last) {
          setPlaying(false);
          return last;
        }
        return Math.min(last, f + step);
      });
    }, 100 / speed);
    return () => clearInterval(timer.current);
  }, [playing, speed, last, snapshots.length]);

  const lines = useMemo(() => {
    const byAgent = new Map<string, { name: string; points: { time: number; value: number }[] }>();
    for (const s of snapshots.slice(0, frame + 1)) {
      for (const p of s.participants) {
        let line = byAgent.get(p.agent_id);
        if (!line) {
          line = { name: p.agent_name, points: [] };
          byAgent.set(p.agent_id, line);
        }
        line.points.push({ time: Date.parse(s.timestamp), value: Number(p.equity) });
      }
    }
    return [...byAgent].map(([agentId, l]) => ({ id: agentId, name: l.name, points: l.points }));
  }, [snapshots, frame]);
  const current: Snapshot | undefined = snapshots[frame];
  const standings = [...(current?.participants ?? [])].sort((a, b) => Number(b.equity) - Number(a.equity));
  // Bars span the race's whole range of equity (equities of a battle are close: a scale from 0 would hide it).
  const range = useMemo(() => {
    const all = snapshots.flatMap((s) => s.participants.map((p) => Number(p.equity)));
    return { min: Math.min(...all), max: Math.max(...all) };
  }, [snapshots]);
  const width = (equity: string) =>
    range.max > range.min ? 8 + (92 * (Number(equity) - range.min)) / (range.max - range.min) : 100;

  return (
    <Panel id="replay" title="Replay">
      <ErrorNotice error={replay.error} />
      {replay.data && snapshots.length === 0 ? (
        <Empty>This battle recorded no equity snapshots.</Empty>
      ) : null}
      {snapshots.length > 0 ? (
        <div data-testid="replay" data-frames={snapshots.length} data-frame={frame}>
          <div class="replay-controls">
            <button
              type="button"
              class="primary"
              onClick={() => {
                if (frame >= last) setFrame(0);
                setPlaying((p) => !p);
              }}
            >
              {playing ? 'Pause' : frame >= last ? 'Replay' : 'Play'}
            </button>
            <label>
              Speed
              <select value={String(speed)} onChange={(e) => setSpeed(Number(e.currentTarget.value))}>
                {[0.5, 1, 2, 4].map((s) => (
                  <option key={s} value={s}>
                    {s}×
                  </option>
                ))}
              </select>
            </label>
            <label class="grow">
              <span class="sr-only">Frame</span>
              <input
                type="range"
                min={0}
                max={last}
                value={frame}
                onInput={(e) => {
                  setPlaying(false);
                  setFrame(Number(e.currentTarget.value));
                }}
                aria-valuetext={current ? `snapshot ${frame + 1} of ${snapshots.length}` : ''}
              />
            </label>
            <span class="small">
              {current ? <Time iso={current.timestamp} /> : null} ({frame + 1}/{snapshots.length})
            </span>
          </div>
          <div class="two">
            <LineChart
              lines={lines}
              label={`Equity race, snapshot ${frame + 1} of ${snapshots.length}`}
              fit={!playing}
            />
            <ol class="race" aria-label="Standings at this snapshot">
              {standings.map((s) => (
                <li key={s.agent_id}>
                  <span class="race-name">{s.agent_name}</span>
                  <span class="race-bar" style={{ width: `${width(s.equity)}%` }} />
                  <Num value={s.equity} unit={QUOTE} />
                </li>
              ))}
            </ol>
          </div>
        </div>
      ) : replay.data ? null : (
        <Loading what="the replay" />
      )}
    </Panel>
  );
};
