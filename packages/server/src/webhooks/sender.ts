/**
 * The HTTP side of a delivery: one POST with the signed body over a kept-alive undici agent, bounded by
 * `webhooks.timeout_ms` (connect, headers and body), redirects not followed (a 3xx is a failure like
 * any non-2xx). Unless private addresses are allowed, a literal address is checked before the request
 * and a name at connection time (url-guard.ts), so a receiver cannot be moved inside the network later.
 */
import { isIP } from 'node:net';
import type { Agent } from 'undici';
/** undici, required on first use: a node without webhook subscriptions sends nothing, and its start loads less (issue 29). */
let undiciModule: typeof import('undici') | null = null;
const undici = (): typeof import('undici') => (undiciModule ??= require('undici') as typeof import('undici'));

import { blockedAddressReason, guardedLookup, hostOf } from './url-guard';

export interface SendResult {
  /** true on a 2xx */
  ok: boolean;
  /** the receiver's status; null when there was no answer */
  status: number | null;
  /** why it failed (null on success) */
  error: string | null;
  duration_ms: number;
}

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  signal?: AbortSignal;
}

export class WebhookSender {
  /** made on the first delivery (see undici above) */
  private agent: Agent | null = null;

  constructor(private readonly opts: { timeoutMs: number; allowPrivate: boolean }) {}

  private dispatcher(): Agent {
    const opts = this.opts;
    this.agent ??= new (undici().Agent)({
      connections: 4,
      keepAliveTimeout: 10_000,
      connect: { timeout: opts.timeoutMs, ...(opts.allowPrivate ? {} : { lookup: guardedLookup }) },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    return this.agent;
  }

  async post(p: WebhookPost): Promise<SendResult> {
    const started = Date.now();
    const done = (ok: boolean, status: number | null, error: string | null): SendResult => ({ ok, status, error, duration_ms: Date.now() - started });
    let url: URL;
    try {
      url = new URL(p.url);
    } catch {
      return done(false, null, 'the subscription URL does not parse');
    }
    if (!this.opts.allowPrivate && isIP(hostOf(url))) {
      const reason = blockedAddressReason(hostOf(url));
      if (reason) return done(false, null, `${hostOf(url)} is a ${reason} address; not sent (webhooks.allow_private is off)`);
    }
    // One deadline for the whole exchange, on top of undici's per-phase timeouts.
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const signal = p.signal ? AbortSignal.any([p.signal, deadline]) : deadline;
    try {
      const res = await undici().request(url, {
        method: 'POST', dispatcher: this.dispatcher(), signal, body: p.body, // undici follows no redirect unless told to
        headers: { 'content-type': 'application/json', 'user-agent': 'strata-webhooks/1', ...p.headers },
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined); // the answer's body is not used: free the socket
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return done(ok, res.statusCode, ok ? null : `the receiver answered ${res.statusCode}`);
    } catch (err) {
      const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
      const code = e.cause?.code ?? e.code;
      const message = e.cause?.message ?? e.message ?? String(err);
      return done(false, null, deadline.aborted ? `no answer within ${this.opts.timeoutMs} ms` : `${code ? `${code}: ` : ''}${message}`.slice(0, 500));
    }
  }

  async close(): Promise<void> {
    await this.agent?.close();
  }
}
