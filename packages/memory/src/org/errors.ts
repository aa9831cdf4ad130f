/** Typed errors of the org knowledge routes (CONTRACT §0 envelope: `code`, `status`, `details`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class OrgError extends Error {
  readonly code = 'validation_failed' as const;
  readonly status = 400 as const;
  readonly details: ErrorDetail[];

  constructor(path: string, message: string) {
    super(message);
    this.name = 'OrgError';
    this.details = [{ path, message }];
  }
}
