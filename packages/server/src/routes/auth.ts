import { notFound, type ApiKeyRecord } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';
import { covers, requireMintable } from '../auth/scope';
import { ADMIN } from '../auth/service';
import { checkUuid } from '../validation';

function keyView(record: ApiKeyRecord) {
  const { key_id, key_prefix, name, org_id, user_ids, role, created_at } = record;
  return { key_id, key_prefix, name, org_id, user_ids, role, created_at };
}

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
      method: 'post', path: '/v1/dashboard/api-keys', tag: 'auth', auth: 'admin', body: 'CreateApiKey', scope: 'scoped',
      summary: 'Create an API key (never wider than the credentials creating it: role and scope); the key itself is shown only in this answer.',
      handler: async ({ body, principal }) => {
        const input = body;
        const scope = { org_id: input.org_id ?? null, user_ids: input.user_ids ?? null, role: input.role ?? 'write' };
        if (principal) requireMintable(principal, scope);
        const { key, record } = await auth.createKey({ name: input.name ?? null, ...scope });
        return { ...keyView(record), key };
      },
    },
    {
      method: 'get', path: '/v1/dashboard/api-keys', tag: 'auth', auth: 'admin', scope: 'scoped',
      summary: 'List API keys (never the keys themselves); scoped credentials see the keys within their scope.',
      handler: async ({ principal }) => ({ api_keys: (await auth.listKeys()).filter((k) => !principal || covers(principal, k)).map(keyView) }),
    },
    {
      method: 'delete', path: '/v1/dashboard/api-keys/:key_id', tag: 'auth', auth: 'admin', scope: 'scoped',
      summary: 'Revoke an API key (scoped credentials: a key within their scope; others are not found).',
      handler: async ({ params, principal }) => {
        let keyId: string;
        try {
          keyId = checkUuid(params.key_id, '/key_id');
        } catch {
          throw notFound(`No API key with id '${params.key_id}'.`);
        }
        // A key outside the caller's scope is answered like an unknown one: its existence is not revealed.
        const record = (await auth.listKeys()).find((k) => k.key_id === keyId);
        if (!record || (principal && !covers(principal, record))) throw notFound(`No API key with id '${params.key_id}'.`);
        await auth.revokeKey(keyId);
        return { status: 'revoked', key_id: keyId };
      },
    },
  ];
}
