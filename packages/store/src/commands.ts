import type { AccountRecord, ApiKeyRecord, EventRecord } from './types';

/**
 * Commands of the replicated log. A command carries everything non-deterministic (ids, times, hashes,
 * secrets, embeddings) so that applying it is a pure function of the state and the command.
 */

/** An event as proposed: everything but `seq`, which apply derives from the log index. */
export type ProposedEvent = Omit<EventRecord, 'seq'>;

export interface IngestCommand {
  type: 'events.ingest';
  user_id: string;
  stream_id: string;
  /** when the node accepted the request (transaction time of the events) */
  at: string;
  idempotency: { key: string; expires_at: string } | null;
  events: ProposedEvent[];
  /** media bytes to store, base64, keyed by content hash; already-stored assets are skipped by apply */
  assets: { asset_id: string; data_b64: string }[];
}

export interface AuthBootstrapCommand {
  type: 'auth.bootstrap';
  account: AccountRecord;
  jwt_secret: string;
}

export interface SetPasswordCommand {
  type: 'auth.set_password';
  username: string;
  password_hash: string;
  at: string;
}

export interface ApiKeyCreateCommand {
  type: 'apikey.create';
  record: ApiKeyRecord;
}

export interface ApiKeyRevokeCommand {
  type: 'apikey.revoke';
  key_id: string;
}

export type Command =
  | IngestCommand
  | AuthBootstrapCommand
  | SetPasswordCommand
  | ApiKeyCreateCommand
  | ApiKeyRevokeCommand;

export type CommandType = Command['type'];

/** Answer of `events.ingest`: the event ids in request order, and whether this was an idempotent replay. */
export interface IngestAnswer {
  event_ids: string[];
  replayed: boolean;
}
