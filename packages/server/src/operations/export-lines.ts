/**
 * Reading an export file (docs/export-format.md): NDJSON split into numbered lines with a bound on a
 * line's bytes, and each line checked against the schema of its kind and turned into the record the
 * `import.records` command carries (built field by field: unknown fields are dropped, optional ones
 * get their defaults). Every refusal names its line: `details[].path` is `/line/N` (plus the field).
 * Transport free: the lines come from any byte stream (an HTTP body, a file).
 */
import { createHash } from 'node:crypto';
import type { ErrorObject, ValidateFunction } from 'ajv';
import {
  EVENT_ROLES, EXPORT_FORMAT, EXPORT_VERSION, RELATIONS, StrataError, TASK_STATUSES, badRequest, payloadTooLarge,
  type ErrorDetail, type EventConsolidation, type ExportHeader, type ExportKind, type ExportRecord,
} from '@strata/store';
import { CONTENT_TYPES, IDENTIFIER } from '../schemas';
import { createAjv, errorDetails, jsonDeeperThan, MAX_JSON_DEPTH } from '../validation';

export interface Line {
  /** 1-based, counting every line of the file (blank ones too) */
  number: number;
  text: string;
}

const NEWLINE = 0x0a;

/**
 * The lines of an NDJSON byte stream, decoded as UTF-8 (a line that is not: 400), `\r\n` accepted,
 * blank lines skipped. A line longer than `maxLineBytes` is refused (413) as soon as it is, so a
 * line never has to be held whole beyond that bound.
 */
export async function* ndjsonLines(chunks: AsyncIterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<Line> {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  let parts: Buffer[] = [];
  let held = 0;
  let number = 0;
  const finish = (rest: Buffer): Line | null => {
    number++;
    const bytes = parts.length === 0 ? rest : Buffer.concat([...parts, rest]);
    parts = [];
    held = 0;
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw lineError(number, 'invalid_json', 'is not valid UTF-8');
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    return text.trim() === '' ? null : { number, text };
  };
  const tooLong = () => payloadTooLarge(`Line ${number + 1} is longer than ${maxLineBytes} bytes (import.max_line_bytes).`);
  for await (const chunk of chunks) {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let at = buf.indexOf(NEWLINE); at >= 0; at = buf.indexOf(NEWLINE)) {
      if (held + at > maxLineBytes) throw withLine(tooLong(), number + 1);
      const line = finish(buf.subarray(0, at));
      if (line) yield line;
      buf = buf.subarray(at + 1);
    }
    if (buf.length > 0) {
      held += buf.length;
      if (held > maxLineBytes) throw withLine(tooLong(), number + 1);
      parts.push(Buffer.from(buf)); // a copy: the chunk's memory is not kept alive by a short tail
    }
  }
  if (held > 0) {
    const line = finish(Buffer.alloc(0));
    if (line) yield line;
  }
}

function withLine(err: StrataError, n: number): StrataError {
  return new StrataError(err.code, err.message, [{ path: `/line/${n}`, message: err.message }]);
}

function lineError(n: number, code: 'invalid_json' | 'validation_failed' | 'json_too_deep', message: string, field = ''): StrataError {
  const path = `/line/${n}${field}`;
  return badRequest(code, `Line ${n}${field ? ` (${field.slice(1)})` : ''} ${message}.`, [{ path, message }]);
}

// ---- the schema of each line ----

const ID = IDENTIFIER;
const NULLABLE_ID = { ...IDENTIFIER, type: ['string', 'null'] };
const TIME = { type: 'string', format: 'date-time' };
const NULLABLE_TIME = { type: ['string', 'null'], format: 'date-time' };
const TEXT = { type: 'string' };
const NULLABLE_TEXT = { type: ['string', 'null'] };
const UNIT_INTERVAL = { type: 'number', minimum: 0, maximum: 1 };
const IDS = { type: 'array', items: ID };
const HEX64 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const BASE64 = { type: 'string', pattern: '^[A-Za-z0-9+/]*={0,2}$' };
const ASSET_REF = {
  type: 'object', required: ['asset_id', 'media_type', 'size'],
  properties: { asset_id: HEX64, media_type: { enum: ['image', 'audio', 'video'] }, size: { type: 'integer', minimum: 0 }, url: NULLABLE_TEXT, phash: NULLABLE_TEXT },
};
const ASSETS = { type: 'array', items: ASSET_REF };
const obj = (kind: string, required: string[], properties: Record<string, unknown>) => ({
  type: 'object', required: ['kind', ...required], properties: { kind: { const: kind }, ...properties },
});

