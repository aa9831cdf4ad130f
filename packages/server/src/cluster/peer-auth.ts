/**
 * Requests one node makes of another for the cluster's own work (placement: a group's status, its
 * initialization, one membership step), signed with the cluster secret instead of a user's
 * credentials. The signature covers the method, the path with its query, the JSON body, the sender,
 * a timestamp and a single-use nonce, so a captured request can neither be changed nor replayed.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ReplayGuard } from '@strata/raft';

export const PEER_SIG_HEADER = 'x-strata-peer-sig';
const TS_HEADER = 'x-strata-peer-ts';
const NONCE_HEADER = 'x-strata-peer-nonce';
const FROM_HEADER = 'x-strata-peer-from';

/** Pure: the HMAC of one peer request. `body` is the JSON text sent ('' for none). */
export function peerSignature(secret: string, from: number, method: string, path: string, body: string, ts: number, nonce: string): string {
  return createHmac('sha256', secret).update(`peer\n${from}\n${method.toUpperCase()}\n${path}\n${ts}\n${nonce}\n${body}`).digest('hex');
}

const one = (h: IncomingHttpHeaders, name: string): string => {
  const v = h[name];
  return typeof v === 'string' ? v : '';
};

export class PeerSigner {
  private readonly boot = randomBytes(8).toString('hex');
  private seq = 0;
  private readonly seen: ReplayGuard;

  constructor(
    private readonly secret: string,
    private readonly nodeId: number,
    private readonly skewMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.seen = new ReplayGuard(2 * skewMs);
  }

  /** Headers that authorize this request as this node's (fresh for every request). */
  sign(method: string, path: string, body: unknown): Record<string, string> {
    const ts = this.now();
    const nonce = `${this.boot}.${++this.seq}`;
    const text = body === undefined ? '' : JSON.stringify(body);
    return {
      [PEER_SIG_HEADER]: peerSignature(this.secret, this.nodeId, method, path, text, ts, nonce),
      [TS_HEADER]: String(ts), [NONCE_HEADER]: nonce, [FROM_HEADER]: String(this.nodeId),
    };
  }

  /**
   * The sending node's id when the request carries a valid, fresh, never-seen signature of exactly
   * this method, path and (parsed JSON) body (undefined: a request without one); null otherwise.
   * A valid nonce is used up.
   */
  verify(method: string, path: string, body: unknown, headers: IncomingHttpHeaders): number | null {
    const sig = one(headers, PEER_SIG_HEADER);
    const ts = Number(one(headers, TS_HEADER));
    const from = Number(one(headers, FROM_HEADER));
    const nonce = /^([0-9a-f]{1,32})\.([1-9][0-9]{0,15})$/.exec(one(headers, NONCE_HEADER));
    const now = this.now();
    if (!sig || !nonce || !Number.isSafeInteger(ts) || !Number.isSafeInteger(from) || from < 1 || Math.abs(now - ts) > this.skewMs) return null;
    const text = body === undefined ? '' : JSON.stringify(body);
    const want = peerSignature(this.secret, from, method, path, text, ts, nonce[0]);
    if (sig.length !== want.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(want))) return null;
    return this.seen.accept(`peer/${from}/${nonce[1]}`, Number(nonce[2]), now) ? from : null;
  }
}
