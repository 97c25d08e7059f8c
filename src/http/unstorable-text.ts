import { DomainError } from '../../domain/shared/errors';

/**
 * Text PostgreSQL cannot store, in client input: U+0000 (neither `text` nor `jsonb` holds a NUL) and a lone
 * UTF-16 surrogate (half of a pair without the other half, which a JSON body can spell as `"\ud800"`: refused as
 * invalid Unicode). Input holding either got past validation and failed later, as a 500 when the event or the
 * read model was written; it is refused at the edge instead, for every body, whichever field it is in.
 */

/** What makes a string unstorable: a NUL, or (with the `u` flag, which leaves paired halves alone) a lone surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding U+0000 is the point
const UNSTORABLE = /[\u0000\ud800-\udfff]/u;

/** Why a string cannot be stored, in words for the error (`undefined`: it can). */
const unstorableReason = (text: string): string | undefined => {
  const hit = UNSTORABLE.exec(text);
  if (!hit) return undefined;
  return hit[0] === '\u0000'
    ? 'contains a NUL character (U+0000)'
    : 'contains a lone UTF-16 surrogate (not well-formed Unicode)';
};

/**
 * The first string or key of a parsed JSON value that cannot be stored: its path (`a.b.0`; a key's problem is
 * reported at the object holding it, `body` at the top) and the reason, or `undefined` when all can be.
 */
export const unstorablePath = (value: unknown, path = ''): { field: string; reason: string } | undefined => {
  if (typeof value === 'string') {
    const reason = unstorableReason(value);
    return reason ? { field: path || 'body', reason } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const keyReason = unstorableReason(key);
    if (keyReason) return { field: path || 'body', reason: keyReason };
    const found = unstorablePath(child, path ? `${path}.${key}` : key);
    if (found) return found;
  }
  return undefined;
};

/** `VALIDATION_ERROR` 422 naming where the unstorable text is: a body path, a query parameter or the path. */
export const unstorableTextError = (
  field: string,
  location: 'body' | 'querystring' | 'params',
  reason = 'contains a NUL character (U+0000)',
): DomainError =>
  new DomainError('VALIDATION_ERROR', `${field}: ${reason}`, {
    issues: [{ field, location, message: reason }],
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
