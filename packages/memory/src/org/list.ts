/**
 * The pure part of `GET /organizations/:org_id/knowledge` (CONTRACT §9): filter, sort, paginate with
 * opaque cursors, and summarize, over one shard or merged across shards.
 *
 * Decisions:
 * - `q`: every whitespace-separated term must occur (case-insensitive substring) in the content or the
 *   keywords. `contributor`: an exact contributor user id. `source_type`: one of the item's
 *   `source_memory_types`, case-insensitive.
 * - Sorts (ties always broken by unit id ascending, so the order is total and stable):
 *   `published_desc` (default): published_at descending;
 *   `contributions_desc`: contribution_count descending, then published_at descending;
 *   `topic_asc`: topic ascending, the topic being the first keyword, or the content without keywords,
 *   lowercased (code-point order: locale-free, the same on every node).
 * - `limit`: default 50; above 500 capped at 500; not an integer or below 1: 400.
 * - Cursor: base64url of `{"s": sort, "k": [sort key…], "id": unit id}` for the last item returned.
 *   Stateless, so it survives restarts and works on any node and across shards (each shard returns
 *   what sorts after it). A cursor made for another sort, or not made by us: 400.
 * - `total_count` and `summary` count every item matching the filters (all pages, cursor ignored).
 * - Across shards: each shard answers `listKnowledgeShard` with the same query, the answering node
 *   calls `mergeKnowledgePages`; the result equals `listKnowledge` over all records at once.
 */
import { knowledgeItem, type KnowledgeItem, type OrgKnowledgeRecord } from './knowledge';
import { OrgError } from './errors';
import { knowledgePartial, mergePartials, summaryOf, type KnowledgePartial, type KnowledgeSummary } from './metrics';

export const KNOWLEDGE_SORTS = ['published_desc', 'contributions_desc', 'topic_asc'] as const;
export type KnowledgeSort = (typeof KNOWLEDGE_SORTS)[number];
export const DEFAULT_KNOWLEDGE_LIMIT = 50;
export const MAX_KNOWLEDGE_LIMIT = 500;

type SortKey = (string | number)[];

interface Cursor {
  sort: KnowledgeSort;
  key: SortKey;
  id: string;
}

export interface KnowledgeQuery {
  q: string | null;
  contributor: string | null;
  source_type: string | null;
  sort: KnowledgeSort;
  limit: number;
  cursor: Cursor | null;
}

/** Raw query-string values (strings, or numbers from a JSON client). */
export interface RawKnowledgeQuery {
  q?: unknown;
  contributor?: unknown;
  source_type?: unknown;
  sort?: unknown;
  limit?: unknown;
  cursor?: unknown;
}

function optionalString(v: unknown, path: string): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new OrgError(path, `${path} must be a string.`);
  const t = v.trim();
  return t === '' ? null : t;
}

function topicOf(item: KnowledgeItem): string {
  return (item.unit.keywords[0] ?? item.unit.content).trim().toLowerCase();
}

function sortKey(sort: KnowledgeSort, item: KnowledgeItem): SortKey {
  if (sort === 'contributions_desc') return [item.contribution_count, item.published_at];
  if (sort === 'topic_asc') return [topicOf(item)];
  return [item.published_at];
}

