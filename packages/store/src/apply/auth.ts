import type { ApplyContext } from '../apply-context';
import type { ApiKeyCreateCommand, ApiKeyRevokeCommand, AuthBootstrapCommand, SetPasswordCommand } from '../commands';
import type { StateDb } from '../db';
import { failure, notFound, type ApplyFailure } from '../errors';
import type { AccountRecord, ApiKeyRecord } from '../types';

/** First start: the admin account and the JWT secret. The first bootstrap wins; later ones change nothing. */
export async function applyAuthBootstrap(db: StateDb, ctx: ApplyContext, cmd: AuthBootstrapCommand): Promise<{ created: boolean }> {
  const accountKey = `account\x00${cmd.account.username}`;
  if ((await ctx.get(db.auth, accountKey)) !== undefined) return { created: false };
  ctx.put(db.auth, accountKey, cmd.account);
  if ((await ctx.get(db.auth, 'jwt_secret')) === undefined) ctx.put(db.auth, 'jwt_secret', cmd.jwt_secret);
  return { created: true };
}

export async function applySetPassword(db: StateDb, ctx: ApplyContext, cmd: SetPasswordCommand): Promise<{ ok: true } | ApplyFailure> {
  const key = `account\x00${cmd.username}`;
  const account = (await ctx.get(db.auth, key)) as AccountRecord | undefined;
  if (!account) return failure(notFound(`No account named '${cmd.username}'.`));
  ctx.put(db.auth, key, { ...account, password_hash: cmd.password_hash, must_change_password: false, updated_at: cmd.at });
  return { ok: true };
}

export async function applyApiKeyCreate(db: StateDb, ctx: ApplyContext, cmd: ApiKeyCreateCommand): Promise<ApiKeyRecord> {
  ctx.put(db.auth, `apikey\x00${cmd.record.key_id}`, cmd.record);
  ctx.put(db.auth, `apikey_hash\x00${cmd.record.key_hash}`, cmd.record.key_id);
  return cmd.record;
}

export async function applyApiKeyRevoke(db: StateDb, ctx: ApplyContext, cmd: ApiKeyRevokeCommand): Promise<{ ok: true } | ApplyFailure> {
  const key = `apikey\x00${cmd.key_id}`;
  const record = (await ctx.get(db.auth, key)) as ApiKeyRecord | undefined;
  if (!record) return failure(notFound(`No API key with id '${cmd.key_id}'.`));
  ctx.del(db.auth, key);
  ctx.del(db.auth, `apikey_hash\x00${record.key_hash}`);
  return { ok: true };
}
