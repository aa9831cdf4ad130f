/**
 * Typed errors of semantic forget/update: StrataErrors with one of the codes below (CONTRACT §0), so the
 * server maps them like any other.
 */
import { StrataError, type ErrorDetail } from '@strata/store';

export type { ErrorDetail };
export type SemanticErrorCode = 'validation_failed' | 'forbidden' | 'not_found';

export class SemanticError extends StrataError {
  declare readonly code: SemanticErrorCode;

  constructor(code: SemanticErrorCode, message: string, details?: ErrorDetail[]) {
    super(code, message, details);
    this.name = 'SemanticError';
  }
}
