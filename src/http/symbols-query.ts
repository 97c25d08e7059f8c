import { normalizeSymbol } from '../../domain/market/pair';
import { DomainError } from '../../domain/shared/errors';

/** Splits a comma-separated `symbols` query parameter: normalised (upper case, trimmed), de-duplicated, empty items dropped. */
export const symbolList = (raw: string): string[] => [
  ...new Set(
    raw
      .split(',')
      .map((s) => normalizeSymbol(s))
      .filter(Boolean),
  ),
];

/**
 * The `symbols` query parameter of the price lists (`/market/prices`, `/backtest/{id}/market/prices`) as
 * {@link symbolList}. A parameter present but naming no pair (`symbols=`, `symbols=,`) throws `VALIDATION_ERROR`
 * (422) rather than answering an empty object; the caller omits the parameter for every pair.
 */
export const requiredSymbols = (raw: string): string[] => {
  const symbols = symbolList(raw);
  if (symbols.length === 0) {
    throw new DomainError(
      'VALIDATION_ERROR',
      'invalid querystring: symbols: give at least one symbol, or omit symbols for every pair',
      { issues: [{ field: 'symbols', location: 'querystring', message: 'at least one symbol' }] },
    );
  }
  return symbols;
};
