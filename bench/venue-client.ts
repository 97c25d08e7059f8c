import { type Dispatcher, request as undiciRequest } from 'undici';

/** A venue's JSON answer: HTTP status and the parsed body (`{}` when empty). */
export interface VenueResponse {
  status: number;
  json: Record<string, any>;
}

/**
 * JSON calls to a running venue's `/api/v1` for the benches that start one (bench/backtest-prober.ts,
 * bench/market-scale.ts): `call` answers any status; `ok` throws `Error("<method> <url>: <status> <body…>")` on a
 * status ≥ 300 (the body cut at 500 characters) and returns the body.
 */
export const venueClient = (base: string, dispatcher: Dispatcher) => {
  const call = async (
    method: 'GET' | 'POST',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<VenueResponse> => {
    const res = await undiciRequest(`${base}/api/v1${url}`, {
      method,
      dispatcher,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, json: text ? JSON.parse(text) : {} };
  };
  const ok = async (...args: Parameters<typeof call>): Promise<VenueResponse['json']> => {
    const r = await call(...args);
    if (r.status >= 300)
      throw new Error(`${args[0]} ${args[1]}: ${r.status} ${JSON.stringify(r.json).slice(0, 500)}`);
    return r.json;
  };
  return { call, ok };
};
