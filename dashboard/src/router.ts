import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/market/BTCUSDT`): the venue serves one page at `/`, and every view is addressable,
 * bookmarkable and works with the browser's back button without the server knowing the dashboard's paths.
 */
export interface Route {
  /** Path segments after `#/`, e.g. `['backtests', 'bt_1']`. */
  parts: string[];
  query: URLSearchParams;
}

const parse = (): Route => {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = raw.split('?');
  return {
    parts: path.split('/').filter(Boolean).map(decodeURIComponent),
    query: new URLSearchParams(query),
  };
};

/** The current route, re-rendering on navigation. */
export const useRoute = (): Route => {
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const on = () => setRoute(parse());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
};

/** The `href` of a route: `href('backtests', id)` → `#/backtests/<id>`. */
export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;

/** Goes to a route (an entry in the history, as a link would). */
export const navigate = (to: string): void => {
  location.hash = to.replace(/^#/, '');
};
