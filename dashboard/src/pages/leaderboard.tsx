import { useEffect, useMemo, useState } from 'preact/hooks';
import { dec } from '../../../domain/trading/decimal';
import type { LeaderboardEntry, LeaderboardPeriod } from '../api/contract';
import * as venue from '../api/venue';
import { navigate } from '../router';
import { session } from '../session';
import { useStore } from '../store';
import { Empty, ErrorNotice, Loading, Segmented } from '../ui/components';
import { Count, definedMetric, Num, Ord, Time } from '../ui/format';
import { useAsync, useChannel, useCoalesced } from '../ui/hooks';
import { FILLS } from '../ui/nouns';
import { markReady } from '../ui/ready';
import { Head } from '../ui/table';

/** The spec's periods of `GET /analytics/leaderboard` (its default `30d`). */
const PERIODS: readonly LeaderboardPeriod[] = ['1d', '7d', '30d', '90d', 'all'];
const DEFAULT_PERIOD: LeaderboardPeriod = '30d';

/** What the table can be ordered by: the venue's rank, or one of the figures each entry carries. */
type SortKey = 'rank' | 'roi_pct' | 'sharpe_ratio' | 'total_trades' | 'win_rate';
interface Sort {
  key: SortKey;
  dir: 'ascending' | 'descending';
}
const VENUE_ORDER: Sort = { key: 'rank', dir: 'ascending' };

/**
 * The rankings in the chosen order: the venue's (by ROI, its ranks) or by one figure, ties in the venue's order;
 * an undefined metric ({@link definedMetric}) sorts last either way (it is no figure, not a zero).
 */
const sorted = (rankings: LeaderboardEntry[], sort: Sort): LeaderboardEntry[] => {
  if (sort.key === 'rank') return sort.dir === 'ascending' ? rankings : [...rankings].reverse();
  const key = sort.key;
  const sign = sort.dir === 'ascending' ? 1 : -1;
  return rankings
    .map((e, i) => ({ e, i, v: definedMetric(e, key) }))
    .sort((a, b) => {
      if (a.v === null || b.v === null) return a.v === b.v ? a.i - b.i : a.v === null ? 1 : -1;
      return sign * (dec(a.v).comparedTo(dec(b.v)) ?? 0) || a.i - b.i;
    })
    .map((x) => x.e);
};

/** The columns of the table: label, unit of its figures (said in the header), and the sort it offers. */
const COLUMNS: { key: SortKey | 'name'; label: string; unit?: string }[] = [
  { key: 'rank', label: 'Rank' },
  { key: 'name', label: 'Wallet' },
  { key: 'roi_pct', label: 'ROI', unit: '%' },
  { key: 'sharpe_ratio', label: 'Sharpe', unit: 'ratio' },
  { key: 'total_trades', label: 'Trades' },
  { key: 'win_rate', label: 'Win rate', unit: '%' },
];

/** A figure's label on a phone, where each entry is a card (the CSS writes it before the figure). */
const LABEL = Object.fromEntries(
  COLUMNS.map((c) => [c.key, c.unit ? `${c.label} (${c.unit})` : c.label]),
) as Record<SortKey, string>;

/**
 * The least time (ms) between two reads of the board caused by fills: the fills of the next 5 s come with the
 * first one's read, so a wallet filling often costs the account's analytics budget (120 reads a minute) at most 12.
 */
const FILL_REREAD_MS = 5_000;

/**
 * Leaderboard (docs/dashboard.md): `GET /analytics/leaderboard` of the period in the address
 * (`#/leaderboard?period=7d`; the spec's `30d` by default), every account's wallets ranked by the venue by ROI,
 * at most 50, with the Sharpe ratio, fill count and win rate of the period. The columns sort the answer in the
 * page (the venue's ranks stay). The venue pushes no leaderboard, so the page reads it again 5 s after a fill of
 * the viewed wallet (`OrderFilled` on the `orders` channel; the fills of those 5 s come with that read), after a
 * reconnect, and on "Refresh"; others' fills and price moves show then. The viewer's own wallets (those of
 * `accountId`, the frame's read of the account; none marked while it is undefined) are marked.
 */
