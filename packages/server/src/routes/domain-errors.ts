/**
 * The memory package's domain errors (PlanningError, SemanticError, OrgError) carry the contract's
 * status, code and details but are not StrataErrors (memory does not depend on the server's error
 * mapping). Routes run domain calls through `domain` so they reach the one envelope in app.ts.
 */
import { StrataError } from '@strata/store';

interface DomainError extends Error {
  status: number;
  code: string;
  details?: { path: string; message: string }[];
}

function isDomainError(err: unknown): err is DomainError {
  return err instanceof Error && typeof (err as DomainError).status === 'number' && typeof (err as DomainError).code === 'string' &&
    ['PlanningError', 'SemanticError', 'OrgError'].includes(err.name);
}

export function asStrataError(err: unknown): unknown {
  if (err instanceof StrataError || !isDomainError(err)) return err;
  return new StrataError(err.status, err.code, err.message, err.details);
}

/** Runs a domain call, turning its typed errors into StrataErrors. */
export async function domain<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asStrataError(err);
  }
}
