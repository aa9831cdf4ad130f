/**
 * Chat exports in: an OpenAI-style list of messages (`[{role, content, name?, timestamp?}]`, the shape
 * chat APIs and most export tools write) as one conversation, one event a message, in order.
 *
 * - `role`: user, assistant, system or tool (`developer` is read as system, `function` as tool);
 * - `content`: a string, or a list of text parts (`{type: "text", text}`), joined by newlines;
 * - `name` (optional): who spoke, kept as `metadata.speaker` (a group chat export: consolidation
 *   attributes each statement to that person);
 * - `timestamp` (optional): when it was said, RFC 3339 or Unix seconds/milliseconds, kept as the event's
 *   `valid_time`.
 * A tool message whose content is a JSON document is stored as `content_type: json`.
 *
 * Anything else is refused with the message's index and field: an export that is not a list of such
 * messages is never stored as one blob of text.
 */
import type { ErrorDetail } from '@strata/store';

export interface ChatExportMessage {
  role: string;
  content: string | Array<{ type: string; text?: string }>;
  name?: string;
  timestamp?: string | number;
}

export interface ChatEvent {
  content: string;
  content_type: 'text' | 'json';
  role: 'user' | 'assistant' | 'system' | 'tool';
  valid_time?: string;
  metadata?: { speaker: string };
}

const ROLES: Record<string, ChatEvent['role']> = { user: 'user', assistant: 'assistant', system: 'system', tool: 'tool', developer: 'system', function: 'tool' };
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);
const FIELDS = new Set(['role', 'content', 'name', 'timestamp']);

export type ChatConversion = { events: ChatEvent[]; errors: [] } | { events: null; errors: ErrorDetail[] };

/** The events of a chat export, or every reason it is refused (paths under `base`, e.g. `/messages`). */
export function chatToEvents(messages: unknown, base = ''): ChatConversion {
  const errors: ErrorDetail[] = [];
  if (!Array.isArray(messages)) return { events: null, errors: [{ path: base || '/', message: 'must be a list of messages [{role, content, name?, timestamp?}]' }] };
  if (messages.length === 0) return { events: null, errors: [{ path: base || '/', message: 'must hold at least one message' }] };
  const events: ChatEvent[] = [];
  messages.forEach((m, i) => {
    const at = `${base}/${i}`;
    const fail = (field: string, message: string) => errors.push({ path: field ? `${at}/${field}` : at, message });
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return fail('', 'must be a message object {role, content, name?, timestamp?}');
    const msg = m as Record<string, unknown>;
    for (const k of Object.keys(msg)) if (!FIELDS.has(k)) fail(k, 'is not a field of a chat message (role, content, name, timestamp)');
    const role = typeof msg.role === 'string' ? ROLES[msg.role.toLowerCase()] : undefined;
    if (!role) fail('role', 'must be one of user, assistant, system, tool (developer, function)');
    const content = contentText(msg.content, (field, message) => fail(field, message));
    if (content !== null && content.trim() === '') fail('content', 'must not be empty');
    if (msg.name !== undefined && (typeof msg.name !== 'string' || msg.name.trim() === '' || msg.name.length > 256)) fail('name', 'must be a non-empty string of at most 256 characters');
    const validTime = msg.timestamp === undefined ? undefined : timestampOf(msg.timestamp);
    if (validTime === null) fail('timestamp', 'must be an RFC 3339 time or Unix seconds/milliseconds');
    if (!role || content === null || content.trim() === '' || validTime === null) return;
    const event: ChatEvent = { content, content_type: role === 'tool' && isJsonDocument(content) ? 'json' : 'text', role };
    if (validTime) event.valid_time = validTime;
    if (typeof msg.name === 'string') event.metadata = { speaker: msg.name.trim() };
    events.push(event);
  });
  return errors.length > 0 ? { events: null, errors } : { events, errors: [] };
}

function contentText(content: unknown, fail: (field: string, message: string) => void): string | null {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    fail('content', 'must be a string or a list of text parts [{type: "text", text}]');
    return null;
  }
  const texts: string[] = [];
  content.forEach((part, j) => {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (typeof p !== 'object' || p === null || typeof p.type !== 'string' || !TEXT_PARTS.has(p.type) || typeof p.text !== 'string') {
      fail(`content/${j}`, 'only text parts {type: "text", text} are read from a chat export');
      return;
    }
    texts.push(p.text);
  });
  return texts.length === content.length ? texts.join('\n') : null;
}

/** RFC 3339 (with a zone), or Unix seconds (< 10^11) or milliseconds, as an RFC 3339 UTC time; null if neither. */
function timestampOf(value: unknown): string | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return null;
    const ms = value < 1e11 ? value * 1000 : value;
    const d = new Date(ms);
    return Number.isNaN(d.getTime()) ? null : d.toISOString();
  }
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})$/i.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

function isJsonDocument(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}
