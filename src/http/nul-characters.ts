import { DomainError } from '../../domain/shared/errors';

/**
 * U+0000 in client input. PostgreSQL stores neither a NUL in `text` nor `\u0000` in `jsonb`, so a NUL that got
 * past validation failed later, as a 500 (or in a projection). Input is refused at the edge instead.
 */

/** The path (`a.b.0`) of the first string or key holding U+0000 in a parsed JSON value, or `undefined`. */
export const nulPath = (value: unknown, path = ''): string | undefined => {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'body' : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return path || 'body';
    const found = nulPath(child, childPath);
    if (found) return found;
  }
  return undefined;
};

/** `VALIDATION_ERROR` 422 naming where the NUL is: a body path, a query parameter or the path. */
export const nulCharacterError = (field: string, location: 'body' | 'querystring' | 'params'): DomainError =>
  new DomainError('VALIDATION_ERROR', `${field}: NUL characters (U+0000) are not accepted`, {
    issues: [{ field, location, message: 'contains a NUL character (U+0000)' }],
  });

const ENCODED_NUL = /%00/i;

/**
 * Where a raw request URL encodes U+0000: the first query parameter holding one (its name, location
 * `querystring`), else the path (`path`, location `params`); `undefined` when it holds none.
 */
export const urlNul = (url: string): { field: string; location: 'querystring' | 'params' } | undefined => {
  if (!ENCODED_NUL.test(url)) return undefined;
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  if (ENCODED_NUL.test(path)) return { field: 'path', location: 'params' };
  for (const pair of url.slice(mark + 1).split('&')) {
    if (!ENCODED_NUL.test(pair)) continue;
    const [name = ''] = pair.split('=');
    let field = name;
    try {
      field = decodeURIComponent(name.replaceAll('+', ' ')).replaceAll('\u0000', '') || 'query';
    } catch {
      field = 'query';
    }
    return { field, location: 'querystring' };
  }
  return { field: 'query', location: 'querystring' };
};
