/**
 * Typed errors of the planning domain: StrataErrors with one of the codes below (CONTRACT §0), so the
 * server maps them like any other without knowing planning's internals.
 */
import { StrataError, type ErrorDetail } from '@strata/store';

export type { ErrorDetail };
export type PlanningErrorCode = 'validation_failed' | 'invalid_transition';

export class PlanningError extends StrataError {
  declare readonly code: PlanningErrorCode;

  constructor(code: PlanningErrorCode, message: string, details?: ErrorDetail[]) {
    super(code, message, details);
    this.name = 'PlanningError';
  }
}