const LINE_SCHEMAS: Record<'header' | ExportKind, object> = {
  header: obj('header', ['format', 'version'], {
    format: { const: EXPORT_FORMAT }, version: { type: 'integer' }, exported_at: TIME, node_id: { type: 'integer' },
    embedder: { type: ['object', 'null'], required: ['id', 'dimensions'], properties: { id: { type: 'string', minLength: 1 }, dimensions: { type: 'integer', minimum: 1 } } },
  }),
  event: obj('event', ['event_id', 'user_id', 'stream_id', 'content', 'content_type', 'valid_time', 'transaction_time'], {
    event_id: ID, user_id: ID, stream_id: ID, content: TEXT, content_type: { enum: [...CONTENT_TYPES] }, org_id: NULLABLE_ID, agent_id: NULLABLE_ID,
    role: { enum: [...EVENT_ROLES, null] }, level: { type: ['integer', 'null'], minimum: 0, maximum: 3 }, parent_id: NULLABLE_TEXT, task_status: NULLABLE_TEXT,
    task_progress: { ...UNIT_INTERVAL, type: ['number', 'null'] }, valid_time: TIME, transaction_time: TIME, metadata: { type: ['object', 'null'] }, assets: ASSETS,
    consolidation: {
      type: ['object', 'null'], required: ['state'],
      properties: { state: { enum: ['pending', 'consolidated', 'dropped', 'failed'] }, reason: TEXT, error: TEXT, attempts: { type: 'integer', minimum: 0 }, at: TIME },
      allOf: [
        { if: { properties: { state: { const: 'dropped' } } }, then: { required: ['reason', 'at'] } },
        { if: { properties: { state: { const: 'failed' } } }, then: { required: ['error', 'attempts', 'at'] } },
      ],
    },
    l3_source: { type: ['object', 'null'], required: ['kind', 'id'], properties: { kind: { enum: ['goal', 'task'] }, id: ID } },
  }),
  asset: obj('asset', ['user_id', 'asset_id', 'data_b64'], { user_id: ID, asset_id: HEX64, data_b64: BASE64 }),
  unit: obj('unit', ['id', 'user_id', 'stream_id', 'level', 'memory_type', 'content', 'valid_time', 'transaction_time'], {
    id: ID, user_id: ID, stream_id: TEXT, org_id: NULLABLE_ID, agent_id: NULLABLE_ID, level: { enum: [1, 2] }, memory_type: { enum: ['factual', 'procedural'] },
    content: TEXT, keywords: { type: 'array', items: TEXT }, speaker: NULLABLE_TEXT, valid_time: TIME, transaction_time: TIME, references: IDS, assets: ASSETS,
    importance: UNIT_INTERVAL, subject: NULLABLE_TEXT, attribute: NULLABLE_TEXT, retired_at: NULLABLE_TIME,
    retired_reason: { enum: ['superseded', 'forgotten', null] }, superseded_by: NULLABLE_ID,
    vector: {
      type: ['object', 'null'], required: ['embedder_id', 'dims', 'f32_b64'],
      properties: { embedder_id: { type: 'string', minLength: 1 }, dims: { type: 'integer', minimum: 1, maximum: 65536 }, f32_b64: BASE64 },
    },
    stats: { type: ['object', 'null'], required: ['retrievals', 'last_retrieved_at'], properties: { retrievals: { type: 'integer', minimum: 0 }, last_retrieved_at: TIME } },
  }),
  edge: obj('edge', ['edge_id', 'user_id', 'source_id', 'target_id', 'relation', 'weight', 'created_at'], {
    edge_id: ID, user_id: ID, source_id: ID, target_id: ID, relation: { enum: [...RELATIONS] }, weight: { type: 'number', minimum: 0 }, created_at: TIME,
  }),
  goal: obj('goal', ['id', 'user_id', 'stream_id', 'content', 'status', 'transaction_time'], {
    id: ID, user_id: ID, stream_id: TEXT, content: TEXT, status: { enum: [...TASK_STATUSES] }, progress: UNIT_INTERVAL, source_event_id: NULLABLE_ID, transaction_time: TIME,
  }),
  task: obj('task', ['task_id', 'user_id', 'stream_id', 'title', 'status', 'created_at', 'updated_at'], {
    task_id: ID, user_id: ID, org_id: NULLABLE_ID, agent_id: NULLABLE_ID, stream_id: TEXT, parent_id: NULLABLE_ID, title: TEXT, description: TEXT,
    status: { enum: [...TASK_STATUSES] }, status_reason: NULLABLE_TEXT, progress: UNIT_INTERVAL, dependencies: IDS, context_refs: IDS,
    created_at: TIME, updated_at: TIME, result_summary: NULLABLE_TEXT,
  }),
  user: obj('user', ['user_id'], { user_id: ID, org_id: NULLABLE_ID }),
};

