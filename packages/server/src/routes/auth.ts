import { notFound, type ApiKeyRecord, type ApiKeyRole } from '@strata/store';
import type { RouteSpec } from '../http/route';
import type { Services } from '../services';
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
        const { username, password } = body as { username: string; password: string };
        return auth.login(username, password, req.socket.remoteAddress ?? 'unknown');
      },
    },
    {
      method: 'post', path: '/v1/dashboard/auth/password', tag: 'auth', auth: 'admin', body: 'ChangePassword',
      summary: "Change the password of the token's account (the admin account for an admin API key).",
      handler: async ({ body, principal }) => {
        const { current_password, new_password } = body as { current_password: string; new_password: string };
        await auth.changePassword(principal?.kind === 'jwt' ? principal.subject : ADMIN, current_password, new_password);
        return { status: 'changed' };
      },
    },
    {
      method: 'post', path: '/v1/dashboard/api-keys', tag: 'auth', auth: 'admin', body: 'CreateApiKey',
      summary: 'Create an API key; the key itself is shown only in this answer.',
      handler: async ({ body }) => {
        const input = body as { name?: string | null; org_id?: string | null; user_ids?: string[] | null; role?: ApiKeyRole | null };
        const { key, record } = await auth.createKey({
          name: input.name ?? null, org_id: input.org_id ?? null, user_ids: input.user_ids ?? null, role: input.role ?? 'write',
        });
        return { ...keyView(record), key };
      },
    },
    {
      method: 'get', path: '/v1/dashboard/api-keys', tag: 'auth', auth: 'admin', summary: 'List API keys (never the keys themselves).',
      handler: async () => ({ api_keys: (await auth.listKeys()).map(keyView) }),
    },
    {
      method: 'delete', path: '/v1/dashboard/api-keys/:key_id', tag: 'auth', auth: 'admin', summary: 'Revoke an API key.',
      handler: async ({ params }) => {
        let keyId: string;
        try {
          keyId = checkUuid(params.key_id, '/key_id');
        } catch {
          throw notFound(`No API key with id '${params.key_id}'.`);
        }
        await auth.revokeKey(keyId);
        return { status: 'revoked', key_id: keyId };
      },
    },
  ];
}
