import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { DomainError } from '../../domain/shared/errors';

/**
 * The SSRF rule of outbound calls the venue makes for its clients (webhooks; docs/webhooks.md, "The SSRF rule"):
 * only `http:` and `https:` URLs, with no user name or password in them (the credentials rule: a URL is kept in the
 * log and shown by the reads; a receiver knows the venue by the signature), and only to public unicast addresses:
 * every address the host name resolves to must be one, so loopback, private (RFC 1918, IPv6 unique local),
 * link-local (with the cloud metadata address 169.254.169.254), carrier-grade NAT, unspecified, multicast,
 * broadcast, reserved, documentation ranges and IPv6 forms that embed an IPv4 address (mapped ones are judged by
 * that address) are refused. The operator setting `WEBHOOKS_ALLOW_PRIVATE=true` lifts the address rule (the scheme
 * and credentials rules stay), e.g. for receivers on the same host or network. Webhooks registered before the
 * credentials rule keep their URL for deliveries; the reads show its user name and password as `***`
 * (`queries/webhooks.ts`).
 */

/** Whether `address` (an IPv4 or IPv6 literal) may be called: `ipaddr.js` classifies it as plain `unicast`. */
export const isPublicAddress = (address: string): boolean => {
  if (!ipaddr.isValid(address)) return false;
  // `process` turns an IPv4-mapped IPv6 address (::ffff:127.0.0.1) into the IPv4 address it carries.
  return ipaddr.process(address).range() === 'unicast';
};

/** A refused URL: `VALIDATION_ERROR` on the field that named it. */
const refused = (field: string, message: string, details: Record<string, unknown> = {}) =>
  new DomainError('VALIDATION_ERROR', message, { field, ...details });

/** Options of {@link checkOutboundUrl}. */
export interface OutboundUrlOptions {
  /** `WEBHOOKS_ALLOW_PRIVATE`: any address is allowed. */
  allowPrivate: boolean;
  /** The request field named in the error (default `url`). */
  field?: string;
  /** Resolves a host name to all its addresses (default `dns.promises.lookup` with `all: true`). */
  resolve?: (host: string) => Promise<string[]>;
}

const resolveAll = async (host: string): Promise<string[]> =>
  (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Checks a URL against the SSRF rule at registration: parses it, requires `http:`/`https:` and no user name or
 * password, resolves the host and checks every address. Throws `VALIDATION_ERROR` (details `field`, `reason`:
 * `malformed`, `scheme`, `credentials`, `unresolvable`, `private_address` with the refused `address`).
 * Deliveries check again when they connect ({@link guardedLookup}), since a name can resolve elsewhere later.
 */
export const checkOutboundUrl = async (url: string, options: OutboundUrlOptions): Promise<URL> => {
  const field = options.field ?? 'url';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refused(field, 'must be an absolute http(s) URL', { reason: 'malformed' });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw refused(field, 'only http and https URLs are allowed', { reason: 'scheme' });
  // A password in the URL would be kept in the log for good and shown by every read of the webhook; the delivery's
  // signature (X-PTV-Signature) is how a receiver knows the venue.
  if (parsed.username !== '' || parsed.password !== '')
    throw refused(
      field,
      'must not carry a user name or password: receivers check the X-PTV-Signature header',
      {
        reason: 'credentials',
      },
    );
  if (options.allowPrivate) return parsed;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = await (options.resolve ?? resolveAll)(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0)
      throw refused(field, `the host ${host} does not resolve`, { reason: 'unresolvable' });
  }
  for (const address of addresses) {
    if (!isPublicAddress(address))
      throw refused(
        field,
        `the host ${host} resolves to ${address}, a loopback, private, link-local or reserved address: webhooks may only call public addresses`,
        { reason: 'private_address', address },
      );
  }
  return parsed;
};

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | dns.LookupAddress[],
  family?: number,
) => void;

/**
 * A `dns.lookup`-compatible function for the delivery's connection (undici's `connect.lookup`) that refuses a
 * host any of whose addresses is not public, so the address connected to is the one checked (no DNS rebinding
 * between the check and the connection). With `allowPrivate` it is plain `dns.lookup`.
 */
export const guardedLookup =
  (allowPrivate: boolean) =>
  (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as dns.LookupAddress[];
      const bad = allowPrivate ? undefined : list.find((a) => !isPublicAddress(a.address));
      if (bad) {
        const error: NodeJS.ErrnoException = new Error(
          `refused: ${hostname} resolves to ${bad.address}, not a public address (WEBHOOKS_ALLOW_PRIVATE)`,
        );
        error.code = 'ESSRF';
        return callback(error, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} does not resolve`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
