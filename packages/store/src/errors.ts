/**
 * The one error hierarchy of Strata. Every failure a client can cause or see is a StrataError with an
 * HTTP status and a snake_case code; the server maps it to the contract's envelope in one place.
 * Errors raised inside `apply` must be deterministic (same log, same error on every replica).
 */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class StrataError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: ErrorDetail[],
    /** seconds, sent as Retry-After (429, 503) */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'StrataError';
  }
}

export const badRequest = (code: string, message: string, details?: ErrorDetail[]) =>
  new StrataError(400, code, message, details);
export const unauthenticated = (message = 'Missing or invalid credentials: send Authorization: Bearer <token> or x-api-key.') =>
  new StrataError(401, 'unauthenticated', message);
export const forbidden = (message: string) => new StrataError(403, 'forbidden', message);
export const notFound = (message: string, code = 'not_found') => new StrataError(404, code, message);
export const conflict = (message: string, code = 'conflict') => new StrataError(409, code, message);
export const payloadTooLarge = (message: string) => new StrataError(413, 'payload_too_large', message);
export const unavailable = (message: string, code = 'unavailable', retryAfter = 1) =>
  new StrataError(503, code, message, undefined, retryAfter);

/** A deterministic failure produced by apply, carried back to the proposer as data (it crosses the log). */
export interface ApplyFailure {
  error: { status: number; code: string; message: string };
}

export function isApplyFailure(value: unknown): value is ApplyFailure {
  return typeof value === 'object' && value !== null && 'error' in value &&
    typeof (value as ApplyFailure).error?.code === 'string';
}

export function failure(err: StrataError): ApplyFailure {
  return { error: { status: err.status, code: err.code, message: err.message } };
}

/** Turns a state machine result into the proposer's answer: a deterministic failure becomes the thrown error. */
export function settle<T>(result: unknown): T {
  if (isApplyFailure(result)) {
    const { status, code, message } = result.error;
    throw new StrataError(status, code, message);
  }
  return result as T;
}