export const LeaderboardPage = ({
  period,
  accountId: own,
}: {
  period: string | null;
  accountId: string | undefined;
}) => {
  const asked = period ?? DEFAULT_PERIOD;
  const board = useAsync(() => venue.leaderboard(asked), [asked]);
  const viewed = useStore(session)?.agentId ?? null;
  const [sort, setSort] = useState<Sort>(VENUE_ORDER);
  const [readAt, setReadAt] = useState<string | null>(null);
  const reread = useCoalesced(() => board.reload(), FILL_REREAD_MS);
  // Fills only: a placed, cancelled or rejected order changes no ranking, and an agent trading fast would have the
  // board read several times a second.
  useChannel({ channel: 'orders' }, (m) => {
    if (m.type === 'OrderFilled') reread();
  });
  useEffect(() => {
    if (board.data) {
      setReadAt(new Date().toISOString());
      markReady('leaderboard');
    }
  }, [board.data]);
  const rows = useMemo(() => (board.data ? sorted(board.data.rankings, sort) : []), [board.data, sort]);
  const sortBy = (key: SortKey) =>
    setSort((s) =>
      key === 'rank'
        ? VENUE_ORDER
        : { key, dir: s.key === key && s.dir === 'descending' ? 'ascending' : 'descending' },
    );

  return (
    <div class="page leaderboard">
      <h1>Leaderboard</h1>
      <div class="toolbar">
        <Segmented
          label="Period"
          value={asked as LeaderboardPeriod}
          options={PERIODS}
          onChange={(p) => navigate(`#/leaderboard?period=${p}`)}
        />
        <button type="button" onClick={board.reload} disabled={board.loading}>
          {board.loading ? 'Reading…' : 'Refresh'}
        </button>
        {readAt ? (
          <span class="muted small">
            read <Time iso={readAt} />
          </span>
        ) : null}
      </div>
      <p class="muted small">
        Every account's wallets with at least one closed trade (a sell) in the period, ranked by the venue by
        ROI (equity now against the period's opening equity, live prices); at most 50. Trades counts fills;
        Sharpe and win rate are of the period, a dash when too few trades define them.
      </p>
      <ErrorNotice error={board.error} />
      {board.data && board.data.rankings.length === 0 ? (
        <Empty>
          No wallet closed a trade in this period. A wallet enters once it sells: trade from the Overview, or
          let an agent trade through the API.
        </Empty>
      ) : board.data ? (
        <div class="table-scroll">
          <table class="board" data-testid="leaderboard" data-period={board.data.period}>
            <Head
              cols={COLUMNS.map((c) =>
                c.key === 'name'
                  ? c.label
                  : {
                      label: c.label,
                      right: true,
                      unit: c.unit,
                      sort: {
                        dir: sort.key === c.key ? sort.dir : undefined,
                        onSort: () => sortBy(c.key as SortKey),
                      },
                    },
              )}
            />
            <tbody>
              {rows.map((r) => {
                const owner = r.agent_id ?? r.account_id;
                const mine = own !== undefined && r.account_id === own;
                const viewing = mine && (r.agent_id ?? null) === viewed;
                return (
                  <tr
                    key={owner}
                    data-owner={owner}
                    class={mine ? 'own' : undefined}
                    aria-current={viewing ? 'true' : undefined}
                  >
                    <td class="r">
                      <Ord n={r.rank} />
                    </td>
                    <th scope="row">{r.display_name}</th>
                    <td class="r" data-field="roi_pct" data-label={LABEL.roi_pct}>
                      <Num value={r.roi_pct} signed />
                    </td>
                    <td class="r" data-field="sharpe_ratio" data-label={LABEL.sharpe_ratio}>
                      <Num value={definedMetric(r, 'sharpe_ratio')} />
                    </td>
                    <td class="r" data-field="total_trades" data-label={LABEL.total_trades}>
                      <Count n={r.total_trades} of={FILLS} />
                    </td>
                    <td class="r" data-field="win_rate" data-label={LABEL.win_rate}>
                      <Num value={definedMetric(r, 'win_rate')} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : board.error ? null : (
        <Loading what="the leaderboard" />
      )}
      {board.data && own ? (
        <p class="muted small">
          Highlighted rows are this account's wallets (its own and its agents'); the one you are viewing is
          outlined.
        </p>
      ) : null}
    </div>
  );
};
