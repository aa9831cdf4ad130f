/**
 * Request body types are computed from the JSON Schemas (schemas.ts `Body<N>`), and a route row's
 * handler gets the body of its schema (http/route.ts `RouteSpec`). The type-level half of this file is
 * checked by `npm run typecheck` (tsc covers packages/*\/test); jest checks the runtime half: every
 * typed sample passes ajv, and `nullable()` still writes the JSON the OpenAPI document has always had.
 */
import type { RouteSpec } from '../src/http/route';
import { SCHEMAS, type Body, type SchemaName } from '../src/schemas';
import { Validator } from '../src/validation';

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
const same = <T extends true>(): T | undefined => undefined;

// Literal types survive the schema helpers: a widened `type` (string[]) would make these `unknown`.
same<Equal<Body<'UserOrg'>['org_id'], string | null>>();
same<Equal<Body<'Event'>['org_id'], string | null | undefined>>();
same<Equal<Body<'Event'>['role'], 'user' | 'assistant' | 'system' | 'tool' | null | undefined>>();
same<Equal<Body<'Event'>['content_type'], 'text' | 'image' | 'audio' | 'video' | 'json' | null | undefined>>();
same<Equal<Body<'Context'>['format'], 'text' | 'xml' | null | undefined>>();
same<Equal<Body<'Context'>['user_id'], string>>();
same<Equal<Body<'CreateApiKey'>['user_ids'], string[] | null | undefined>>();
same<Equal<NonNullable<Body<'EventBatch'>['events']>[number]['content'], string>>();
same<Equal<Body<'SemanticExecute'>['confirm'], unknown>>();

// A field the schema does not declare is let through by ajv, so it is `unknown`, never trusted as more.
// @ts-expect-error: `nickname` is not in the Login schema
export const undeclared: string = ({} as Body<'Login'>).nickname;

/** A row with `body: 'Edge'` gets `ctx.body: Body<'Edge'>`; a row without a schema gets `unknown`. */
export const rows: RouteSpec[] = [
  {
    method: 'post', path: '/typed', summary: 'typed', tag: 'test', auth: 'write', body: 'Edge',
    handler: async ({ body }) => {
      same<Equal<typeof body, Body<'Edge'>>>();
      // @ts-expect-error: weight is number | null | undefined, not a string
      return body.weight.toUpperCase();
    },
  },
  {
    method: 'get', path: '/untyped', summary: 'untyped', tag: 'test', auth: 'read',
    handler: async ({ body }) => {
      same<Equal<typeof body, unknown>>();
      return body;
    },
  },
];

/** One valid body per schema, typed by the derived type: a new schema without a sample fails tsc. */
const SAMPLES: { [N in SchemaName]: Body<N> } = {
  Login: { username: 'admin', password: 'secret' },
  ChangePassword: { current_password: 'secret', new_password: 'longer secret' },
  SplitGroup: { point: 1024 },
  MergeGroups: { with: 1 },
  CreateApiKey: { name: 'ci', org_id: null, user_ids: ['u1'], role: 'read' },
  UserOrg: { org_id: null },
  Webhook: { url: 'https://hooks.example.com/strata', events: ['memory.created', '*'], user_ids: ['u1'], org_id: null },
  Event: { content: 'hello', content_type: 'text', role: 'user', level: 0, metadata: { a: 1 }, valid_time: '2024-01-01T00:00:00Z' },
  EventBatch: { events: [{ content: 'a' }, { content: 'b', org_id: 'acme' }] },
  Facts: { facts: [{ content: 'Ana lives in Porto.', subject: 'ana', attribute: 'residence', keywords: ['porto'], stream_id: null }] },
  Retrieve: { query: 'where', limit: 3, scope: 'stream', consistency: 'linearizable', as_of: null },
  Context: { query: 'where', user_id: 'u1', format: 'xml', token_budget: 256, stream_id: null },
  TaskStatus: { status: { Blocked: 'waiting' }, progress: 0.5, reopen: null },
  Edge: { source_id: 'a', target_id: 'b', relation: 'related_to', weight: 0.5 },
  SemanticPreview: { instruction: 'forget my address', mode: 'forget', forget_mode: 'hard', limit: 5 },
  SemanticExecute: { plan_id: 'p1', confirm: true, reviewer: null },
};

describe('request body types derived from the schemas', () => {
  const validator = new Validator();

  it.each(Object.keys(SCHEMAS) as SchemaName[])('a body typed Body<%s> passes the schema', (name) => {
    expect(validator.check(name, SAMPLES[name])).toBe(SAMPLES[name]);
  });

  it('writes nullable fields as they always were (the OpenAPI document does not change)', () => {
    expect(JSON.stringify(SCHEMAS.Event.properties.org_id)).toBe(
      '{"type":["string","null"],"minLength":1,"maxLength":256,"x-max-bytes":256,"pattern":"^[^\\\\u0000-\\\\u001f\\\\u007f-\\\\u009f]+$"}',
    );
    expect(JSON.stringify(SCHEMAS.UserOrg.properties.org_id)).toBe(
      '{"type":["string","null"],"minLength":1,"maxLength":256,"x-max-bytes":256,"pattern":"^[^\\\\u0000-\\\\u001f\\\\u007f-\\\\u009f]+$","description":"the user\'s organization; null: none"}',
    );
  });
});