function cmpValue(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative when (keyA, idA) sorts before (keyB, idB) under `sort`. */
function compareKeys(sort: KnowledgeSort, ka: SortKey, ida: string, kb: SortKey, idb: string): number {
  const descending = sort !== 'topic_asc';
  for (let i = 0; i < ka.length; i += 1) {
    const c = cmpValue(ka[i], kb[i]);
    if (c !== 0) return descending ? -c : c;
  }
  return cmpValue(ida, idb);
}

export function encodeCursor(sort: KnowledgeSort, item: KnowledgeItem): string {
  return Buffer.from(JSON.stringify({ s: sort, k: sortKey(sort, item), id: item.unit.id }), 'utf8').toString('base64url');
}

export function decodeCursor(raw: string, sort: KnowledgeSort): Cursor {
  const bad = (why: string): never => {
    throw new OrgError('cursor', `cursor ${why}; pass next_cursor from the previous page unchanged, with the same sort.`);
  };
  let data: unknown;
  try {
    data = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return bad('is not valid');
  }
  if (data === null || typeof data !== 'object') return bad('is not valid');
  const { s, k, id } = data as { s?: unknown; k?: unknown; id?: unknown };
  if (typeof id !== 'string' || !Array.isArray(k)) return bad('is not valid');
  if (s !== sort) return bad(`was made for sort ${String(s)}, not ${sort}`);
  const shape = sort === 'contributions_desc' ? ['number', 'string'] : ['string'];
  if (k.length !== shape.length || k.some((v, i) => typeof v !== shape[i])) return bad('is not valid');
  return { sort, key: k as SortKey, id };
}

/** Validate and normalize the query string. Throws `OrgError` (400) with the parameter's name. */
export function parseKnowledgeQuery(raw: RawKnowledgeQuery): KnowledgeQuery {
  const sortRaw = optionalString(raw.sort, 'sort') ?? 'published_desc';
  if (!(KNOWLEDGE_SORTS as readonly string[]).includes(sortRaw)) {
    throw new OrgError('sort', `sort must be one of ${KNOWLEDGE_SORTS.join(', ')}.`);
  }
  const sort = sortRaw as KnowledgeSort;
  let limit = DEFAULT_KNOWLEDGE_LIMIT;
  if (raw.limit !== undefined && raw.limit !== null && raw.limit !== '') {
    const n = typeof raw.limit === 'number' ? raw.limit : typeof raw.limit === 'string' && /^\s*\d+\s*$/.test(raw.limit) ? Number(raw.limit) : NaN;
    if (!Number.isInteger(n) || n < 1) throw new OrgError('limit', `limit must be an integer from 1 to ${MAX_KNOWLEDGE_LIMIT}.`);
    limit = Math.min(n, MAX_KNOWLEDGE_LIMIT);
  }
  const cursorRaw = optionalString(raw.cursor, 'cursor');
  return {
    q: optionalString(raw.q, 'q'),
    contributor: optionalString(raw.contributor, 'contributor'),
    source_type: optionalString(raw.source_type, 'source_type'),
    sort,
    limit,
    cursor: cursorRaw === null ? null : decodeCursor(cursorRaw, sort),
  };
}

export function matchesFilters(item: KnowledgeItem, query: Pick<KnowledgeQuery, 'q' | 'contributor' | 'source_type'>): boolean {
  if (query.contributor !== null && !item.contributor_user_ids.includes(query.contributor)) return false;
  if (query.source_type !== null) {
    const wanted = query.source_type.toLowerCase();
    if (!item.source_memory_types.some((t) => t.toLowerCase() === wanted)) return false;
  }
  if (query.q !== null) {
    const hay = `${item.unit.content}\n${item.unit.keywords.join('\n')}`.toLowerCase();
    if (!query.q.toLowerCase().split(/\s+/).filter(Boolean).every((term) => hay.includes(term))) return false;
  }
  return true;
}

/** One shard's answer: its matching items after the cursor (at most `limit`), counts, and partial. */
export interface ShardKnowledgePage {
  items: KnowledgeItem[];
  has_more: boolean;
  total_count: number;
  partial: KnowledgePartial;
}

export interface KnowledgeList {
  items: KnowledgeItem[];
  total_count: number;
  next_cursor: string | null;
  summary: KnowledgeSummary;
}

function sortItems(sort: KnowledgeSort, items: KnowledgeItem[]): KnowledgeItem[] {
  const keyed = items.map((item) => ({ item, key: sortKey(sort, item) }));
  keyed.sort((a, b) => compareKeys(sort, a.key, a.item.unit.id, b.key, b.item.unit.id));
  return keyed.map((x) => x.item);
}

export function listKnowledgeShard(records: readonly OrgKnowledgeRecord[], query: KnowledgeQuery): ShardKnowledgePage {
  const matching = records.filter((r) => matchesFilters(knowledgeItem(r), query));
  const { cursor } = query;
  const after = sortItems(query.sort, matching.map(knowledgeItem))
    .filter((item) => cursor === null || compareKeys(query.sort, sortKey(query.sort, item), item.unit.id, cursor.key, cursor.id) > 0);
  return {
    items: after.slice(0, query.limit),
    has_more: after.length > query.limit,
    total_count: matching.length,
    partial: knowledgePartial(matching),
  };
}

export function mergeKnowledgePages(pages: readonly ShardKnowledgePage[], query: KnowledgeQuery): KnowledgeList {
  const all = sortItems(query.sort, pages.flatMap((p) => p.items));
  const items = all.slice(0, query.limit);
  const more = all.length > query.limit || pages.some((p) => p.has_more);
  const last = items[items.length - 1];
  return {
    items,
    total_count: pages.reduce((n, p) => n + p.total_count, 0),
    next_cursor: more && last ? encodeCursor(query.sort, last) : null,
    summary: summaryOf(mergePartials(pages.map((p) => p.partial))),
  };
}

/** The whole list response over records of one place (a single shard, or all shards' records). */
export function listKnowledge(records: readonly OrgKnowledgeRecord[], query: KnowledgeQuery): KnowledgeList {
  return mergeKnowledgePages([listKnowledgeShard(records, query)], query);
}
