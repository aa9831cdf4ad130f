import type { MemoryUnit } from '@strata/store';
import {
  decodeCursor, encodeCursor, knowledgeDetail, knowledgeItem, knowledgePartial, listKnowledge, listKnowledgeShard,
  mergeKnowledgePages, mergePartials, metricsOf, OrgError, orgKnowledgeFromUnits, parseKnowledgeQuery,
  type KnowledgeItem, type OrgKnowledgeRecord,
} from '../../src/org';

const T = (d: number): string => new Date(Date.UTC(2025, 0, d)).toISOString();

function unit(id: string, user: string, content: string, over: Partial<MemoryUnit> = {}): MemoryUnit {
  return {
    id, user_id: user, stream_id: 's', org_id: 'acme', agent_id: null, level: 1, memory_type: 'factual', content,
    keywords: [], speaker: null, valid_time: T(1), transaction_time: T(1), references: [], assets: [], importance: 0.5,
    subject: null, attribute: null, retired_at: null, retired_reason: null, superseded_by: null, ...over,
  };
}

const units = [
  unit('k1', 'alice', 'Deploys happen on Tuesdays', { keywords: ['deploy', 'release'], transaction_time: T(3), references: ['e1'] }),
  unit('k2', 'bob', 'Use the staging cluster for load tests', { keywords: ['staging'], memory_type: 'procedural', transaction_time: T(5), references: ['e2'] }),
  unit('k3', 'carol', 'Release notes go to the wiki', { keywords: ['wiki'], transaction_time: T(4), references: ['e3'] }),
  unit('i1', 'alice', 'Releases are coordinated weekly', { level: 2, keywords: ['cadence'], transaction_time: T(6), references: ['e1', 'e3'] }),
  unit('old', 'bob', 'Deploys happen on Mondays', { transaction_time: T(2), retired_at: T(3), retired_reason: 'superseded' }),
  unit('other', 'dave', 'Other org fact', { org_id: 'globex' }),
  unit('private', 'erin', 'My own note', { org_id: null }),
];
const records = orgKnowledgeFromUnits('acme', units);
const q = (raw: Record<string, unknown> = {}) => parseKnowledgeQuery(raw);
const ids = (items: KnowledgeItem[]): string[] => items.map((i) => i.unit.id);

describe('orgKnowledgeFromUnits', () => {
  it('keeps current units of the org; an insight is credited to its sources', () => {
    expect(records.map((r) => r.unit.id)).toEqual(['k1', 'k2', 'k3', 'i1']);
    const insight = records[3];
    expect(insight.contributions.map((c) => [c.source_id, c.contributor_user_id, c.source_memory_type, c.source_level, c.activated_at])).toEqual([
      ['k1', 'alice', 'factual', 1, T(3)], ['k3', 'carol', 'factual', 1, T(4)],
    ]);
    expect(knowledgeItem(insight)).toEqual({
      unit: { id: 'i1', content: 'Releases are coordinated weekly', keywords: ['cadence'], level: 2, transaction_time: T(6) },
      contributor_user_ids: ['alice', 'carol'], contribution_count: 2, source_memory_types: ['factual'], published_at: T(6),
    });
    expect(knowledgeDetail(records[0]).knowledge.contributions).toEqual([{
      source_id: 'k1', contributor_user_id: 'alice', source_memory_type: 'factual', source_level: 1,
      source_content_preview: 'Deploys happen on Tuesdays', activated_at: T(3),
    }]);
  });
});

