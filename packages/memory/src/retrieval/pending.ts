/**
 * Read-your-writes for retrieval (CONTRACT §3 `include_pending`): events accepted and not yet
 * consolidated are searched as raw hits, so what was just said is found at once. A raw hit is the
 * event as a unit of level 0 (`id` the event id, `references` [the event id]); once consolidation has
 * applied, the event is no longer pending and the units made from it answer instead. A query reads the
 * pending events before the index (so an event consolidated meanwhile is in one or the other, maybe both)
 * and keeps one result per source event (the server's collapseBySource), so never both answer.
 */
import type { EventRecord, MemoryUnit } from '@strata/store';
import { TextIndex, VectorIndex } from '@strata/store/indexes';
import { fieldTexts } from './documents';

/** An unconsolidated event, searched like a unit. */
export type RawHit = Omit<MemoryUnit, 'level'> & { level: 0 };

/** The importance a raw hit ranks with: the middle of the scale (consolidation has not judged it yet). */
const RAW_IMPORTANCE = 0.5;

/** Text and JSON events are searched; a media event's content is a URL or base64, with nothing to match. */
export function isSearchablePending(event: Pick<EventRecord, 'content_type'>): boolean {
  return event.content_type === 'text' || event.content_type === 'json';
}

export function rawHitOf(event: EventRecord): RawHit {
  return {
    id: event.event_id, user_id: event.user_id, stream_id: event.stream_id, org_id: event.org_id, agent_id: event.agent_id,
    level: 0, memory_type: 'factual', content: event.content, keywords: [], speaker: event.role,
    valid_time: event.valid_time, transaction_time: event.transaction_time, references: [event.event_id], assets: event.assets,
    importance: RAW_IMPORTANCE, subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null,
  };
}

/** The indexes of a user's pending events, built per query (a backlog is small and short-lived). */
export class PendingSet {
  readonly hits = new Map<string, RawHit>();
  readonly text = new TextIndex();
  /** the `own` field: a raw hit's document is its own words only */
  readonly own = new TextIndex();
  readonly vector: VectorIndex;
  readonly byStream = new Map<string, Set<string>>();

  constructor(dimensions: number) {
    this.vector = new VectorIndex({ dimensions });
  }

  get size(): number {
    return this.hits.size;
  }

  add(hit: RawHit, vector: Float32Array | null): void {
    this.hits.set(hit.id, hit);
    const { own } = fieldTexts(hit);
    this.text.add(hit.id, own);
    this.own.add(hit.id, own);
    if (vector) this.vector.add(hit.id, vector);
    let stream = this.byStream.get(hit.stream_id);
    if (!stream) this.byStream.set(hit.stream_id, (stream = new Set()));
    stream.add(hit.id);
  }
}
