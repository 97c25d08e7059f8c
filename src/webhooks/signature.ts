import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries a delivery's signature (docs/webhooks.md, "Verifying a delivery"). */
export const SIGNATURE_HEADER = 'x-ptv-signature';

/**
 * Signs a delivery: `t=<ms>,v1=<hex>` where `hex` is HMAC-SHA256 under the webhook's secret of
 * `<t>.<body>` (the timestamp in ms since the epoch, a dot, the raw body bytes as sent). Binding the time lets a
 * receiver refuse old replays; each attempt is signed afresh.
 */
export const signDelivery = (secret: string, body: string, timestampMs: number): string =>
  `t=${timestampMs},v1=${createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex')}`;

/**
 * A receiver's check of {@link signDelivery} (the tests use it; docs/webhooks.md shows it): true when some `v1`
 * of the header matches, in constant time, and `t` is within `toleranceMs` of `nowMs` (default 5 minutes).
 */
export const verifyDelivery = (
  secret: string,
  body: string,
  header: string,
  nowMs: number = Date.now(),
  toleranceMs = 300_000,
): boolean => {
  const parts = header.split(',').map((p) => p.trim().split('='));
  const t = Number(parts.find(([k]) => k === 't')?.[1]);
  if (!Number.isFinite(t) || Math.abs(nowMs - t) > toleranceMs) return false;
  const expected = Buffer.from(signDelivery(secret, body, t).split('v1=')[1]!, 'hex');
  return parts
    .filter(([k]) => k === 'v1')
    .some(([, v]) => {
      const given = Buffer.from(v ?? '', 'hex');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
};
