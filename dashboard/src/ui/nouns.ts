/**
 * The nouns counted figures are said with (docs/dashboard.md "Reading the pages"): the singular for exactly 1 ("1
 * day", "1 trade"), the plural for every other figure ("0 days", "2.5 days"). Plain TypeScript (no JSX), so the
 * venue's unit tests import it.
 */

/** A count's noun: its singular and plural (`['fill', 'fills']`). */
export type Noun = [one: string, many: string];

/** The word of `of` for `n` (a count, or a venue decimal such as `"2.5"`): the singular for exactly 1. */
export const nounOf = (of: Noun, n: string | number | null | undefined): string =>
  n !== null && n !== undefined && Number(n) === 1 ? of[0] : of[1];

/** The noun of a count of fills (the spec's `total_trades` and `trade_count` count fills). */
export const FILLS: Noun = ['fill', 'fills'];
/** The noun of a count of closed trades (a sell each: ARCHITECTURE §11), e.g. a backtest's `closed_trades`. */
export const TRADES: Noun = ['trade', 'trades'];
/** The noun of a count of agents (a battle's participants). */
export const AGENTS: Noun = ['agent', 'agents'];
/** The noun of a number of days (`1 day`, `2.5 days`). */
export const DAYS: Noun = ['day', 'days'];
