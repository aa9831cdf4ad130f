/**
 * A reflection on a stream that went quiet: who took part, what was talked about, when. One reflection per
 * stream, found again by its subject (`stream:<id>`) and attribute (`reflection`) and updated when the stream
 * has new events after a later quiet period.
 */
import { isEventRole, type Edge, type EventRecord, type MemoryUnit } from '@strata/store';
import type { Embedder } from '../providers/types';
import { resolveSpeaker } from '../consolidation/speaker';
import { eventText } from '../consolidation/text';
import { REFLECTION_ATTRIBUTE } from './plan-insights';
import { clip, sharedKeywords, timeSpan } from './summarize';

export interface ReflectionInput {
  streamId: string;
  /** The stream's current L1 units. */
  units: MemoryUnit[];
  /** The stream's L0 events (all of them, or at least those since the last reflection). */
  events: EventRecord[];
  now: string;
  newId: () => string;
  /** Minutes without an event after which the stream counts as quiet. Default 30. */
  quietMinutes?: number;
  /** The stream's existing reflection, if any (subject `stream:<id>`, attribute `reflection`). */
  existing?: MemoryUnit | null;
  /** When given, the reflection's vector is returned too. */
  embedder?: Embedder;
  /** Edges of the user, to find the existing reflection's DerivedFrom edges. */
  edges?: Edge[];
}

export interface ReflectionPlan {
  /** A new reflection, or null when `update` is used. */
  create: { unit: MemoryUnit; vector: number[] | null } | null;
  update: { unit_id: string; content: string; keywords: string[]; references: string[]; valid_time: string; importance: number; vector: number[] | null } | null;
  edges: Edge[];
}

const fmt = (iso: string): string => new Date(iso).toISOString().slice(0, 16).replace('T', ' ');

export const reflectionSubject = (streamId: string): string => `stream:${streamId}`;

/** Null when there is nothing to reflect on yet: no events, the stream is still active, or nothing new. */
export async function planReflection(input: ReflectionInput): Promise<ReflectionPlan | null> {
  const quietMs = (input.quietMinutes ?? 30) * 60_000;
  const events = input.events.filter((e) => e.stream_id === input.streamId)
    .sort((a, b) => Date.parse(a.transaction_time) - Date.parse(b.transaction_time) || (a.seq < b.seq ? -1 : 1));
  if (events.length === 0) return null;
  const last = events[events.length - 1];
  // Quiet is measured on acceptance time (when the stream last heard anything), not on the narrated valid time.
  if (Date.parse(input.now) - Date.parse(last.transaction_time) < quietMs) return null;
  const existing = input.existing ?? null;
  const refs = events.map((e) => e.event_id);
  if (existing && refs.every((r) => existing.references.includes(r))) return null;

  const units = input.units.filter((u) => u.stream_id === input.streamId && u.retired_at === null && u.level === 1);
  const userId = events[0].user_id;
  const who: string[] = [];
  for (const e of events) {
    const s = resolveSpeaker(e, e.content_type === 'text' ? e.content : eventText(e).text).speaker ?? 'user';
    if (!who.includes(s)) who.push(s);
  }
  const names = who.filter((s) => !isEventRole(s));
  const people = (names.length > 0 ? names : who).join(who.length === 2 || names.length === 2 ? ' and ' : ', ');
  const ranked = [...units].sort((a, b) => b.importance - a.importance || (a.id < b.id ? -1 : 1));
  const topics = sharedKeywords(ranked, 6, new Set(names.map((n) => n.toLowerCase())));
  const span = timeSpan(events.map((e) => e.valid_time));
  const sameDay = fmt(span.from).slice(0, 10) === fmt(span.to).slice(0, 10);
  const when = sameDay ? `on ${fmt(span.from).slice(0, 10)} (${fmt(span.from).slice(11)}–${fmt(span.to).slice(11)} UTC)` : `from ${fmt(span.from)} to ${fmt(span.to)} UTC`;
  const highlights = ranked.slice(0, 3).map((u) => clip(u.content, 140).replace(/[.;]+$/, ''));
  const parts = [`Conversation of ${people || 'unknown participants'} ${when}, ${events.length} messages.`];
  if (topics.length > 0) parts.push(`Topics: ${topics.join(', ')}.`);
  if (highlights.length > 0) parts.push(`Highlights: ${highlights.join('; ')}.`);
  const content = parts.join(' ');
  const keywords = [...names.map((n) => n.toLowerCase()), ...topics].slice(0, 10);
  const references = [...new Set([...(existing?.references ?? []), ...refs])];
  const validTime = new Date(span.to).toISOString();
  const importance = Math.round(Math.min(1, 0.4 + 0.05 * Math.log2(1 + units.length)) * 1000) / 1000;
  const vector = input.embedder ? Array.from((await input.embedder.embed([content]))[0]) : null;
  const orgs = new Set(events.map((e) => e.org_id));
  const edge = (source: string, target: string): Edge => ({
    edge_id: input.newId(), user_id: userId, source_id: source, target_id: target, relation: 'DerivedFrom', weight: 1, created_at: input.now,
  });

  if (existing) {
    const linked = new Set((input.edges ?? []).filter((e) => e.relation === 'DerivedFrom' && e.source_id === existing.id).map((e) => e.target_id));
    const edges = units.filter((u) => !linked.has(u.id)).sort((a, b) => (a.id < b.id ? -1 : 1)).map((u) => edge(existing.id, u.id));
    return { create: null, update: { unit_id: existing.id, content, keywords, references, valid_time: validTime, importance, vector }, edges };
  }
  const unit: MemoryUnit = {
    id: input.newId(), user_id: userId, stream_id: input.streamId,
    // Org knowledge only when every event of the stream was org knowledge of the same org.
    org_id: orgs.size === 1 ? events[0].org_id : null,
    agent_id: null, level: 2, memory_type: 'factual', content, keywords, speaker: null, valid_time: validTime,
    transaction_time: input.now, references, assets: [], importance,
    subject: reflectionSubject(input.streamId), attribute: REFLECTION_ATTRIBUTE,
    retired_at: null, retired_reason: null, superseded_by: null,
  };
  const edges = [...units].sort((a, b) => (a.id < b.id ? -1 : 1)).map((u) => edge(unit.id, u.id));
  return { create: { unit, vector }, update: null, edges };
}
