import { DomainError } from './errors';

/**
 * The risk profile of an account or agent (spec "Risk profile"; ARCHITECTURE §8 risk chain, §14b). All values
 * are integer percentages or counts. `max_order_size_pct` is not one of the spec's three fields: it is the
 * design's fifth risk step (max order size as % of available cash), kept in every profile with its default,
 * accepted optionally and shown wherever the API shows a risk profile.
 */
export interface RiskProfile {
  /** Largest single-coin position as % of total equity, 1–100, default 25. */
  max_position_size_pct: number;
  /** Daily loss limit as % of starting balance, 1–100, default 20. */
  daily_loss_limit_pct: number;
  /** Simultaneous pending orders, 1–200, default 50. */
  max_open_orders: number;
  /** Largest order as % of available cash, 1–100, default 50 (ARCHITECTURE §14b). */
  max_order_size_pct: number;
}

/** Inclusive bounds of each risk field (spec "Risk profile", ARCHITECTURE §14b). */
export const RISK_PROFILE_BOUNDS: Readonly<Record<keyof RiskProfile, readonly [number, number]>> = {
  max_position_size_pct: [1, 100],
  daily_loss_limit_pct: [1, 100],
  max_open_orders: [1, 200],
  max_order_size_pct: [1, 100],
};

/** Defaults of every risk field (spec "Risk profile"; `max_order_size_pct` from ARCHITECTURE §14b). */
export const DEFAULT_RISK_PROFILE: Readonly<RiskProfile> = Object.freeze({
  max_position_size_pct: 25,
  daily_loss_limit_pct: 20,
  max_open_orders: 50,
  max_order_size_pct: 50,
});

/**
 * Completes a partial profile with `base` (defaults when absent) and checks every field is an integer inside
 * its bounds. Throws `DomainError('VALIDATION_ERROR')` naming the first bad field.
 */
export const resolveRiskProfile = (
  input: Partial<RiskProfile> | undefined,
  base: Readonly<RiskProfile> = DEFAULT_RISK_PROFILE,
): RiskProfile => {
  const profile: RiskProfile = { ...base, ...stripUndefined(input ?? {}) };
  for (const [field, [min, max]] of Object.entries(RISK_PROFILE_BOUNDS) as [
    keyof RiskProfile,
    readonly [number, number],
  ][]) {
    const value = profile[field];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new DomainError('VALIDATION_ERROR', `${field} must be an integer from ${min} to ${max}`, {
        field,
        min,
        max,
        value,
      });
    }
  }
  return profile;
};

/** True when both profiles hold the same values. */
export const sameRiskProfile = (a: RiskProfile, b: RiskProfile): boolean =>
  (Object.keys(RISK_PROFILE_BOUNDS) as (keyof RiskProfile)[]).every((k) => a[k] === b[k]);

const stripUndefined = <T extends object>(value: T): Partial<T> =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
