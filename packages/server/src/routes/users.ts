/**
 * `PUT /v1/users/:user_id/org` (CONTRACT §1): an operator records which organization a user belongs
 * to (or clears it with null), as a replicated `user.set_org` command in the user's shard. That record
 * decides what org-scoped keys may act on the user. Service-wide: unscoped admin credentials only (a
 * scoped key moving users between orgs would widen its own or another org's reach).
 */
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';
import { checkIdentifier } from '../validation';

export function userRoutes(services: Services): RouteSpec[] {
  return [
    {
      method: 'put', path: '/v1/users/:user_id/org', tag: 'users', auth: 'admin', body: 'UserOrg', scope: 'service',
      summary: "Set the organization a user belongs to (null: none); org-scoped keys act only on users of their org.",
      handler: async ({ params, body }) => {
        const { org_id } = body;
        const orgId = org_id === null ? null : checkIdentifier(org_id, '/org_id');
        const answer = await services.userOrgs.set(params.user_id, orgId);
        return { user_id: params.user_id, org_id: answer.org_id, changed: answer.changed };
      },
    },
  ];
}
