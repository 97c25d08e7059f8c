import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Portfolio, WalletEvent } from '../api/contract';
import { QUOTE } from '../api/pairs';
import * as venue from '../api/venue';
import { Empty, ErrorNotice, Loading, Panel, Stat } from '../ui/components';
import { Badge, Count, Num, Ord, ShortId, Time, utcText, viewerZone } from '../ui/format';
import { useAsync } from '../ui/hooks';
import { markReady } from '../ui/ready';
import { Head, right } from '../ui/table';
import { PositionsTable } from '../ui/wallet-tables';

const PAGE = 100;

/** A few words for an event row: the fields an auditor looks for first. */
const gist = (e: WalletEvent): string => {
  const d = e.data as Record<string, unknown>;
  const pick = (...keys: string[]) =>
    keys
      .filter((k) => d[k] !== undefined && d[k] !== null)
      .map((k) => `${k} ${String(d[k])}`)
      .join(' · ');
  switch (e.type) {
    case 'OrderPlaced':
      return pick('side', 'type', 'quantity', 'symbol', 'price', 'trigger_price');
    case 'OrderFilled':
      return pick('side', 'quantity', 'symbol', 'executed_price', 'fee', 'realized_pnl');
    case 'OrderCancelled':
      return pick('order_id', 'reason', 'unlocked_amount', 'unlocked_asset');
    case 'OrderRejected':
      return pick('code', 'message');
    case 'SessionStarted':
      return pick('session_id', 'starting_balance', 'reason');
    default:
      return pick('owner_type', 'day', 'equity', 'ending_equity', 'total_pnl');
  }
};

/** `2026-01-31T12:00` in the viewer's zone as ISO 8601 with its offset, for `as_of`. */
const localToIso = (local: string): string => {
  const d = new Date(local);
  const offset = -d.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const hh = String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0');
  const mm = String(Math.abs(offset) % 60).padStart(2, '0');
  return `${local.length === 16 ? `${local}:00` : local}${sign}${hh}:${mm}`;
};

/**
 * Audit (docs/dashboard.md): the viewed wallet's event log (`/account/events`, paged by revision) with the
 * venue's check of its hash chain and read models (`/account/audit`), and the portfolio folded from the log up
 * to a chosen time (`/account/portfolio?as_of=`).
 */
