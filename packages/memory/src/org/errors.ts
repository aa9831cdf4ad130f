/** Typed errors of the org knowledge routes: a StrataError `validation_failed` naming the bad field. */
import { StrataError, type ErrorDetail } from '@strata/store';

export type { ErrorDetail };

export class OrgError extends StrataError {
  declare readonly code: 'validation_failed';
  declare readonly details: ErrorDetail[];

  constructor(path: string, message: string) {
    super('validation_failed', message, [{ path, message }]);
    this.name = 'OrgError';
  }
}
