/**
 * Step 1: the text an event contributes to memory, for every content type.
 * Pure: reads only the event record.
 */
import type { AssetRef, EventRecord, MediaType } from '@strata/store';

export interface EventText {
  /** Readable text; for media, a reference line plus the description when the metadata has one. */
  text: string;
  /** `text` is free prose to be split into sentences (false for JSON and media, which stay whole). */
  prose: boolean;
  assets: AssetRef[];
}

export interface TextOptions {
  /** Upper bound on the characters of flattened JSON (a JSON document can be huge; memory wants its gist). */
  maxJsonChars: number;
  /** Upper bound on the key paths listed from one JSON document. */
  maxJsonEntries: number;
}

export const DEFAULT_TEXT_OPTIONS: TextOptions = { maxJsonChars: 1200, maxJsonEntries: 60 };

/** Metadata keys that describe media, in order of preference (`blip_caption` is LoCoMo's photo caption). */
const DESCRIPTION_KEYS = ['caption', 'description', 'alt', 'alt_text', 'blip_caption', 'transcript', 'summary'];

export function eventText(event: EventRecord, options: TextOptions = DEFAULT_TEXT_OPTIONS): EventText {
  switch (event.content_type) {
    case 'json':
      return { text: jsonToText(event.content, options), prose: false, assets: event.assets };
    case 'image':
    case 'audio':
    case 'video':
      return { text: mediaText(event.content_type, event), prose: false, assets: event.assets };
    default:
      return { text: event.content.trim(), prose: true, assets: event.assets };
  }
}

/** Description of a media item from the event metadata, or null. */
export function mediaDescription(metadata: Record<string, unknown> | null): string | null {
  if (!metadata) return null;
  for (const key of DESCRIPTION_KEYS) {
    const v = metadata[key];
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return null;
}

/**
 * `[image https://…/a.jpg] a dog on a beach` or `[image]` when there is neither URL nor description.
 * The asset itself stays on the unit (assets), so media queries still find it without a caption.
 */
function mediaText(kind: MediaType, event: EventRecord): string {
  const url = event.assets.find((a) => a.url)?.url ?? (/^https?:\/\/\S+$/.test(event.content.trim()) ? event.content.trim() : null);
  const ref = url ? `[${kind} ${url}]` : `[${kind}]`;
  const desc = mediaDescription(event.metadata);
  return desc ? `${ref} ${desc}` : ref;
}

/** `{"order":{"items":[{"name":"pen"}]}}` → `order.items[0].name: pen`, entries joined by `; `, bounded. */
export function jsonToText(raw: string, options: TextOptions = DEFAULT_TEXT_OPTIONS): string {
  let doc: unknown;
  try {
    doc = JSON.parse(raw);
  } catch {
    // The server rejects unparsable JSON at ingest; if one slips through, its raw text is still memory.
    return truncate(raw.trim(), options.maxJsonChars);
  }
  const entries: string[] = [];
  let total = 0;
  let omitted = 0;
  const push = (entry: string): void => {
    if (entries.length >= options.maxJsonEntries || total + entry.length + 2 > options.maxJsonChars) {
      omitted++;
      return;
    }
    entries.push(entry);
    total += entry.length + 2;
  };
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) {
      if (value.length === 0) push(`${path || '(root)'}: []`);
      value.forEach((v, i) => walk(v, `${path}[${i}]`));
    } else if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value as Record<string, unknown>);
      if (keys.length === 0) push(`${path || '(root)'}: {}`);
      for (const k of keys) walk((value as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
    } else {
      push(`${path || 'value'}: ${scalar(value)}`);
    }
  };
  walk(doc, '');
  let text = entries.join('; ');
  if (omitted > 0) text += `; … (${omitted} more)`;
  return text;
}

function scalar(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return v.length > 200 ? `${v.slice(0, 199)}…` : v;
  return String(v);
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}
