import { useEffect, useState } from 'preact/hooks';
import type { Registered } from '../api/contract';
import { login, register } from '../api/venue';
import { loggedOutReason, startSession } from '../session';
import { useStore } from '../store';
import { ErrorNotice, TextField } from '../ui/components';
import { markReady } from '../ui/ready';

const renew = (c: { apiKey: string; apiSecret: string }) =>
  login({ api_key: c.apiKey, api_secret: c.apiSecret });

/**
 * The login page: the account's API key and secret become a JWT (`POST /auth/login`). The secret never leaves
 * this page's memory. A person without an account can register one here (`POST /auth/register`): its key and
 * secret are shown once, as the venue says, before logging in with them.
 */
export const LoginPage = () => {
  const reason = useStore(loggedOutReason);
  const [apiKey, setApiKey] = useState('');
  const [apiSecret, setApiSecret] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Registered | null>(null);
  useEffect(() => markReady('login'), []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const token = await login({ api_key: apiKey.trim(), api_secret: apiSecret.trim() });
      startSession(token, { apiKey: apiKey.trim(), apiSecret: apiSecret.trim() }, renew);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const account = await register({ display_name: name.trim() });
      setCreated(account);
      setApiKey(account.api_key);
      setApiSecret(account.api_secret);
    } catch (err) {
      setError(err);
    }
  };

  return (
    <main id="main" class="login">
      <h1>Paper-trading venue</h1>
      <p class="muted">Watch your agents trade: equity, positions, fills, backtests and battles.</p>
      {reason ? (
        <p class="notice" role="status">
          {reason}
        </p>
      ) : null}
      <form class="card" onSubmit={submit} aria-labelledby="login-title">
        <h2 id="login-title">Log in with your account key</h2>
        <TextField
          label="API key"
          name="api_key"
          autoComplete="username"
          placeholder="ak_live_…"
          required
          value={apiKey}
          onValue={setApiKey}
        />
        <TextField
          label="API secret"
          name="api_secret"
          type="password"
          autoComplete="current-password"
          placeholder="sk_live_…"
          required
          value={apiSecret}
          onValue={setApiSecret}
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Logging in…' : 'Log in'}
        </button>
        <p class="muted small">
          The secret is kept in this tab's memory only, to renew the one-hour token; closing the tab logs you
          out.
        </p>
      </form>
      <ErrorNotice error={error} />
      <details class="card">
        <summary>No account yet? Register one</summary>
        {created ? (
          <div class="notice" role="status" data-testid="registered">
            <p>
              Account <strong>{created.display_name}</strong> registered with {created.starting_balance} USDT.{' '}
              {created.message}
            </p>
            <p>
              API key <code>{created.api_key}</code>
              <br />
              API secret <code>{created.api_secret}</code>
            </p>
            <p>Save the secret now: the venue shows it only this once. Both are filled in above: log in.</p>
          </div>
        ) : (
          <form onSubmit={create}>
            <label>
              Display name
              <input
                name="display_name"
                required
                maxLength={64}
                value={name}
                onInput={(e) => setName(e.currentTarget.value)}
              />
            </label>
            <button type="submit">Register</button>
          </form>
        )}
      </details>
      <p class="muted small">
        Agents trade through the API: see <a href="/docs">/docs</a> and the README.
      </p>
    </main>
  );
};