describe('listKnowledge', () => {
  it('sorts published_desc by default, with summary and total', () => {
    const r = listKnowledge(records, q());
    expect(ids(r.items)).toEqual(['i1', 'k2', 'k3', 'k1']);
    expect(r).toMatchObject({ total_count: 4, next_cursor: null, summary: { knowledge_count: 4, contribution_count: 5, contributor_count: 3 } });
  });

  it('sorts by contributions and by topic', () => {
    expect(ids(listKnowledge(records, q({ sort: 'contributions_desc' })).items)).toEqual(['i1', 'k2', 'k3', 'k1']);
    expect(ids(listKnowledge(records, q({ sort: 'topic_asc' })).items)).toEqual(['i1', 'k1', 'k2', 'k3']); // cadence, deploy, staging, wiki
  });

  it('filters by q, contributor and source_type', () => {
    expect(ids(listKnowledge(records, q({ q: 'RELEASE' })).items)).toEqual(['i1', 'k3', 'k1']); // content or keyword
    expect(ids(listKnowledge(records, q({ q: 'release wiki' })).items)).toEqual(['k3']);
    expect(ids(listKnowledge(records, q({ contributor: 'carol' })).items)).toEqual(['i1', 'k3']);
    const proc = listKnowledge(records, q({ source_type: 'Procedural' }));
    expect(ids(proc.items)).toEqual(['k2']);
    expect(proc).toMatchObject({ total_count: 1, summary: { knowledge_count: 1, contribution_count: 1, contributor_count: 1 } });
  });

  it('pages with stable cursors until the end, under every sort', () => {
    for (const sort of ['published_desc', 'contributions_desc', 'topic_asc']) {
      const full = ids(listKnowledge(records, q({ sort })).items);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 10; i += 1) {
        const page = listKnowledge(records, q({ sort, limit: '3', cursor }));
        seen.push(...ids(page.items));
        expect(page.total_count).toBe(4);
        cursor = page.next_cursor;
        if (cursor === null) break;
      }
      expect(seen).toEqual(full);
    }
  });

  it('gives the same answer merged across shards as over all records', () => {
    const shardA: OrgKnowledgeRecord[] = [records[0], records[3]];
    const shardB: OrgKnowledgeRecord[] = [records[1], records[2]];
    for (const sort of ['published_desc', 'contributions_desc', 'topic_asc']) {
      let cursor: string | null = null;
      const pages: string[][] = [];
      for (let i = 0; i < 10; i += 1) {
        const query = q({ sort, limit: 1, cursor });
        const merged = mergeKnowledgePages([listKnowledgeShard(shardA, query), listKnowledgeShard(shardB, query)], query);
        expect(merged).toEqual(listKnowledge(records, query));
        pages.push(ids(merged.items));
        cursor = merged.next_cursor;
        if (cursor === null) break;
      }
      expect(pages.flat()).toEqual(ids(listKnowledge(records, q({ sort })).items));
    }
  });
});

describe('query and cursor validation', () => {
  it('defaults, caps and rejects', () => {
    expect(q()).toEqual({ q: null, contributor: null, source_type: null, sort: 'published_desc', limit: 50, cursor: null });
    expect(q({ limit: '9999' }).limit).toBe(500);
    expect(q({ q: '  ', limit: '' })).toMatchObject({ q: null, limit: 50 });
    for (const [raw, path] of [[{ sort: 'newest' }, 'sort'], [{ limit: '0' }, 'limit'], [{ limit: 'ten' }, 'limit'], [{ limit: 2.5 }, 'limit'], [{ cursor: 'garbage!' }, 'cursor'], [{ q: 5 }, 'q']] as const) {
      let caught: unknown;
      try {
        q(raw);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(OrgError);
      expect((caught as OrgError).details[0].path).toBe(path);
      expect((caught as OrgError).status).toBe(400);
    }
  });

  it('round-trips and refuses a cursor of another sort', () => {
    const item = knowledgeItem(records[0]);
    const c = encodeCursor('contributions_desc', item);
    expect(decodeCursor(c, 'contributions_desc')).toEqual({ sort: 'contributions_desc', key: [1, T(3)], id: 'k1' });
    expect(() => decodeCursor(c, 'topic_asc')).toThrow(/made for sort contributions_desc/);
    const forged = Buffer.from(JSON.stringify({ s: 'topic_asc', k: [1], id: 'x' })).toString('base64url');
    expect(() => decodeCursor(forged, 'topic_asc')).toThrow(OrgError);
  });
});

describe('metrics partials', () => {
  it('merge to the same result in any grouping and count a contributor once', () => {
    const a = knowledgePartial([records[0], records[3]]);
    const b = knowledgePartial([records[1]]);
    const c = knowledgePartial([records[2]]);
    const whole = knowledgePartial(records);
    expect(mergePartials([a, b, c])).toEqual(whole);
    expect(mergePartials([mergePartials([c, a]), b])).toEqual(whole);
    expect(mergePartials([])).toEqual(knowledgePartial([]));
    expect(metricsOf('acme', mergePartials([a, b, c]))).toEqual({
      org_id: 'acme', knowledge_count: 4, contribution_count: 5, contributor_count: 3,
      source_type_distribution: [{ key: 'factual', value: 4 }, { key: 'procedural', value: 1 }],
      level_distribution: [{ key: '1', value: 3 }, { key: '2', value: 1 }],
      latest_published_at: T(6),
    });
    // carol contributes on two "shards": still one contributor
    expect(mergePartials([c, knowledgePartial([records[3]])]).contributor_user_ids).toEqual(['alice', 'carol']);
  });
});