type Json = Record<string, unknown>;
const or = <T>(value: unknown, fallback: T): T => (value === undefined || value === null ? fallback : (value as T));
/** A time as the server writes it (UTC, milliseconds, `Z`): the instant is kept, and string order is time order. */
const time = (value: unknown): string => new Date(value as string).toISOString();
const nullableTime = (value: unknown): string | null => (value === undefined || value === null ? null : time(value));
const nul = <T>(value: unknown): T | null => (value === undefined ? null : (value as T | null));

/** A validated line as the record the store keeps (field by field; defaults for what a hand-made file may leave out). */
function toRecord(v: Json): ExportRecord {
  switch (v.kind as ExportKind) {
    case 'event':
      return {
        kind: 'event', event_id: v.event_id as string, user_id: v.user_id as string, stream_id: v.stream_id as string, content: v.content as string,
        content_type: v.content_type as never, org_id: nul(v.org_id), agent_id: nul(v.agent_id), role: nul(v.role), level: nul(v.level),
        parent_id: nul(v.parent_id), task_status: nul(v.task_status), task_progress: nul(v.task_progress), valid_time: time(v.valid_time),
        transaction_time: time(v.transaction_time), metadata: nul(v.metadata), assets: assetRefs(v.assets),
        // an event without a consolidation state is one the importing node has not seen consolidated: it consolidates it
        consolidation: consolidationOf(v.consolidation as Json | null | undefined), l3_source: nul(v.l3_source),
      };
    case 'asset':
      return { kind: 'asset', user_id: v.user_id as string, asset_id: v.asset_id as string, data_b64: v.data_b64 as string };
    case 'unit':
      return {
        kind: 'unit', id: v.id as string, user_id: v.user_id as string, stream_id: v.stream_id as string, org_id: nul(v.org_id), agent_id: nul(v.agent_id),
        level: v.level as 1 | 2, memory_type: v.memory_type as never, content: v.content as string, keywords: or(v.keywords, []), speaker: nul(v.speaker),
        valid_time: time(v.valid_time), transaction_time: time(v.transaction_time), references: or(v.references, []), assets: assetRefs(v.assets),
        importance: or(v.importance, 0.5), subject: nul(v.subject), attribute: nul(v.attribute), retired_at: nullableTime(v.retired_at),
        retired_reason: nul(v.retired_reason), superseded_by: nul(v.superseded_by),
        vector: v.vector ? { embedder_id: (v.vector as Json).embedder_id as string, dims: (v.vector as Json).dims as number, f32_b64: (v.vector as Json).f32_b64 as string } : null,
        stats: v.stats ? { retrievals: (v.stats as Json).retrievals as number, last_retrieved_at: time((v.stats as Json).last_retrieved_at) } : null,
      };
    case 'edge':
      return {
        kind: 'edge', edge_id: v.edge_id as string, user_id: v.user_id as string, source_id: v.source_id as string, target_id: v.target_id as string,
        relation: v.relation as never, weight: v.weight as number, created_at: time(v.created_at),
      };
    case 'goal':
      return {
        kind: 'goal', id: v.id as string, user_id: v.user_id as string, stream_id: v.stream_id as string, content: v.content as string, status: v.status as never,
        progress: or(v.progress, 0), source_event_id: nul(v.source_event_id), transaction_time: time(v.transaction_time),
      };
    case 'task':
      return {
        kind: 'task', task_id: v.task_id as string, user_id: v.user_id as string, org_id: nul(v.org_id), agent_id: nul(v.agent_id), stream_id: v.stream_id as string,
        parent_id: nul(v.parent_id), title: v.title as string, description: or(v.description, ''), status: v.status as never, status_reason: nul(v.status_reason),
        progress: or(v.progress, 0), dependencies: or(v.dependencies, []), context_refs: or(v.context_refs, []), created_at: time(v.created_at),
        updated_at: time(v.updated_at), result_summary: nul(v.result_summary),
      };
    case 'user':
      return { kind: 'user', user_id: v.user_id as string, org_id: nul(v.org_id) };
  }
}

function assetRefs(value: unknown) {
  return or<Json[]>(value, []).map((a) => ({ asset_id: a.asset_id as string, media_type: a.media_type as never, size: a.size as number, url: nul<string>(a.url), phash: nul<string>(a.phash) }));
}

function consolidationOf(c: Json | null | undefined): EventConsolidation {
  if (!c) return { state: 'pending' };
  switch (c.state) {
    case 'dropped':
      return { state: 'dropped', reason: c.reason as string, at: time(c.at) };
    case 'failed':
      return { state: 'failed', error: c.error as string, attempts: c.attempts as number, at: time(c.at) };
    default:
      return { state: c.state as 'pending' | 'consolidated' };
  }
}

