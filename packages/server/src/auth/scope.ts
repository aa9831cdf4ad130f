/**
 * The scope model of CONTRACT.md §1, in one place. Every route goes through it (app.ts calls it with
 * the route's declared scope), and any other surface (MCP tools, import, webhooks) calls the same
 * functions with a principal and plain input:
 *
 * - `user_ids`: the credentials act only on those users.
 * - `org_id`: every org_id the input names must be the key's org, and the credentials act only on users
 *   of that org: users whose org is recorded in the replicated state (`user.set_org`), recorded by the
 *   first write made for a new user with an org-scoped key, or set by an admin.
 * - `user_ids` without `org_id`: the input may name no org at all (org knowledge needs org credentials).
 * - Service-wide operations (cluster, accounts, metrics, user → org records) need unscoped credentials.
 * - Keys are minted, listed and revoked only within the minting credentials' role and scope.
 */
import { forbidden, type ApiKeyRole } from '@strata/store';
import { ROLE_RANK, type Principal } from './principal';

/**
 * What a route declares about authorization. `operation`: the route's operation (server/src/operations)
 * authorizes the caller itself, with the ScopeGuard below, so every surface that calls it (HTTP, MCP,
 * the CLI) gets the same check once; the HTTP layer makes only the stateless pre-check of the path's
 * user and org. `service`: the whole service, unscoped credentials only. Undeclared, a route is
 * `service`, the strictest choice, so a new route cannot be reached by scoped keys by accident.
 */
export type RouteScope = 'service' | 'operation';

/** Where a user's organization is recorded (replicated state) and how the first org write records it. */
export interface UserDirectory {
  /** the org recorded for the user on this replica, or null */
  orgOf(userId: string): Promise<string | null>;
  /** true when anything is stored for the user (a user with data is never claimed by an org key) */
  hasData(userId: string): Promise<boolean>;
  /** proposes a claim of a new user for the org; resolves with the user's org after it was applied */
  claim(userId: string, orgId: string): Promise<string | null>;
  /** every user recorded for the org, over all shards */
  usersOf(orgId: string): Promise<string[]>;
}

export function isUnscoped(p: Principal): boolean {
  return p.org_id === null && p.user_ids === null;
}

export function requireUnscoped(p: Principal, what: string): void {
  if (!isUnscoped(p)) throw forbidden(`${what} needs credentials that are not limited to an organization or to users.`);
}

/** The `user_ids` part of a scope, pure. */
export function requireListedUser(p: Principal, userId: string): void {
  if (p.user_ids && !p.user_ids.includes(userId)) throw forbidden(`These credentials may not act on user '${userId}'.`);
}

/** Every org_id an input names must be within the credentials' scope (pure). */
export function requireNamedOrgs(p: Principal, orgIds: readonly unknown[]): void {
  for (const org of orgIds) {
    if (org === null || org === undefined) continue;
    if (p.org_id === null && p.user_ids !== null) {
      throw forbidden('These credentials are limited to some users and may not name an organization; organization knowledge needs credentials of the organization.');
    }
    if (p.org_id !== null && p.org_id !== org) throw forbidden(`These credentials may not act on organization '${String(org)}'.`);
  }
}

/** Org knowledge routes: only the key's own org; keys limited to users and to no org, never. */
export function authorizeOrg(p: Principal, orgId: string): void {
  if (p.org_id === null && p.user_ids !== null) {
    throw forbidden('These credentials are limited to some users; organization knowledge needs credentials of the organization.');
  }
  if (p.org_id !== null && p.org_id !== orgId) throw forbidden(`These credentials may not act on organization '${orgId}'.`);
}

/** What a key would carry: role and scope (a key record, or the input of a new key). */
export interface KeyScope {
  role: ApiKeyRole;
  org_id: string | null;
  user_ids: string[] | null;
}

/** True when everything `key` may do, `p` may do too: role no higher, org the same, users a subset. */
export function covers(p: Principal, key: KeyScope): boolean {
  if (ROLE_RANK[key.role] > ROLE_RANK[p.role]) return false;
  if (p.org_id !== null && key.org_id !== p.org_id) return false;
  if (p.user_ids !== null && (key.user_ids === null || !key.user_ids.every((u) => p.user_ids!.includes(u)))) return false;
  // a key limited to users and to no org may not name an org, not even to mint a narrower key
  if (p.org_id === null && p.user_ids !== null && key.org_id !== null) return false;
  return true;
}

/** A key creates keys only within its own role and scope (403 otherwise). */
export function requireMintable(p: Principal, key: KeyScope): void {
  if (ROLE_RANK[key.role] > ROLE_RANK[p.role]) throw forbidden(`These credentials have the '${p.role}' role and may not create a key with the '${key.role}' role.`);
  if (!covers(p, key)) {
    throw forbidden('A key may be created only within the scope of the credentials that create it: the same org_id, and user_ids among their own.');
  }
}

/**
 * Authorization against replicated state, made once per operation by every surface. Construct one
 * per node with its user directory.
 */
export class ScopeGuard {
  constructor(private readonly users: UserDirectory) {}

  /**
   * May `p` act on `userId`, naming `orgIds`? `write`: the operation changes the user's data; the
   * first write for a new user with an org-scoped key records the user as one of the key's org (it
   * must then run where the user's shard can propose: on its leader, after forwarding).
   */
  async authorizeUser(p: Principal, input: { user_id: string; org_ids?: readonly unknown[]; write: boolean; /** false: check only, as if claimed (nothing proposed) */ claim?: boolean }): Promise<void> {
    requireListedUser(p, input.user_id);
    requireNamedOrgs(p, input.org_ids ?? []);
    if (p.org_id === null) return;
    let org = await this.users.orgOf(input.user_id);
    if (org === null && input.write && !(await this.users.hasData(input.user_id))) org = input.claim === false ? p.org_id : await this.users.claim(input.user_id, p.org_id);
    if (org !== p.org_id) {
      throw forbidden(`These credentials act only on users of organization '${p.org_id}', and user '${input.user_id}' is not one (an admin sets a user's organization with PUT /v1/users/:user_id/org).`);
    }
  }

  /** The users `p` may see (null: every user). Used to narrow service-wide answers (pending backlog, user lists). */
  async usersInScope(p: Principal): Promise<string[] | null> {
    if (p.org_id === null) return p.user_ids;
    const members = await this.users.usersOf(p.org_id);
    return p.user_ids === null ? members : members.filter((u) => p.user_ids!.includes(u));
  }
}

/**
 * The checks that need no state, made as soon as the path is known (before the body is validated
 * and before a write is forwarded): the kind of route against the credentials, and the path's user
 * and org.
 */
export function precheckRoute(p: Principal, scope: RouteScope, params: Record<string, string>): void {
  if (scope === 'service') return requireUnscoped(p, 'This operation');
  if (params.org_id !== undefined) authorizeOrg(p, params.org_id);
  if (params.user_id !== undefined) requireListedUser(p, params.user_id);
}
