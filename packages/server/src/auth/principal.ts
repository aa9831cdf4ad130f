import { forbidden, type ApiKeyRole } from '@strata/store';

/** Who is calling, as far as authorization cares. */
export interface Principal {
  kind: 'jwt' | 'api_key' | 'static_key';
  subject: string;
  role: ApiKeyRole;
  /** null: any org */
  org_id: string | null;
  /** null: any user */
  user_ids: string[] | null;
}

/** Roles in order: each may do what the ones below it may. */
export const ROLE_RANK: Record<ApiKeyRole, number> = { read: 0, write: 1, admin: 2 };

export function requireRole(principal: Principal, needed: ApiKeyRole): void {
  if (ROLE_RANK[principal.role] < ROLE_RANK[needed]) {
    throw forbidden(`This route needs the '${needed}' role; the credentials have '${principal.role}'.`);
  }
}

// What a principal may act on (users, orgs, keys) is decided in scope.ts.
