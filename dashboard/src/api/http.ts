import type { ErrorBody } from './contract';

/**
 * A failed request, carrying the venue's error envelope as is (spec "Errors"): `code` to branch on, `message`
 * to show, `details` (e.g. `issues[]` of a `VALIDATION_ERROR`). Network failures have `code` `NETWORK_ERROR`
 * and `status` 0.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** What a request sends besides its path: query, JSON body, and the credential it needs. */
export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined | null>;
  body?: unknown;
  /** `none`: public; `jwt`: the bearer token only; `wallet`: the bearer token and `X-Agent-Id` of the viewed agent. */
  auth?: 'none' | 'jwt' | 'wallet';
  signal?: AbortSignal;
}

/** How requests authenticate: set by the app from the session. */
export interface Credentials {
  token: string | null;
  agentId: string | null;
  /** Called when the venue refuses the token (expired, revoked): the app ends the session. */
  onUnauthorized(error: ApiError): void;
  /**
   * Called when the venue refuses a wallet request for the viewed agent (`PERMISSION_DENIED` 403: the agent was
   * deleted, or is not the account's): the app reads the account's agents again.
   */
  onAgentRefused?(error: ApiError): void;
}

let credentials: Credentials = { token: null, agentId: null, onUnauthorized: () => {} };

/** Sets the credentials every later request uses. */
export const setCredentials = (c: Credentials): void => {
  credentials = c;
};

const queryString = (query: RequestOptions['query']): string => {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
};

/**
 * One call of the venue's REST API (`/api/v1` + `path`), answering the parsed JSON body. Throws
 * {@link ApiError} with the venue's envelope on any non-2xx answer.
 */
export const request = async <T>(method: string, path: string, options: RequestOptions = {}): Promise<T> => {
  const auth = options.auth ?? 'wallet';
  const headers: Record<string, string> = { accept: 'application/json' };
  if (auth !== 'none' && credentials.token) headers.authorization = `Bearer ${credentials.token}`;
  if (auth === 'wallet' && credentials.agentId) headers['x-agent-id'] = credentials.agentId;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/api/v1${path}${queryString(options.query)}`, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      signal: options.signal ?? null,
    });
  } catch (e) {
    if ((e as Error).name === 'AbortError') throw e;
    throw new ApiError(0, 'NETWORK_ERROR', `the venue did not answer: ${(e as Error).message}`);
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const envelope = (body as ErrorBody | undefined)?.error;
    const error = envelope
      ? new ApiError(response.status, envelope.code, envelope.message, envelope.details)
      : new ApiError(response.status, 'HTTP_ERROR', `HTTP ${response.status} ${response.statusText}`);
    if (response.status === 401 && auth !== 'none') credentials.onUnauthorized(error);
    if (
      response.status === 403 &&
      auth === 'wallet' &&
      credentials.agentId &&
      error.code === 'PERMISSION_DENIED'
    )
      credentials.onAgentRefused?.(error);
    throw error;
  }
  return body as T;
};
