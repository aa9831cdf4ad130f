/**
 * Typed errors of semantic forget/update. `code` and `status` follow the error envelope of
 * CONTRACT §0 so the server maps them in one place.
 */
export type SemanticErrorCode = 'validation_failed' | 'forbidden' | 'not_found';

export interface ErrorDetail {
  path: string;
  message: string;
}

const STATUS: Record<SemanticErrorCode, 400 | 403 | 404> = { validation_failed: 400, forbidden: 403, not_found: 404 };

export class SemanticError extends Error {
  readonly code: SemanticErrorCode;
  readonly status: 400 | 403 | 404;
  readonly details?: ErrorDetail[];

  constructor(code: SemanticErrorCode, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'SemanticError';
    this.code = code;
    this.status = STATUS[code];
    if (details) this.details = details;
  }
}
