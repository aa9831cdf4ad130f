/**
 * Requests one node makes of another for the cluster's own work (placement: a group's status, its
 * initialization, one membership step; cross-shard reads; an import's chunk), signed with the cluster
 * secret instead of a user's credentials. The signature covers the sender, the receiver, the method,
 * the path with its query, the body's SHA-256, a timestamp and a single-use nonce. So a captured
 * request can neither be changed, nor replayed (to this node: the nonce is used up; to another node:
 * it names its receiver), nor replayed after the receiver restarts (a request signed before the
 * receiving process started is refused, as the Raft transport does). Every field travels in a header,
 * so a request is judged from its headers alone, before its body is read (app.ts `beforeBody`).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response } from 'express';
import { ReplayGuard } from '@strata/raft';
import { unauthenticated } from '@strata/store';

export const PEER_SIG_HEADER = 'x-strata-peer-sig';
const TS_HEADER = 'x-strata-peer-ts';
const NONCE_HEADER = 'x-strata-peer-nonce';
const FROM_HEADER = 'x-strata-peer-from';
const TO_HEADER = 'x-strata-peer-to';
/** hex SHA-256 of the body's bytes (of '' for none) */
export const PEER_DIGEST_HEADER = 'x-strata-peer-digest';

export const sha256Hex = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex');

/** The digest of a JSON body as sent (`JSON.stringify`; none: the digest of ''). */
export const jsonDigest = (body: unknown): string => sha256Hex(body === undefined ? '' : JSON.stringify(body));

/** What a request's headers claim, once its signature is checked. */
export interface PeerRequest {
  from: number;
  /** the SHA-256 its body must have */
  digest: string;
}

/** Pure: the HMAC of one peer request. */
export function peerSignature(secret: string, from: number, to: number, method: string, path: string, digest: string, ts: number, nonce: string): string {
  return createHmac('sha256', secret).update(`peer\n${from}\n${to}\n${method.toUpperCase()}\n${path}\n${ts}\n${nonce}\n${digest}`).digest('hex');
}

const one = (h: IncomingHttpHeaders, name: string): string => {
  const v = h[name];
  return typeof v === 'string' ? v : '';
};

export class PeerSigner {
  private readonly boot = randomBytes(8).toString('hex');
  private seq = 0;
  private readonly seen: ReplayGuard;
  private readonly startedAt: number;

  constructor(
    private readonly secret: string,
    private readonly nodeId: number,
    private readonly skewMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.seen = new ReplayGuard(2 * skewMs);
    this.startedAt = now();
  }

  /** Headers that authorize this request with a JSON body (or none) as this node's, to node `to` (fresh for every request). */
  sign(to: number, method: string, path: string, body: unknown): Record<string, string> {
    return this.signDigest(to, method, path, jsonDigest(body));
  }

  /** The same for a body given by its SHA-256 (a streamed body). */
  signDigest(to: number, method: string, path: string, digest: string): Record<string, string> {
    const ts = this.now();
    const nonce = `${this.boot}.${++this.seq}`;
    return {
      [PEER_SIG_HEADER]: peerSignature(this.secret, this.nodeId, to, method, path, digest, ts, nonce),
      [TS_HEADER]: String(ts), [NONCE_HEADER]: nonce, [FROM_HEADER]: String(this.nodeId), [TO_HEADER]: String(to), [PEER_DIGEST_HEADER]: digest,
    };
  }

  /**
   * From the headers alone: the sender and the body digest the signature covers, when the request is
   * signed for this node, fresh (within the skew, and not from before this process started) and never
   * seen; null otherwise. A valid nonce is used up. The caller checks the body against the digest.
   */
  verifyHeaders(method: string, path: string, headers: IncomingHttpHeaders): PeerRequest | null {
    const sig = one(headers, PEER_SIG_HEADER);
    const ts = Number(one(headers, TS_HEADER));
    const from = Number(one(headers, FROM_HEADER));
    const to = Number(one(headers, TO_HEADER));
    const digest = one(headers, PEER_DIGEST_HEADER);
    const nonce = /^([0-9a-f]{1,32})\.([1-9][0-9]{0,15})$/.exec(one(headers, NONCE_HEADER));
    if (!sig || !nonce || !/^[0-9a-f]{64}$/.test(digest) || !Number.isSafeInteger(ts) || !Number.isSafeInteger(from) || from < 1) return null;
    if (to !== this.nodeId) return null; // signed for another node: a copy sent here is not this node's to take
    const want = peerSignature(this.secret, from, to, method, path, digest, ts, nonce[0]);
    if (sig.length !== want.length || !timingSafeEqual(Buffer.from(sig), Buffer.from(want))) return null;
    const now = this.now();
    if (Math.abs(now - ts) > this.skewMs || ts < this.startedAt) return null;
    return this.seen.accept(`peer/${from}/${nonce[1]}`, Number(nonce[2]), now) ? { from, digest } : null;
  }

  /**
   * The sending node's id when the request carries a valid signature (verifyHeaders) of exactly this
   * (parsed JSON) body; null otherwise.
   */
  verify(method: string, path: string, body: unknown, headers: IncomingHttpHeaders): number | null {
    const signed = this.verifyHeaders(method, path, headers);
    return signed && signed.digest === jsonDigest(body) ? signed.from : null;
  }
}

const REFUSAL = 'This route serves the nodes of the cluster only: a request signed with the cluster secret.';

/**
 * The two halves of a peer-only route: `beforeBody` (route.ts) checks the signature from the headers
 * and keeps what it covers; `body` then checks that the body read is the one signed.
 */
export function peerOnlyRoute(signer: Pick<PeerSigner, 'verifyHeaders'>) {
  return {
    beforeBody: (req: Request, res: Response): void => {
      const signed = signer.verifyHeaders(req.method, req.originalUrl, req.headers);
      if (!signed) throw unauthenticated(REFUSAL);
      res.locals.peer = signed;
    },
    /** 401 unless `digest` (of the body as read) is the one the signature covers. */
    checkDigest: (res: Response, digest: string): void => {
      if ((res.locals.peer as PeerRequest | undefined)?.digest !== digest) throw unauthenticated('The body is not the one the signature covers.');
    },
  };
}
