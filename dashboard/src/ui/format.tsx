import type { ComponentChildren } from 'preact';
import { type Noun, nounOf } from './nouns';

/**
 * How numbers and times look everywhere (docs/dashboard.md "Reading the pages"): decimals exactly as the venue
 * sent them (8 places), digits grouped, trailing zeros dimmed so columns align on the decimal point; times in
 * the viewer's time zone with the UTC time on hover.
 */

const group = (int: string): string => int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Is a decimal string negative, zero, or positive? */
export const signOf = (value: string): -1 | 0 | 1 => {
  if (/^-/.test(value) && /[1-9]/.test(value)) return -1;
  return /[1-9]/.test(value) ? 1 : 0;
};

/**
 * A venue decimal (`"12345.67800000"`), right-aligned by its cell's class. `signed` colours it (gain, loss) and
 * writes a `+` on gains; `unit` follows it (`%`, `USDT`). `null` shows as a dash.
 */
export const Num = ({
  value,
  signed = false,
  unit,
}: {
  value: string | number | null | undefined;
  signed?: boolean;
  unit?: string;
}) => {
  if (value === null || value === undefined || value === '') return <span class="muted">—</span>;
  const text = String(value);
  const negative = text.startsWith('-');
  const [int = '0', frac] = text.replace(/^[-+]/, '').split('.');
  const kept = frac?.replace(/0+$/, '') ?? '';
  const zeros = frac ? frac.slice(kept.length) : '';
  const sign = signOf(text);
  const cls = signed ? (sign > 0 ? 'num gain' : sign < 0 ? 'num loss' : 'num') : 'num';
  return (
    <span class={cls} data-value={text}>
      {negative ? '−' : signed && sign > 0 ? '+' : ''}
      {group(int)}
      {frac !== undefined ? '.' : ''}
      {kept}
      {zeros ? <span class="z">{zeros}</span> : null}
      {unit ? <span class="unit"> {unit}</span> : null}
    </span>
  );
};

/**
 * The metric `key` of a venue answer, or null (shown as a dash by {@link Num}) when the venue names it in
 * `undefined_metrics`: such a metric is answered as "0" on the wire, and an undefined ratio is no real zero.
 */
export const definedMetric = <T extends { undefined_metrics: readonly string[] }, K extends keyof T & string>(
  x: T,
  key: K,
): T[K] | null => (x.undefined_metrics.includes(key) ? null : x[key]);

/** A unit said once for several figures (a column's header, a card's label): ` (USDT)`. */
export const UnitNote = ({ unit }: { unit: string }) => (
  <span class="unit-note">
    {' ('}
    <span class="unit">{unit}</span>)
  </span>
);

/**
 * A count with the noun it counts as its unit (`12 fills`, `1 fill`): the spec's integers (`total_trades`,
 * `trade_count`, events) are counts, and a bare integer beside decimals would not say of what.
 */
export const Count = ({ n, of }: { n: number | null | undefined; of: Noun }) =>
  n === null || n === undefined ? (
    <span class="muted">—</span>
  ) : (
    <span class="num" data-value={String(n)}>
      {group(String(n))}
      <span class="unit"> {nounOf(of, n)}</span>
    </span>
  );

/** An ordinal (a rank, a revision) as `#3`: the `#` is its unit. */
export const Ord = ({ n }: { n: number }) => <span class="ord">#{n}</span>;

const localFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hour12: false,
});

/** `2026-01-05 13:03:12 UTC` */
export const utcText = (iso: string): string =>
  `${new Date(iso)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, '')} UTC`;

/** A time in the viewer's zone, with the UTC time on hover. */
export const Time = ({ iso }: { iso: string | null | undefined }) => {
  if (!iso) return <span class="muted">—</span>;
  return (
    <time dateTime={iso} title={utcText(iso)}>
      {localFormat.format(new Date(iso))}
    </time>
  );
};

/** The viewer's zone name, said once in page footers ("times in Europe/Paris; UTC on hover"). */
export const viewerZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A short id (first 8 characters) with the whole id on hover. */
export const ShortId = ({ id }: { id: string }) => (
  <code title={id} class="id">
    {id.length > 12 ? `${id.slice(0, 8)}…` : id}
  </code>
);

/** Side of an order, coloured. */
export const Side = ({ side }: { side: string }) => (
  <span class={side === 'buy' ? 'gain' : 'loss'}>{side}</span>
);

/** A status word as a badge. */
export const Badge = ({ children, tone }: { children: ComponentChildren; tone?: string }) => (
  <span class={`badge ${tone ?? ''}`}>{children}</span>
);
