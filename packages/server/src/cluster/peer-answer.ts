/** Reading another node's answer: its error envelope as the StrataError it was, and which failures left nothing sent. */
import { isErrorCode, StrataError, type ErrorDetail } from '@strata/store';

/** Another node's error envelope as the StrataError it was (its code, message and details kept). */
export function answerError(status: number, body: unknown, who = 'The node'): StrataError {
  const envelope = (typeof body === 'object' && body !== null ? body : {}) as { code?: unknown; error?: unknown; details?: ErrorDetail[] };
  const code = isErrorCode(envelope.code) ? envelope.code : status >= 500 ? 'internal' : 'validation_failed';
  return new StrataError(code as never, typeof envelope.error === 'string' ? envelope.error : `${who} answered ${status}.`, envelope.details, status === 503 ? 1 : undefined);
}

/** Errors raised before anything reached the peer: the request may go to another node (it was not sent). */
export function notSent(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  return code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND';
}

/** A peer's answer body as JSON (empty: null; a body that is not JSON becomes `{error: <text>}`). */
export function peerJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return { error: text };
  }
}
