/**
 * Every request body's JSON Schema, in one place: used to validate requests (ajv), to word the error
 * details, and to build the OpenAPI document. Optional fields accept a missing key or null alike.
 */

import type { FromSchema } from 'json-schema-to-ts';
import { EVENT_ROLES, RELATIONS, WEBHOOK_KINDS } from '@strata/store';

/**
 * The schema that also accepts null. Generic so the result keeps its literal type (the body types
 * below are computed from it); the spread keeps `type` at its place, so the JSON is the same.
 */
function nullable<S extends { readonly type: string }>(schema: S): Omit<S, 'type'> & { readonly type: readonly [S['type'], 'null'] } {
  return { ...schema, type: [schema.type, 'null'] as const };
}

/**
 * user_id, org_id, agent_id: 1 to 256 bytes of UTF-8, no control characters (C0, DEL, C1). maxLength
 * counts characters, so `x-max-bytes` (validation.ts) bounds the bytes; maxLength stays as the hint
 * for generators and readers of the OpenAPI document.
 */
export const IDENTIFIER = { type: 'string', minLength: 1, maxLength: 256, 'x-max-bytes': 256, pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$' } as const;
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const UUID = { type: 'string', pattern: UUID_PATTERN } as const;

export const CONTENT_TYPES = ['text', 'image', 'audio', 'video', 'json'] as const;

export const EVENT = {
  type: 'object',
  required: ['content'],
  properties: {
    content: { type: 'string', minLength: 1, description: 'payload, non-empty after trimming' },
    content_type: { type: ['string', 'null'], enum: [...CONTENT_TYPES, null], description: 'default text' },
    org_id: nullable(IDENTIFIER),
    level: { type: ['integer', 'null'], minimum: 0, maximum: 3, description: 'target level hint; 3 marks a goal' },
    parent_id: { type: ['string', 'null'], minLength: 1, maxLength: 256 },
    task_status: { type: ['string', 'null'], minLength: 1, maxLength: 64 },
    task_progress: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    agent_id: nullable(IDENTIFIER),
    role: { type: ['string', 'null'], enum: [...EVENT_ROLES, null] },
    valid_time: { type: ['string', 'null'], format: 'date-time' },
    metadata: { type: ['object', 'null'], description: 'free JSON, at most ingest.metadata_max_bytes' },
  },
} as const;


/** The retrieve fields (CONTRACT.md §3), shared by the retrieve and context bodies. */
const DATE_TIME = { type: ['string', 'null'], format: 'date-time' } as const;
const MEDIA = { type: ['string', 'null'], minLength: 1, description: 'base64 (or a data: URL), at most retrieval.max_media_bytes decoded' } as const;
export const RETRIEVE_FIELDS = {
  query: { type: 'string', minLength: 1, maxLength: 65536, description: 'required, also with media' },
  limit: { type: ['integer', 'null'], minimum: 1, description: 'default 10; capped at retrieval.max_limit' },
  min_score: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'default 0' },
  graph_depth: { type: ['integer', 'null'], minimum: 0, description: 'default 1; capped at 3' },
  start_time: DATE_TIME,
  end_time: DATE_TIME,
  as_of: { ...DATE_TIME, description: 'transaction-time point in time' },
  org_id: nullable(IDENTIFIER),
  agent_id: nullable(IDENTIFIER),
  enable_arbitration: { type: ['boolean', 'null'] },
  scope: { type: ['string', 'null'], enum: ['user', 'stream', null], description: 'default user' },
  image: MEDIA,
  audio: MEDIA,
  video: MEDIA,
  consistency: { type: ['string', 'null'], enum: ['local', 'linearizable', null], description: 'extension; default local' },
  include_pending: { type: ['boolean', 'null'], description: 'extension; default true: events not yet consolidated are searched too, as level-0 raw hits' },
  explain: { type: ['boolean', 'null'], description: 'extension; default false: each result also carries `why`, the ranked lists it came from and the signals that moved its score' },
} as const;

/** `RelatedTo` → `related_to`, `IsSubTaskOf` → `is_sub_task_of` (edge relations are accepted in both spellings). */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}
export const RELATION_NAMES = [...RELATIONS, ...RELATIONS.map(snakeCase)];

