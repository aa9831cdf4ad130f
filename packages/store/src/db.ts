import { Level } from 'level';
import type { AbstractSublevel } from 'abstract-level';
import type { AccountRecord, ApiKeyRecord, EventRecord } from './types';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Sub<V> = AbstractSublevel<any, any, string, V>;

export interface PendingEntry {
  user_id: string;
  stream_id: string;
  event_id: string;
  accepted_at: string;
}

export interface IdempotencyRecord {
  answer: unknown;
  expires_at: string;
}

/**
 * The state machine's LevelDB: one database, one sublevel per record type. Only `apply` writes to it
 * (through ApplyContext); queries read it directly.
 */
export class StateDb {
  /** applied_index and counters */
  readonly meta: Sub<unknown>;
  /** user \0 stream \0 seq → EventRecord */
  readonly events: Sub<EventRecord>;
  /** user \0 event_id → { stream_id, seq } */
  readonly eventIds: Sub<{ stream_id: string; seq: string }>;
  /** seq → PendingEntry: events accepted but not yet consolidated, in acceptance order */
  readonly pending: Sub<PendingEntry>;
  /** user \0 stream \0 idempotency key → first answer */
  readonly idempotency: Sub<IdempotencyRecord>;
  /** asset_id (sha256 hex) → bytes; content-addressed, so stored once however often it is sent */
  readonly assets: Sub<Buffer>;
  /** `account` \0 name → AccountRecord; `apikey` \0 id → ApiKeyRecord; `apikey_hash` \0 sha → id; `jwt_secret` */
  readonly auth: Sub<unknown>;

  private constructor(readonly level: Level<string, unknown>) {
    const json = { valueEncoding: 'json' } as const;
    this.meta = level.sublevel<string, unknown>('meta', json);
    this.events = level.sublevel<string, EventRecord>('events', json);
    this.eventIds = level.sublevel<string, { stream_id: string; seq: string }>('event_ids', json);
    this.pending = level.sublevel<string, PendingEntry>('pending', json);
    this.idempotency = level.sublevel<string, IdempotencyRecord>('idempotency', json);
    this.assets = level.sublevel<string, Buffer>('assets', { valueEncoding: 'buffer' });
    this.auth = level.sublevel<string, unknown>('auth', json);
  }

  static async open(path: string): Promise<StateDb> {
    const level = new Level<string, unknown>(path, { valueEncoding: 'json' });
    await level.open();
    return new StateDb(level);
  }

  async close(): Promise<void> {
    await this.level.close();
  }

  async account(username: string): Promise<AccountRecord | undefined> {
    return (await this.auth.get(`account\x00${username}`)) as AccountRecord | undefined;
  }

  async apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const id = (await this.auth.get(`apikey_hash\x00${hash}`)) as string | undefined;
    return id ? ((await this.auth.get(`apikey\x00${id}`)) as ApiKeyRecord | undefined) : undefined;
  }

  async jwtSecret(): Promise<string | undefined> {
    return (await this.auth.get('jwt_secret')) as string | undefined;
  }

  async counter(name: string): Promise<number> {
    return ((await this.meta.get(`counter\x00${name}`)) as number | undefined) ?? 0;
  }
}
