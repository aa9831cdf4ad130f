/**
 * Where webhooks may be sent (CONTRACT §13): http(s) only, and never to loopback, link-local, private or
 * otherwise internal addresses unless `webhooks.allow_private` is set, so a subscription cannot make a
 * node reach into its own network (SSRF). A hostname is checked through what it resolves to, at
 * subscription time and again at every connection (`guardedLookup`, the lookup of the delivery agent),
 * so a name that later resolves to an internal address (DNS rebinding) is refused when it is used.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { badRequest } from '@strata/store';

/** IPv4 ranges refused: [first octets as a number, prefix length, what it is]. */
const V4_BLOCKED: [number, number, string][] = [
  [0x00000000, 8, 'this network'],
  [0x0a000000, 8, 'private'],
  [0x64400000, 10, 'carrier-grade NAT'],
  [0x7f000000, 8, 'loopback'],
  [0xa9fe0000, 16, 'link-local'],
  [0xac100000, 12, 'private'],
  [0xc0000000, 24, 'IETF protocol assignments'],
  [0xc0a80000, 16, 'private'],
  [0xc6120000, 15, 'benchmarking'],
  [0xe0000000, 4, 'multicast'],
  [0xf0000000, 4, 'reserved'],
];

function v4Number(bytes: readonly number[]): number {
  return ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0;
}

function v4Reason(bytes: readonly number[]): string | null {
  const n = v4Number(bytes);
  for (const [base, bits, what] of V4_BLOCKED) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === base) return what;
  }
  return null;
}

function parseV4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.map(Number);
}

/** An IPv6 address as 16 bytes (an embedded dotted IPv4 tail included), or null when it is not one. */
function parseV6(text: string): number[] | null {
  let s = text.toLowerCase();
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  let tail: number[] = [];
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    const v4 = parseV4(s.slice(lastColon + 1));
    if (!v4) return null;
    tail = v4;
    s = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const bytes: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    bytes.push(v >> 8, v & 0xff);
  }
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

function v6Reason(b: readonly number[]): string | null {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 15) && b[15] === 0) return 'unspecified';
  if (zeros(0, 15) && b[15] === 1) return 'loopback';
  if ((b[0] & 0xfe) === 0xfc) return 'unique local (private)';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return 'site-local';
  if (b[0] === 0xff) return 'multicast';
  // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) translates into the operator's own IPv4 network, whatever
  // the embedded address: refused whole.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b[4] === 0x00 && b[5] === 0x01) return 'local-use NAT64';
  // Addresses that carry an IPv4 address are judged by it: mapped (::ffff:a.b.c.d), translated
  // (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:aabb:ccdd::) and
  // Teredo (2001:0:<server v4>:<flags>:<port>:<client v4 inverted>: both addresses are reached).
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Reason(b.slice(12));
  if (zeros(0, 8) && b[8] === 0xff && b[9] === 0xff && zeros(10, 12)) return v4Reason(b.slice(12));
  if (zeros(0, 12)) return v4Reason(b.slice(12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4Reason(b.slice(12));
  if (b[0] === 0x20 && b[1] === 0x02) return v4Reason(b.slice(2, 6));
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return v4Reason(b.slice(4, 8)) ?? v4Reason(b.slice(12).map((x) => x ^ 0xff));
  return null;
}

/** Why a literal address may not receive webhooks (e.g. 'loopback'), or null when it may. Not an address: null. */
export function blockedAddressReason(address: string): string | null {
  const kind = isIP(address);
  if (kind === 4) return v4Reason(parseV4(address)!);
  if (kind === 6) {
    const bytes = parseV6(address);
    return bytes ? v6Reason(bytes) : 'unreadable IPv6 address';
  }
  return null;
}

/** The error a delivery's connection fails with when the name resolves to an address it may not reach. */
export class BlockedAddressError extends Error {
  readonly code = 'EWEBHOOKBLOCKED';
  /** for the node's own log, never for the caller */
  readonly address: string;
  readonly reason: string;
  constructor(host: string, address: string, reason: string) {
    // The address and its kind are not named: a delivery's error is shown to the subscriber, and would
    // tell it what any name resolves to inside the node's network.
    super(`${host} resolves to an internal address; webhooks are not sent to internal addresses unless webhooks.allow_private is set`);
    this.address = address;
    this.reason = reason;
  }
}

export type ResolveAll = (host: string) => Promise<LookupAddress[]>;

/** How long a subscription's hostname may take to resolve. */
const RESOLVE_TIMEOUT_MS = 5000;

const resolveAll: ResolveAll = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * A `net.connect` lookup that refuses a name resolving to any blocked address (undici's connector passes
 * it on, so the check is made on the addresses actually connected to). Literal IPs never reach a
 * lookup: the sender checks those itself (`checkWebhookUrl`).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return (callback as (e: Error) => void)(err);
    const list = addresses as LookupAddress[];
    for (const a of list) {
      const reason = blockedAddressReason(a.address);
      if (reason) return (callback as (e: Error) => void)(new BlockedAddressError(hostname, a.address, reason));
    }
    if (list.length === 0) return (callback as (e: Error) => void)(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
    if ((options as { all?: boolean }).all) (callback as (e: null, a: LookupAddress[]) => void)(null, list);
    else (callback as (e: null, a: string, f: number) => void)(null, list[0].address, list[0].family);
  });
};

const refuse = (message: string) => badRequest('validation_failed', `Invalid webhook url: ${message}.`, [{ path: '/url', message }]);

/** The host of a URL as an address or name (IPv6 without its brackets). */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks a subscription's URL (400 `validation_failed` naming /url): an absolute http(s) URL without
 * credentials; unless private addresses are allowed, its host is not an internal address and, when it
 * is a name, resolves, and only to addresses that are not internal.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean, resolve: ResolveAll = resolveAll): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refuse('not an absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse(`the scheme must be http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw refuse('credentials in the URL are not accepted (verify the signature instead)');
  if (allowPrivate) return url;
  const host = hostOf(url);
  if (isIP(host)) {
    const reason = blockedAddressReason(host);
    if (reason) throw refuse(`${host} is a ${reason} address; webhooks are not sent to internal addresses unless webhooks.allow_private is set`);
    return url;
  }
  let addresses: LookupAddress[];
  let timer: NodeJS.Timeout | undefined;
  try {
    // A resolver that does not answer must not hold the request: a name that does not resolve in time is refused.
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })), RESOLVE_TIMEOUT_MS);
    });
    addresses = await Promise.race([resolve(host), late]);
  } catch (err) {
    throw refuse(`${host} does not resolve (${(err as { code?: string }).code ?? 'lookup failed'})`);
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw refuse(`${host} does not resolve`);
  for (const a of addresses) {
    const reason = blockedAddressReason(a.address);
    // Not which address nor what kind: a write key must not learn what names resolve to (the node's DNS view).
    if (reason) throw refuse(`${host} resolves to an internal address; webhooks are not sent to internal addresses unless webhooks.allow_private is set`);
  }
  return url;
}
