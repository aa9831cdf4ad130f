import { createHash, randomUUID } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyRole } from '@strata/store';
import { randomAlphanumeric } from './passwords';

export const API_KEY_PATTERN = /^sk_[A-Za-z0-9]{36}$/;

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** A new key (`sk_` + 36 alphanumerics) and the record that stores only its hash. */
export function newApiKey(input: { name: string | null; org_id: string | null; user_ids: string[] | null; role: ApiKeyRole }, now: string): { key: string; record: ApiKeyRecord } {
  const key = `sk_${randomAlphanumeric(36)}`;
  return {
    key,
    record: {
      key_id: randomUUID(), key_hash: hashApiKey(key), key_prefix: key.slice(0, 10), name: input.name,
      org_id: input.org_id, user_ids: input.user_ids, role: input.role, created_at: now,
    },
  };
}
