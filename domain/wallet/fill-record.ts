import type { WalletEvent } from './events';

/**
 * How the fill model decided a fill (docs/trading-rules.md, "Fill models"; `OrderFilled`'s fields of the same
 * names): model and version, liquidity flag and fee rate, the reference it was decided on, the book levels a taker
 * walked, and a maker's print volume, participation share and what the wallet's earlier fills took of it.
 */
export interface FillRecord {
  fill_model: string;
  fill_model_version: number;
  liquidity: string;
  fee_rate: string;
  reference_price: string;
  book_levels: [string, string][] | null;
  book_taken: string | null;
  volume_available: string | null;
  participation_cap_pct: string | null;
  volume_taken: string | null;
  remaining_quantity: string;
}

/** The fill record of an `OrderFilled`, or null when it was recorded before fill models. */
export const fillRecordOf = (d: Extract<WalletEvent, { type: 'OrderFilled' }>['data']): FillRecord | null =>
  d.fill_model === undefined
    ? null
    : {
        fill_model: d.fill_model,
        fill_model_version: d.fill_model_version ?? 1,
        liquidity: d.liquidity ?? 'taker',
        fee_rate: d.fee_rate,
        reference_price: d.reference_price,
        book_levels: d.book_levels ?? null,
        book_taken: d.book_taken ?? null,
        volume_available: d.volume_available ?? null,
        participation_cap_pct: d.participation_cap_pct ?? null,
        volume_taken: d.volume_taken ?? null,
        remaining_quantity: d.remaining_quantity ?? '0.00000000',
      };
