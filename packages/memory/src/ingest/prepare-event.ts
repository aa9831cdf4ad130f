import { createHash } from 'node:crypto';
import { badRequest, type AssetRef, type ContentType, type MediaType, type ProposedEvent } from '@strata/store';
import { imagePhash } from '../retrieval/phash';

/** An event as a client sends it (already schema-validated: types and enums are right). */
export interface EventInput {
  content: string;
  content_type?: ContentType | null;
  org_id?: string | null;
  level?: number | null;
  parent_id?: string | null;
  task_status?: string | null;
  task_progress?: number | null;
  agent_id?: string | null;
  role?: string | null;
  valid_time?: string | null;
  metadata?: Record<string, unknown> | null;
}

export interface PreparedEvent {
  event: ProposedEvent;
  /** media bytes to store (content-addressed) */
  assets: { asset_id: string; data_b64: string }[];
}

export interface PrepareContext {
  user_id: string;
  stream_id: string;
  event_id: string;
  /** acceptance time: the transaction time, and the valid time when the event has none */
  now: string;
  /** where the event sits in the request, for error paths (e.g. `/events/3`); '' for a single event */
  path: string;
  metadataMaxBytes: number;
  maxContentBytes: number;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;

/** Decodes strict base64 (standard or URL alphabet, optional `data:<type>;base64,` prefix); null when invalid. */
export function decodeBase64(text: string): Buffer | null {
  let body = text.trim();
  const dataUri = /^data:[^,;]*;base64,/i.exec(body);
  if (dataUri) body = body.slice(dataUri[0].length);
  body = body.replace(/\s+/g, '');
  if (body.length === 0 || (!BASE64.test(body) && !BASE64URL.test(body))) return null;
  const unpadded = body.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return null;
  const bytes = Buffer.from(body, BASE64URL.test(body) && !BASE64.test(body) ? 'base64url' : 'base64');
  return bytes.length > 0 ? bytes : null;
}

export function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text.trim());
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** RFC 3339 in, UTC with milliseconds and Z out. */
export function normalizeTime(value: string): string {
  return new Date(value).toISOString();
}

/**
 * Validates what the schema cannot (trimmed content, JSON and media payloads, metadata size) and
 * turns a client's event into the record proposed to the log. Errors name the field's path.
 */
export function prepareEvent(input: EventInput, ctx: PrepareContext): PreparedEvent {
  const contentType: ContentType = input.content_type ?? 'text';
  const content = input.content;
  if (content.trim().length === 0) {
    throw badRequest('validation_failed', `${ctx.path}/content must not be empty.`, [{ path: `${ctx.path}/content`, message: 'must not be empty after trimming' }]);
  }
  if (Buffer.byteLength(content, 'utf8') > ctx.maxContentBytes) {
    throw badRequest('validation_failed', `${ctx.path}/content is longer than ${ctx.maxContentBytes} bytes.`, [{ path: `${ctx.path}/content`, message: `must be at most ${ctx.maxContentBytes} bytes` }]);
  }
  if (contentType === 'json') {
    try {
      JSON.parse(content);
    } catch {
      throw badRequest('invalid_json_content', `${ctx.path}/content must hold a JSON document when content_type is json.`, [{ path: `${ctx.path}/content`, message: 'is not valid JSON' }]);
    }
  }
  if (input.metadata) {
    const size = Buffer.byteLength(JSON.stringify(input.metadata), 'utf8');
    if (size > ctx.metadataMaxBytes) {
      throw badRequest('validation_failed', `${ctx.path}/metadata is ${size} bytes; at most ${ctx.metadataMaxBytes} are allowed.`, [{ path: `${ctx.path}/metadata`, message: `must be at most ${ctx.metadataMaxBytes} bytes of JSON` }]);
    }
  }
  const assets: PreparedEvent['assets'] = [];
  const refs: AssetRef[] = [];
  let storedContent = content;
  if (contentType === 'image' || contentType === 'audio' || contentType === 'video') {
    const media = contentType as MediaType;
    if (isHttpUrl(content)) {
      storedContent = content.trim();
      refs.push({ asset_id: sha256(storedContent), media_type: media, size: 0, url: storedContent, phash: null });
    } else {
      const bytes = decodeBase64(content);
      if (!bytes) {
        throw badRequest('validation_failed', `${ctx.path}/content must be an http(s) URL or base64 data for content_type ${media}.`, [{ path: `${ctx.path}/content`, message: 'is neither an http(s) URL nor valid base64' }]);
      }
      const assetId = sha256(bytes);
      assets.push({ asset_id: assetId, data_b64: bytes.toString('base64') });
      refs.push({ asset_id: assetId, media_type: media, size: bytes.length, url: null, phash: media === 'image' ? phashOrNull(bytes) : null });
      // The bytes live once in the asset table; the event keeps a reference instead of a second copy.
      storedContent = `asset:${assetId}`;
    }
  }
  return {
    assets,
    event: {
      event_id: ctx.event_id,
      user_id: ctx.user_id,
      stream_id: ctx.stream_id,
      content: storedContent,
      content_type: contentType,
      org_id: input.org_id ?? null,
      agent_id: input.agent_id ?? null,
      role: input.role ?? null,
      level: input.level ?? null,
      parent_id: input.parent_id ?? null,
      task_status: input.task_status ?? null,
      task_progress: input.task_progress ?? null,
      valid_time: input.valid_time ? normalizeTime(input.valid_time) : ctx.now,
      transaction_time: ctx.now,
      metadata: input.metadata ?? null,
      assets: refs,
    },
  };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The perceptual hash of an image for near-duplicate retrieval (computed here, by the proposer, so the
 * command carries it and every replica stores the same value); null when the bytes are not a PNG or
 * JPEG that decodes (the image is still stored).
 */
function phashOrNull(bytes: Uint8Array): string | null {
  try {
    return imagePhash(bytes);
  } catch {
    return null;
  }
}