export const SCHEMAS = {
  Login: {
    type: 'object', required: ['username', 'password'],
    properties: { username: { type: 'string', minLength: 1, maxLength: 256 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
  },
  ChangePassword: {
    type: 'object', required: ['current_password', 'new_password'],
    properties: { current_password: { type: 'string', minLength: 1, maxLength: 1024 }, new_password: { type: 'string', minLength: 8, maxLength: 1024 } },
  },
  SplitGroup: {
    type: 'object',
    properties: {
      point: { type: ['integer', 'null'], minimum: 1, maximum: 2 ** 40, description: 'the key where the moving half starts (default: the median of the group\'s users\' keys, or the middle of its range when it has fewer than two users); GET /v1/cluster/status shows the ranges' },
    },
  },
  MergeGroups: {
    type: 'object', required: ['with'],
    properties: {
      with: { type: 'integer', minimum: 0, maximum: 255, description: 'the group merged into this one: its key range must be adjacent to this group\'s; its id is retired' },
    },
  },
  CreateApiKey: {
    type: 'object',
    properties: {
      name: { type: ['string', 'null'], maxLength: 256 },
      org_id: nullable(IDENTIFIER),
      user_ids: { type: ['array', 'null'], items: IDENTIFIER, minItems: 1, maxItems: 10000 },
      role: { type: ['string', 'null'], enum: ['read', 'write', 'admin', null], description: 'default write' },
    },
  },
  Webhook: {
    type: 'object', required: ['url', 'events'],
    properties: {
      url: { type: 'string', minLength: 1, maxLength: 2048, description: 'http(s); internal addresses refused unless webhooks.allow_private' },
      events: { type: 'array', minItems: 1, maxItems: 16, items: { type: 'string', enum: [...WEBHOOK_KINDS, '*'] }, description: 'kinds to receive; "*" for all' },
      user_ids: { type: ['array', 'null'], items: IDENTIFIER, minItems: 1, maxItems: 10000, description: 'only these users (within the credentials\' scope)' },
      org_id: { ...nullable(IDENTIFIER), description: 'only users of this organization (the credentials\' own, for org-scoped keys)' },
    },
  },
  UserOrg: {
    type: 'object', required: ['org_id'],
    properties: { org_id: { ...nullable(IDENTIFIER), description: "the user's organization; null: none" } },
  },
  Event: EVENT,
  Facts: {
    type: 'object', required: ['facts'],
    properties: {
      facts: {
        type: 'array',
        items: {
          type: 'object', required: ['content'],
          properties: {
            content: { type: 'string', minLength: 1, maxLength: 65536, pattern: '\\S', description: 'the fact, as a sentence' },
            memory_type: { type: ['string', 'null'], enum: ['factual', 'procedural', null], description: 'default factual' },
            keywords: { type: ['array', 'null'], maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 256 } },
            valid_time: { type: ['string', 'null'], format: 'date-time', description: 'when it became true (default: now)' },
            org_id: nullable(IDENTIFIER),
            agent_id: nullable(IDENTIFIER),
            stream_id: { type: ['string', 'null'], pattern: UUID_PATTERN },
            subject: { type: ['string', 'null'], minLength: 1, maxLength: 256, description: 'with attribute: what the fact is about, for corrections' },
            attribute: { type: ['string', 'null'], minLength: 1, maxLength: 256, description: 'with subject: which property it states (e.g. residence)' },
          },
        },
      },
    },
  },
  EventBatch: {
    type: 'object',
    description: 'either `events` or `messages` (a chat export, one event a message)',
    properties: {
      events: { type: 'array', items: EVENT },
      messages: {
        type: 'array', minItems: 1,
        description: 'a chat export: [{role, content, name?, timestamp?}] (OpenAI style); name becomes metadata.speaker, timestamp the valid_time',
        items: { type: 'object' },
      },
    },
  },
  Retrieve: { type: 'object', required: ['query'], properties: RETRIEVE_FIELDS },
  Context: {
    type: 'object', required: ['user_id', 'query'],
    properties: {
      ...RETRIEVE_FIELDS,
      user_id: IDENTIFIER,
      stream_id: { type: ['string', 'null'], pattern: UUID_PATTERN },
      format: { type: ['string', 'null'], enum: ['text', 'xml', null], description: 'default text' },
      token_budget: { type: ['integer', 'null'], description: 'default 800 (or X-Memory-Budget), clamped to [64, 8192]' },
      limit: { type: ['integer', 'null'], minimum: 1, description: 'default 12; capped at retrieval.max_limit' },
    },
  },
  TaskStatus: {
    type: 'object', required: ['status'],
    properties: {
      status: { type: ['string', 'object'], description: 'pending, in_progress, blocked, completed, failed, cancelled (any casing, InProgress, in-progress), or {"Blocked": "reason"}' },
      progress: { type: ['number', 'null'], minimum: 0, maximum: 1 },
      result_summary: { type: ['string', 'null'], maxLength: 10000 },
      reopen: { type: ['boolean', 'null'], description: 'required to leave completed or cancelled' },
    },
  },
  Edge: {
    type: 'object', required: ['source_id', 'target_id', 'relation'],
    properties: {
      source_id: { type: 'string', minLength: 1, maxLength: 256 },
      target_id: { type: 'string', minLength: 1, maxLength: 256 },
      relation: { type: 'string', enum: RELATION_NAMES },
      weight: { type: ['number', 'null'], minimum: 0, maximum: 1, description: 'default 1' },
    },
  },
  SemanticPreview: {
    type: 'object', required: ['instruction'],
    properties: {
      instruction: { type: 'string', minLength: 1, maxLength: 10000 },
      mode: { type: ['string', 'null'], enum: ['forget', 'update', 'auto', null], description: 'default auto' },
      forget_mode: { type: ['string', 'null'], enum: ['logical', 'hard', null], description: 'default logical' },
      org_id: nullable(IDENTIFIER),
      limit: { type: ['integer', 'null'], minimum: 1, description: 'default 10, capped at 25' },
    },
  },
  SemanticExecute: {
    type: 'object', required: ['plan_id'],
    properties: {
      plan_id: { type: 'string', minLength: 1, maxLength: 256 },
      confirm: { description: 'must be true' },
      org_id: nullable(IDENTIFIER),
      reviewer: { type: ['string', 'null'], maxLength: 256 },
      note: { type: ['string', 'null'], maxLength: 10000 },
    },
  },
} as const;

export type SchemaName = keyof typeof SCHEMAS;

/**
 * The type of a request body once ajv has accepted it against `SCHEMAS[N]`, computed from the schema
 * itself (json-schema-to-ts, types only): the schema is the one source for validation, the OpenAPI
 * document and the handlers' types. A route row with `body: N` gets `ctx.body: Body<N>` (http/route.ts).
 * Fields the schema does not list are typed `unknown` (ajv lets them through), never trusted as more.
 */
export type Body<N extends SchemaName> = Bodies[N];
/** Resolved once per schema: applying FromSchema at each use made tsc give up (TS2589) on RouteSpec[]. */
type Bodies = { [N in SchemaName]: FromSchema<(typeof SCHEMAS)[N]> };