/** Checks the schema does not express: the bytes behind an id, a vector's length, a retirement's two fields. */
function semanticProblem(r: ExportRecord): ErrorDetail | null {
  // as ingest refuses it: accepted, such an event would only fail consolidation, forever
  if (r.kind === 'event' && r.content_type === 'json' && jsonDeeperThan(r.content, MAX_JSON_DEPTH)) return { path: '/content', message: `must not nest deeper than ${MAX_JSON_DEPTH} levels` };
  if (r.kind === 'asset') {
    if (r.data_b64.length % 4 !== 0) return { path: '/data_b64', message: 'is not base64 (length not a multiple of 4)' };
    const digest = createHash('sha256').update(Buffer.from(r.data_b64, 'base64')).digest('hex');
    if (digest !== r.asset_id) return { path: '/asset_id', message: 'is not the SHA-256 of the bytes in data_b64' };
  }
  if (r.kind === 'unit') {
    if ((r.retired_at === null) !== (r.retired_reason === null)) return { path: '/retired_reason', message: 'must be set exactly when retired_at is' };
    if (r.vector) {
      const { f32_b64: b64, dims } = r.vector;
      if (b64.length % 4 !== 0 || Buffer.from(b64, 'base64').length !== dims * 4) return { path: '/vector/f32_b64', message: `must hold ${dims} float32 values (dims)` };
    }
  }
  return null;
}

export type ParsedHeader = Omit<ExportHeader, 'embedder'> & { embedder: ExportHeader['embedder'] | null };

/** Parses and checks the lines of one file: the header first, then records. */
export class LineParser {
  private readonly validators: Record<string, ValidateFunction>;

  constructor() {
    const ajv = createAjv();
    this.validators = Object.fromEntries(Object.entries(LINE_SCHEMAS).map(([kind, schema]) => [kind, ajv.compile(schema)]));
  }

  /** The parsed JSON object of a line (400 `invalid_json` / `json_too_deep` naming it otherwise). */
  private json(line: Line): Json {
    if (jsonDeeperThan(line.text, MAX_JSON_DEPTH)) throw lineError(line.number, 'json_too_deep', `nests JSON deeper than ${MAX_JSON_DEPTH} levels`);
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch {
      throw lineError(line.number, 'invalid_json', 'is not valid JSON');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw lineError(line.number, 'validation_failed', 'must be a JSON object');
    return value as Json;
  }

  private check(line: Line, kind: string, value: Json): void {
    const validate = this.validators[kind];
    if (!validate(value)) throw schemaError(line.number, validate.errors);
  }

  /** The first line: the header of a format and version this node reads (embedder null: the file does not say). */
  header(line: Line): ParsedHeader {
    const v = this.json(line);
    if (v.kind !== 'header') throw lineError(line.number, 'validation_failed', `must be the header {"kind":"header","format":"${EXPORT_FORMAT}","version":${EXPORT_VERSION},...}`, '/kind');
    this.check(line, 'header', v);
    if (v.version !== EXPORT_VERSION) throw lineError(line.number, 'validation_failed', `is version ${String(v.version)}; this node reads version ${EXPORT_VERSION}`, '/version');
    const embedder = v.embedder as { id: string; dimensions: number } | null | undefined;
    return {
      kind: 'header', format: EXPORT_FORMAT, version: EXPORT_VERSION, exported_at: or(v.exported_at, ''), node_id: or(v.node_id, 0),
      embedder: embedder ? { id: embedder.id, dimensions: embedder.dimensions } : null,
    };
  }

  /** A record line (any line after the header). */
  record(line: Line): ExportRecord {
    const v = this.json(line);
    if (typeof v.kind !== 'string' || !(v.kind in LINE_SCHEMAS) || v.kind === 'header') {
      throw lineError(line.number, 'validation_failed', `has an unknown kind ${JSON.stringify(v.kind ?? null)} (one of ${Object.keys(LINE_SCHEMAS).filter((k) => k !== 'header').join(', ')})`, '/kind');
    }
    this.check(line, v.kind, v);
    const record = toRecord(v);
    const problem = semanticProblem(record);
    if (problem) throw lineError(line.number, 'validation_failed', problem.message, problem.path);
    return record;
  }
}

function schemaError(n: number, errors: ErrorObject[] | null | undefined): StrataError {
  const details = errorDetails(errors).map((d) => ({ path: `/line/${n}${d.path === '/' ? '' : d.path}`, message: d.message }));
  const first = details[0] ?? { path: `/line/${n}`, message: 'is invalid' };
  return badRequest('validation_failed', `Line ${n} is not a valid record: ${first.path.slice(`/line/${n}`.length + 1) || 'the line'} ${first.message}.`, details);
}
