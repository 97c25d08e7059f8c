import { afterAll, beforeAll } from 'vitest';
import { linkedDataDir } from '../market/support';
import { type RealDataServer, startRealDataServer } from '../support/real-data-server';

/**
 * The real server process for the original product's clients (issue 17, docs/compatibility.md): `src/main.ts
 * serve` on the real hourly candles of BTCUSDT and ETHUSDT (replayed as the live feed by the `files` source),
 * embedded PGlite in a temporary DATA_DIR, or a fresh database on DATABASE_URL's server when that is set.
 */
export type CompatServer = RealDataServer;

export const startCompatServer = async (env: Record<string, string> = {}): Promise<CompatServer> => {
  const market = linkedDataDir(['exchangeInfo.json', 'klines/1h/BTCUSDT-1h.csv', 'klines/1h/ETHUSDT-1h.csv']);
  try {
    // The server process's own default log level (startRealDataServer's is `info`).
    const server = await startRealDataServer('ptv-compat-', {
      MARKET_DATA_DIR: market.dir,
      LOG_LEVEL: 'warn',
      ...env,
    });
    return {
      ...server,
      async close() {
        await server.close();
        market.remove();
      },
    };
  } catch (error) {
    market.remove();
    throw error;
  }
};

/** An answer: status, JSON body and headers. */
export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/**
 * A client sending what the original product's SDK sends: its credential as `X-API-Key` or a JWT bearer, JSON
 * bodies, paths under `/api/v1`.
 */
export const client = (base: string, credential: { apiKey?: string; token?: string } = {}) => {
  const headers: Record<string, string> = {};
  if (credential.apiKey) headers['x-api-key'] = credential.apiKey;
  if (credential.token) headers.authorization = `Bearer ${credential.token}`;
  return async (method: string, url: string, body?: unknown): Promise<Answer> => {
    const r = await fetch(`${base}${url.startsWith('/health') ? '' : '/api/v1'}${url}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined, headers: r.headers };
  };
};

/** An account (key, secret, JWT) with `agents` agents (id and key each), registered over HTTP. */
export const newTrader = async (base: string, agents = 1) => {
  const anonymous = client(base);
  const reg = await anonymous('POST', '/auth/register', { display_name: `Compat ${Date.now()}` });
  if (reg.status !== 201) throw new Error(`register: ${reg.status} ${JSON.stringify(reg.body)}`);
  const login = await anonymous('POST', '/auth/login', {
    api_key: reg.body.api_key,
    api_secret: reg.body.api_secret,
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`);
  const account = {
    accountId: reg.body.account_id as string,
    apiKey: reg.body.api_key as string,
    token: login.body.token as string,
  };
  const jwt = client(base, { token: account.token });
  const created: { agentId: string; apiKey: string }[] = [];
  for (let i = 0; i < agents; i++) {
    const a = await jwt('POST', '/agents', { display_name: `Compat agent ${i + 1}` });
    if (a.status !== 201) throw new Error(`agent: ${a.status} ${JSON.stringify(a.body)}`);
    created.push({ agentId: a.body.agent_id, apiKey: a.body.api_key });
  }
  return { ...account, agents: created, jwt, key: client(base, { apiKey: account.apiKey }) };
};

/** A trader of {@link newTrader}: the account, its agents and a client for each credential. */
export type CompatTrader = Awaited<ReturnType<typeof newTrader>>;

/**
 * The compat server of a test file and a trader with `agents` agents on it: started before the file's tests (up to
 * 150 s: the server process loads the data set), closed after them. Read `base` and `trader` inside tests.
 */
export const useCompatTrader = (agents: number): { readonly base: string; readonly trader: CompatTrader } => {
  let server: CompatServer | undefined;
  const fixture = { base: '', trader: undefined as unknown as CompatTrader };
  beforeAll(async () => {
    server = await startCompatServer();
    fixture.base = server.url;
    fixture.trader = await newTrader(fixture.base, agents);
  }, 150_000);
  afterAll(async () => {
    await server?.close();
  }, 30_000);
  return fixture;
};
