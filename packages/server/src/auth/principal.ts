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

const RANK: Record<ApiKeyRole, number> = { read: 0, write: 1, admin: 2 };

export function requireRole(principal: Principal, needed: ApiKeyRole): void {
  if (RANK[principal.role] < RANK[needed]) {
    throw forbidden(`This route needs the '${needed}' role; the credentials have '${principal.role}'.`);
  }
}

export function requireUser(principal: Principal, userId: string): void {
  if (principal.user_ids && !principal.user_ids.includes(userId)) {
    throw forbidden(`These credentials may not act on user '${userId}'.`);
  }
}

export function requireOrg(principal: Principal, orgId: string | null | undefined): void {
  if (orgId && principal.org_id && principal.org_id !== orgId) {
    throw forbidden(`These credentials may not act on organization '${orgId}'.`);
  }
}
