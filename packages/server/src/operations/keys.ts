/**
 * API keys (CONTRACT §1): minted, listed and revoked only within the caller's role and scope. A key
 * outside the caller's scope is answered like an unknown one: its existence is not revealed.
 */
import { notFound, type ApiKeyRecord, type ApiKeyRole } from '@strata/store';
import type { Principal } from '../auth/principal';
import { covers, requireMintable } from '../auth/scope';
import type { Services } from '../services';
import { checkUuid } from '../validation';

/** A key record as answered (never the key or its hash). */
function keyView(record: ApiKeyRecord) {
  const { key_id, key_prefix, name, org_id, user_ids, role, created_at } = record;
  return { key_id, key_prefix, name, org_id, user_ids, role, created_at };
}

export interface CreateKeyInput {
  name?: string | null;
  role?: ApiKeyRole | null;
  org_id?: string | null;
  user_ids?: string[] | null;
}

/** A new key, never wider than the credentials creating it; the key itself is in this answer only. */
export async function createApiKey(services: Services, principal: Principal, input: CreateKeyInput) {
  const scope = { org_id: input.org_id ?? null, user_ids: input.user_ids ?? null, role: input.role ?? 'write' };
  requireMintable(principal, scope);
  const { key, record } = await services.auth.createKey({ name: input.name ?? null, ...scope });
  return { ...keyView(record), key };
}

/** The keys within the caller's scope. */
export async function listApiKeys(services: Services, principal: Principal) {
  return { api_keys: (await services.auth.listKeys()).filter((k) => covers(principal, k)).map(keyView) };
}

export async function revokeApiKey(services: Services, principal: Principal, input: { key_id: string }) {
  let keyId: string;
  try {
    keyId = checkUuid(input.key_id, '/key_id');
  } catch {
    throw notFound(`No API key with id '${input.key_id}'.`);
  }
  const record = (await services.auth.listKeys()).find((k) => k.key_id === keyId);
  if (!record || !covers(principal, record)) throw notFound(`No API key with id '${input.key_id}'.`);
  await services.auth.revokeKey(keyId);
  return { status: 'revoked' as const, key_id: keyId };
}
