/**
 * Cancel reasons that mean the order's time in force ended it, not its owner (docs/trading-rules.md, "Time in
 * force"): `unfilled` — the rest of a market order or an IOC the book could not hold, dropped at once; `fill_or_kill`
 * — a FOK that could not fill whole, dropped without a fill. Binance calls such an order `EXPIRED` (its Spot API
 * "Order status": "the order was canceled according to the order type's rules (e.g. LIMIT FOK orders with no fill,
 * LIMIT IOC or MARKET orders that partially fill)"); the venue's status for it is `cancelled` with this reason.
 */
const EXPIRY_REASONS: readonly string[] = ['unfilled', 'fill_or_kill'];

/** True when a cancel of `reason` was the order's time in force ending it (see {@link EXPIRY_REASONS}). */
export const isExpiry = (reason: string | null | undefined): boolean =>
  reason != null && EXPIRY_REASONS.includes(reason);
