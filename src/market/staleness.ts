import type { MarketSourceName } from './ticks';

/**
 * How long the live feed has been silent, when that is longer than the venue accepts (issue 21, item 4; docs/
 * trading-rules.md "Stale prices"). `age_ms`: wall time since the feed's last live tick (or since the source
 * started, when none has arrived); `max_age_ms`: MAX_PRICE_AGE_MS.
 */
export interface PriceStaleness {
  age_ms: number;
  max_age_ms: number;
}

/**
 * The staleness rule: a price is as fresh as the feed that confirms it, not as the last trade of its pair (a
 * quiet pair on a live feed has simply not traded; a stalled feed leaves every pair's last price behind the
 * market). Only a source whose prices come from outside is judged: the `synthetic` and `files` sources tick on
 * the venue's own clock, so their prices cannot fall behind a market.
 *
 * @param lastLiveAt wall time (ms) of the feed's last live tick, 0 when none yet
 * @param startedAt wall time (ms) the source started, undefined before
 * @returns the staleness, or undefined when prices are fresh or the rule does not apply
 */
export const stalenessOf = (
  source: MarketSourceName,
  maxAgeMs: number,
  lastLiveAt: number,
  startedAt: number | undefined,
  now: number,
): PriceStaleness | undefined => {
  if (source !== 'binance' || maxAgeMs <= 0 || startedAt === undefined) return undefined;
  const age = now - (lastLiveAt || startedAt);
  return age > maxAgeMs ? { age_ms: Math.round(age), max_age_ms: maxAgeMs } : undefined;
};