export const AuditPage = () => {
  const audit = useAsync(() => venue.walletAudit(), []);
  const [events, setEvents] = useState<WalletEvent[]>([]);
  const [after, setAfter] = useState(-1);
  const [more, setMore] = useState(false);
  const [loadError, setLoadError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [open, setOpen] = useState<number | null>(null);

  const loadMore = async (from: number) => {
    setLoading(true);
    setLoadError(null);
    try {
      const page = await venue.walletEvents(from, PAGE);
      setEvents((e) => (from < 0 ? page.events : [...e, ...page.events]));
      setAfter(page.next_after);
      setMore(page.has_more);
    } catch (e) {
      setLoadError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void loadMore(-1);
  }, []);
  useEffect(() => {
    if (audit.data) markReady('audit');
  }, [audit.data]);

  const a = audit.data;
  return (
    <div class="page">
      <h1>Audit</h1>
      <Panel
        id="chain"
        title="Hash chain and read models"
        actions={
          <button type="button" onClick={audit.reload} disabled={audit.loading}>
            {audit.loading ? 'Verifying…' : 'Verify again'}
          </button>
        }
      >
        <ErrorNotice error={audit.error} />
        {a ? (
          <div
            data-testid="chain-status"
            data-intact={String(a.chain.intact)}
            data-agree={String(a.read_models.agree)}
          >
            <div class="stats compact">
              <Stat label="Hash chain">
                {a.chain.intact ? <Badge tone="ok">intact</Badge> : <Badge tone="bad">broken</Badge>}
              </Stat>
              <Stat label="Read models">
                {a.read_models.agree ? (
                  <Badge tone="ok">agree with the log</Badge>
                ) : (
                  <Badge tone="bad">differ</Badge>
                )}
              </Stat>
              <Stat label="Events verified">
                <Count n={a.events} of={['event', 'events']} />
              </Stat>
              <Stat label="Last revision">
                <Ord n={a.head_revision} />
              </Stat>
              <Stat label="Last hash">
                {a.last_hash ? <code title={a.last_hash}>{a.last_hash.slice(0, 16)}…</code> : '—'}
              </Stat>
              <Stat label="Verified">
                <Time iso={a.verified_at} />
              </Stat>
            </div>
            {a.chain.break ? (
              <p class="notice error" role="alert">
                Break at revision {a.chain.break.revision}: {a.chain.break.reason} (expected{' '}
                {a.chain.break.expected}, found {a.chain.break.actual}).
              </p>
            ) : null}
            {a.read_models.mismatches.length > 0 ? (
              <ul class="notice error">
                {a.read_models.mismatches.map((m) => (
                  <li key={m}>{m}</li>
                ))}
              </ul>
            ) : null}
            <p class="muted small">
              Every event's SHA-256 hash recomputed by the venue and linked to the previous one (stream{' '}
              <code>{a.stream_id}</code>); balances, positions, open orders and session figures compared with
              the fold of the log up to revision {a.read_models.revision}.
            </p>
          </div>
        ) : audit.loading ? (
          <Loading what="the verification" />
        ) : null}
      </Panel>
      <AsOf />
      <Panel
        id="events"
        title="Event log"
        actions={
          <span class="muted small">
            <Count n={events.length} of={['event', 'events']} /> shown
          </span>
        }
      >
        <ErrorNotice error={loadError} />
        {events.length === 0 && !loading ? (
          <Empty>No events yet: the wallet's log starts with its first order.</Empty>
        ) : (
          <table data-testid="event-log">
            <Head cols={[right('Rev.'), 'Occurred', 'Event', 'What', 'Hash']} />
            <tbody>
              {events.map((e) => (
                <Fragment key={e.revision}>
                  <tr data-revision={e.revision}>
                    <td class="r">
                      <Ord n={e.revision} />
                    </td>
                    <td>
                      <Time iso={e.occurred_at} />
                    </td>
                    <td>
                      <button
                        type="button"
                        class="link"
                        aria-expanded={open === e.revision}
                        onClick={() => setOpen(open === e.revision ? null : e.revision)}
                      >
                        {e.type}
                      </button>
                    </td>
                    <td class="small">{gist(e)}</td>
                    <td>
                      <ShortId id={e.hash} />
                    </td>
                  </tr>
                  {open === e.revision ? (
                    <tr class="detail">
                      <td colSpan={5}>
                        <pre>{JSON.stringify(e, null, 2)}</pre>
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        )}
        {more ? (
          <button type="button" onClick={() => loadMore(after)} disabled={loading}>
            {loading ? 'Loading…' : `Next ${PAGE} events`}
          </button>
        ) : null}
      </Panel>
    </div>
  );
};

/** "Portfolio as of": the wallet folded from its log up to a time the viewer picks (in their own zone). */
const AsOf = () => {
  const [local, setLocal] = useState('');
  const [result, setResult] = useState<Portfolio | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (!local) return;
    setBusy(true);
    setError(null);
    try {
      setResult(await venue.portfolio(localToIso(local)));
    } catch (err) {
      setError(err);
      setResult(null);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Panel id="as-of" title="Portfolio as of">
      <form class="filters" onSubmit={submit}>
        <label>
          Time ({viewerZone()})
          <input
            type="datetime-local"
            name="as_of"
            step={1}
            value={local}
            onInput={(e) => setLocal(e.currentTarget.value)}
            required
          />
        </label>
        <button type="submit" class="primary" disabled={busy || !local}>
          Fold the log
        </button>
      </form>
      <ErrorNotice error={error} />
      {result ? (
        <div data-testid="as-of-result" data-revision={result.revision}>
          <p class="muted small">
            As of {result.as_of ? utcText(result.as_of) : '—'}: revision {result.revision} of the log, session{' '}
            {result.session_id ? <ShortId id={result.session_id} /> : '—'}.
          </p>
          <div class="stats compact">
            <Stat label="Equity">
              <Num value={result.total_equity} unit={QUOTE} />
            </Stat>
            <Stat label="Cash">
              <Num value={result.available_cash} unit={QUOTE} />
            </Stat>
            <Stat label="Locked">
              <Num value={result.locked_cash} unit={QUOTE} />
            </Stat>
            <Stat label="Realized PnL">
              <Num value={result.realized_pnl} signed unit={QUOTE} />
            </Stat>
            <Stat label="Fees">
              <Num value={result.fees_paid} unit={QUOTE} />
            </Stat>
          </div>
          {result.positions.length ? (
            <PositionsTable positions={result.positions} />
          ) : (
            <Empty>No positions at that time.</Empty>
          )}
        </div>
      ) : null}
    </Panel>
  );
};
