import { randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import type { Logger } from 'pino';
import {
  StrataError, badRequest, prefixRange, settle, unauthenticated, type ApiKeyRecord, type ApiKeyRole, type CommandLog, type StateDb,
} from '@strata/store';
import type { Config } from '../config';
import { hashApiKey, newApiKey } from './api-keys';
import { HashGate } from './hash-gate';
import { hashPassword, randomPassword, verifyPassword } from './passwords';
import type { Principal } from './principal';
import { LoginThrottle } from './throttle';

export const ADMIN = 'admin';
/** Where a generated admin password is written, in the data directory, until the password is changed. */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password';

/**
 * Accounts, tokens and API keys. Their records live in the replicated state (shard 0's group), so a
 * token or key issued by one node works on every node; this service only reads them and proposes
 * changes.
 */
export class AuthService {
  private readonly throttle: LoginThrottle;
  /** every password hash of this node goes through it, so logins cannot starve the thread pool */
  private readonly hashes: HashGate;

  constructor(
    private readonly config: Config,
    private readonly db: StateDb,
    private readonly log: CommandLog,
    private readonly logger: Logger,
  ) {
    this.throttle = new LoginThrottle(config.auth.login_max_attempts, config.auth.login_window * 1000);
    this.hashes = new HashGate(config.auth.hash_concurrency, config.auth.hash_queue);
  }

  /** The admin password and its hash, begun by prepareBootstrap; null when the account existed then. */
  private prepared: Promise<{ password: string; hash: string } | null> | null = null;

  /**
   * Begins hashing the admin password when the account does not exist yet (a first start): scrypt runs
   * on the thread pool while the node initializes its Raft groups and builds its routes, rather than
   * after them on the way to /readyz (0.1-0.4 s of a first start). bootstrap() uses the result.
   * `early`: the same, begun even earlier by the node's entry.
   */
  prepareBootstrap(early?: Promise<{ password: string; hash: string }>): void {
    this.prepared = (async () => {
      if (await this.db.account(ADMIN)) return null;
      // begun by the entry before the node loaded (main.ts, on a new data directory)
      const begun = await early?.catch(() => null);
      if (begun) return begun;
      const password = this.config.auth.admin_password ?? randomPassword();
      return { password, hash: await this.hashes.run(() => hashPassword(password)) };
    })();
    this.prepared.catch(() => undefined); // bootstrap() hashes again if this failed
  }

  /** Creates the admin account (and the JWT secret) on the first start of the service; no-op after. */
  async bootstrap(): Promise<void> {
    const existing = await this.db.account(ADMIN);
    if (existing) return this.tidyInitialPassword(existing);
    const configured = this.config.auth.admin_password;
    // the password and hash begun at start, kept for a retry (this node not leading yet answers 503)
    const prepared = await this.prepared?.catch(() => null) ?? null;
    const password = prepared?.password ?? configured ?? randomPassword();
    const hash = prepared?.hash ?? await this.hashes.run(() => hashPassword(password));
    const { created } = settle(await this.log.propose({
      type: 'auth.bootstrap',
      account: { username: ADMIN, password_hash: hash, must_change_password: !configured, updated_at: new Date().toISOString() },
      jwt_secret: randomBytes(32).toString('base64'),
    }));
    if (created && !configured) {
      const file = this.initialPasswordFile();
      writeFileSync(file, password + '\n', { mode: 0o600 });
      chmodSync(file, 0o600);
      this.logger.warn({ file }, `admin account created with a generated password, written to ${file}; log in and change it`);
    } else if (created) {
      this.logger.info('admin account created with the password from STRATA_ADMIN_PASSWORD');
    }
  }

  async login(username: string, password: string, address: string): Promise<{ token: string; expires_in: number; must_change_password: boolean }> {
    // Counted before the hash is checked, so simultaneous guesses cannot all slip under the limit.
    const wait = this.throttle.attempt(address);
    if (wait > 0) throw new StrataError('rate_limited', `Too many failed logins from this address; try again in ${wait} s.`, undefined, wait);
    const account = await this.db.account(username);
    let ok: boolean;
    try {
      // Verify against a dummy hash for unknown users too, so timing does not reveal which names exist.
      ok = await this.hashes.run(() => verifyPassword(password, account?.password_hash ?? DUMMY_HASH));
    } catch (err) {
      this.throttle.cancel(address); // refused before any password was checked (hash queue full)
      throw err;
    }
    if (!account || !ok) throw unauthenticated('Wrong username or password.');
    this.throttle.recordSuccess(address);
    const ttl = this.config.auth.token_ttl;
    const token = jwt.sign({ sub: username }, await this.jwtSecret(), { algorithm: 'HS256', expiresIn: ttl });
    return { token, expires_in: ttl, must_change_password: account.must_change_password };
  }

  async changePassword(username: string, current: string, next: string): Promise<void> {
    const account = await this.db.account(username);
    if (!account || !(await this.hashes.run(() => verifyPassword(current, account.password_hash)))) {
      throw unauthenticated('The current password is wrong.');
    }
    if (next.length < 8) throw badRequest('validation_failed', 'The new password must have at least 8 characters.', [{ path: '/new_password', message: 'must have at least 8 characters' }]);
    settle(await this.log.propose({ type: 'auth.set_password', username, password_hash: await this.hashes.run(() => hashPassword(next)), at: new Date().toISOString() }));
    if (username === ADMIN) this.removeInitialPassword();
  }

  /**
   * At start, once the admin account is known: a password changed since it was generated (perhaps
   * through another node) leaves the file holding a password that no longer works; it goes.
   */
  tidyInitialPassword(account: { must_change_password: boolean }): void {
    if (!account.must_change_password) this.removeInitialPassword();
  }

  private initialPasswordFile(): string {
    return join(this.config.storage.data_dir, INITIAL_PASSWORD_FILE);
  }

  /**
   * The generated password's file goes once the admin password is changed, so nothing reads a password
   * that no longer works. Another node's file (the one that created the account) goes at its next start
   * (tidyInitialPassword).
   */
  private removeInitialPassword(): void {
    const file = this.initialPasswordFile();
    if (!existsSync(file)) return;
    rmSync(file, { force: true });
    this.logger.info({ file }, 'admin password changed: removed the file that held the generated one');
  }

  /** Resolves the credentials of a request, or throws 401. */
  async authenticate(authorization: string | undefined, apiKey: string | undefined): Promise<Principal> {
    if (apiKey !== undefined) return this.authenticateKey(apiKey);
    const bearer = authorization && /^Bearer\s+(.+)$/i.exec(authorization)?.[1];
    if (!bearer) throw unauthenticated();
    if (bearer.startsWith('sk_')) return this.authenticateKey(bearer);
    let payload: jwt.JwtPayload | string;
    try {
      payload = jwt.verify(bearer, await this.jwtSecret(), { algorithms: ['HS256'] });
    } catch {
      throw unauthenticated('The token is invalid or expired; log in again.');
    }
    const subject = typeof payload === 'object' && typeof payload.sub === 'string' ? payload.sub : null;
    if (!subject || !(await this.db.account(subject))) throw unauthenticated('The token names no account.');
    return { kind: 'jwt', subject, role: 'admin', org_id: null, user_ids: null };
  }

  async createKey(input: { name: string | null; org_id: string | null; user_ids: string[] | null; role: ApiKeyRole }): Promise<{ key: string; record: ApiKeyRecord }> {
    const { key, record } = newApiKey(input, new Date().toISOString());
    settle(await this.log.propose({ type: 'apikey.create', record }));
    return { key, record };
  }

  async listKeys(): Promise<ApiKeyRecord[]> {
    const keys: ApiKeyRecord[] = [];
    for await (const value of this.db.auth.values(prefixRange('apikey'))) keys.push(value as ApiKeyRecord);
    return keys.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.key_id.localeCompare(b.key_id));
  }

  async revokeKey(keyId: string): Promise<void> {
    settle(await this.log.propose({ type: 'apikey.revoke', key_id: keyId }));
  }

  private async authenticateKey(key: string): Promise<Principal> {
    const configured = this.config.auth.api_key;
    if (configured && key.length === configured.length && timingSafeEqual(Buffer.from(key), Buffer.from(configured))) {
      return { kind: 'static_key', subject: 'STRATA_API_KEY', role: 'admin', org_id: null, user_ids: null };
    }
    const record = await this.db.apiKeyByHash(hashApiKey(key));
    if (!record) throw unauthenticated('The API key is not valid (unknown or revoked).');
    return { kind: 'api_key', subject: record.key_id, role: record.role, org_id: record.org_id, user_ids: record.user_ids };
  }

  private async jwtSecret(): Promise<string> {
    const secret = this.config.auth.jwt_secret ?? (await this.db.jwtSecret());
    if (!secret) throw new StrataError('unavailable', 'The service is still starting (no signing key yet); retry shortly.', undefined, 1);
    return secret;
  }
}

// A well-formed scrypt hash (all-zero salt and key) that no password matches in practice.
const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
