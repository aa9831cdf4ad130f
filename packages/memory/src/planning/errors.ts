/**
 * Typed errors of the planning domain. `code` and `status` follow the error envelope of CONTRACT §0,
 * so the server maps them in one place without knowing planning's internals.
 */
export type PlanningErrorCode = 'validation_failed' | 'invalid_transition';

export interface ErrorDetail {
  path: string;
  message: string;
}

export class PlanningError extends Error {
  readonly code: PlanningErrorCode;
  /** HTTP status of the envelope: 400 for bad input, 409 for a state that forbids the change. */
  readonly status: 400 | 409;
  readonly details?: ErrorDetail[];

  constructor(code: PlanningErrorCode, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'PlanningError';
    this.code = code;
    this.status = code === 'invalid_transition' ? 409 : 400;
    if (details) this.details = details;
  }
}
