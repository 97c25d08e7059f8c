import { describe, expect, it } from 'vitest';
import { useTestApp } from '../support/test-app';

/**
 * Binance's `GET /sapi/v1/system/status` at the door (ccxt's `fetchStatus`) is the venue's own health, the one
 * `/health` answers the public (`venueHealth`): 0 "normal" while it is `ok`, 1 "system_maintenance" while a check
 * fails or the database is away.
 */
const t = useTestApp();

const statusOf = async () => {
  const binance = await t.app.inject({ method: 'GET', url: '/binance/sapi/v1/system/status' });
  const health = await t.app.inject({ method: 'GET', url: '/health' });
  return { binance: { code: binance.statusCode, body: binance.json() }, health: health.json().status };
};

describe('GET /binance/sapi/v1/system/status', () => {
  it("follows /health: normal while it is ok, system maintenance while a capability's check fails", async () => {
    expect(await statusOf()).toEqual({
      binance: { code: 200, body: { status: 0, msg: 'normal' } },
      health: 'ok',
    });
    const checks = t.app.services.healthChecks;
    const failing = { name: 'failing_for_test', check: async () => ({ ok: false, error: 'test' }) };
    checks.push(failing);
    try {
      expect(await statusOf()).toEqual({
        binance: { code: 200, body: { status: 1, msg: 'system_maintenance' } },
        health: 'degraded',
      });
    } finally {
      checks.splice(checks.indexOf(failing), 1);
    }
    expect((await statusOf()).binance.body).toEqual({ status: 0, msg: 'normal' });
  });
});
