/**
 * Every request body's JSON Schema, in one place: used to validate requests (ajv), to word the error
 * details, and to build the OpenAPI document. Optional fields accept a missing key or null alike.
 */

const nullable = (schema: Record<string, unknown>) => ({ ...schema, type: [schema.type as string, 'null'] });

/** user_id, org_id, agent_id: 1 to 256 bytes of UTF-8, no control characters (bytes are checked in code). */
export const IDENTIFIER = { type: 'string', minLength: 1, maxLength: 256, pattern: '^[^\\u0000-\\u001f\\u007f]+$' } as const;
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const UUID = { type: 'string', pattern: UUID_PATTERN } as const;

export const CONTENT_TYPES = ['text', 'image', 'audio', 'video', 'json'] as const;
export const ROLES = ['user', 'assistant', 'system', 'tool'] as const;

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
    role: { type: ['string', 'null'], enum: [...ROLES, null] },
    valid_time: { type: ['string', 'null'], format: 'date-time' },
    metadata: { type: ['object', 'null'], description: 'free JSON, at most ingest.metadata_max_bytes' },
  },
} as const;

export const SCHEMAS = {
  Login: {
    type: 'object', required: ['username', 'password'],
    properties: { username: { type: 'string', minLength: 1, maxLength: 256 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
  },
  ChangePassword: {
    type: 'object', required: ['current_password', 'new_password'],
    properties: { current_password: { type: 'string', minLength: 1, maxLength: 1024 }, new_password: { type: 'string', minLength: 8, maxLength: 1024 } },
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
  Event: EVENT,
  EventBatch: {
    type: 'object', required: ['events'],
    properties: { events: { type: 'array', items: EVENT } },
  },
} as const;

export type SchemaName = keyof typeof SCHEMAS;
