/** The dashboard account and API keys (CONTRACT §1): login and password here, keys in operations/keys.ts. */
import { ADMIN } from '../auth/service';
import { callerOf, type RouteSpec } from '../http/route';
import { createApiKey, listApiKeys, revokeApiKey } from '../operations/keys';
import type { Services } from '../services';

export function authRoutes(services: Services): RouteSpec[] {
  const { auth } = services;
  return [
    {
      method: 'post', path: '/v1/dashboard/auth/login', tag: 'auth', auth: 'public', body: 'Login', writes: false,
      summary: 'Exchange the admin username and password for a JWT. 5 failures from one address in 15 minutes: 429.',
      handler: async ({ body, req }) => {
        const { username, password } = body;
        return auth.login(username, password, req.socket.remoteAddress ?? 'unknown');
      },
    },
    {
      method: 'post', path: '/v1/dashboard/auth/password', tag: 'auth', auth: 'admin', body: 'ChangePassword', scope: 'service',
      summary: "Change the password of the token's account (the admin account for an admin API key).",
      handler: async ({ body, principal }) => {
        const { current_password, new_password } = body;
        await auth.changePassword(principal?.kind === 'jwt' ? principal.subject : ADMIN, current_password, new_password);
        return { status: 'changed' };
      },
    },
    {
      method: 'post', path: '/v1/dashboard/api-keys', tag: 'auth', auth: 'admin', body: 'CreateApiKey', scope: 'operation',
      summary: 'Create an API key (never wider than the credentials creating it: role and scope); the key itself is shown only in this answer.',
      handler: (ctx) => createApiKey(services, callerOf(ctx), ctx.body),
    },
    {
      method: 'get', path: '/v1/dashboard/api-keys', tag: 'auth', auth: 'admin', scope: 'operation',
      summary: 'List API keys (never the keys themselves); scoped credentials see the keys within their scope.',
      handler: (ctx) => listApiKeys(services, callerOf(ctx)),
    },
    {
      method: 'delete', path: '/v1/dashboard/api-keys/:key_id', tag: 'auth', auth: 'admin', scope: 'operation',
      summary: 'Revoke an API key (scoped credentials: a key within their scope; others are not found).',
      handler: (ctx) => revokeApiKey(services, callerOf(ctx), { key_id: ctx.params.key_id }),
    },
  ];
}
