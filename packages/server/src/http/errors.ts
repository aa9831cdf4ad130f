/**
 * The one place an error becomes an HTTP answer (CONTRACT.md §0): the status is the code's entry in
 * ERROR_STATUS, the body the envelope `{error, code, details?}`, plus Retry-After (429, 503) and Allow
 * (405). Nothing else in the server picks a status for an error: throwers name a code.
 * Anything thrown that is not a StrataError is a bug: it becomes 500 `internal` with a fixed sentence
 * (never its message or stack, which may carry internals); the caller logs it with the request id.
 */
import type { Response } from 'express';
import { ERROR_STATUS, NotStoredError, StrataError, type ErrorCode, type ErrorDetail } from '@strata/store';
import { sendJson } from './json-reply';

export interface ErrorEnvelope {
  error: string;
  code: ErrorCode;
  details?: ErrorDetail[];
}

export interface ErrorReply {
  status: number;
  headers: Record<string, string>;
  body: ErrorEnvelope;
}

export const INTERNAL_MESSAGE = 'Internal error; the server log has details under this request id.';

export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

/** Anything thrown, as a StrataError; `onBug` is told of what was not one (to log it in full). */
export function asStrataError(err: unknown, onBug: (err: unknown) => void): StrataError {
  if (err instanceof StrataError) return err; // body errors too: http/body.ts throws them
  // express decodes path parameters lazily and throws URIError on a bad %-escape: the client's input.
  if (err instanceof URIError) return new StrataError('invalid_request', 'The URL has malformed percent-encoding.');
  onBug(err);
  return new StrataError('internal', INTERNAL_MESSAGE);
}

/** The status, headers and envelope for an error. */
export function errorReply(err: StrataError): ErrorReply {
  const headers: Record<string, string> = {};
  if (err.retryAfter !== undefined) headers['Retry-After'] = String(err.retryAfter);
  // nothing was stored (leadership moved first): the forwarding node runs the request again on the new leader
  if (err instanceof NotStoredError) headers[NotStoredError.HEADER] = '1';
  // A 405 lists the allowed methods as its details (one per entry): they go in Allow, not the body.
  const allowed = err.code === 'method_not_allowed';
  if (allowed && err.details) headers.Allow = err.details.map((d) => d.message).join(', ');
  const body: ErrorEnvelope = { error: err.message, code: err.code };
  if (err.details && !allowed) body.details = err.details;
  return { status: statusOf(err.code), headers, body };
}

/** Writes anything thrown as the contract's answer; `onBug` logs what was not a StrataError. */
export function sendError(res: Response, err: unknown, onBug: (err: unknown) => void): void {
  const reply = errorReply(asStrataError(err, onBug));
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  sendJson(res, reply.status, reply.body);
}
