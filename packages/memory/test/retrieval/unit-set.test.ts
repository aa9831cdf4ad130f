import type { Edge } from '@strata/store';
import { isSlimRecord, UnitSet, UserIndex, type IndexEntry } from '../../src/retrieval/unit-set';
import { unit } from './helpers';

const embedder = { dimensions: 4 };
const vec = (i: number) => Float32Array.from([1, i % 3, (i * 7) % 5, 0.5]);
const edge = (id: string, source: string, target: string): Edge =>
  ({ edge_id: id, user_id: 'alice', source_id: source, target_id: target, relation: 'RelatedTo', weight: 0.5, created_at: '2024-01-01T00:00:00.000Z' }) as unknown as Edge;

/** The part of a set's estimate that depends on its content only (not on the capacities its history left). */
function contentBytes(set: UnitSet): number {
  let n = set.estimatedBytes() - set.text.estimatedBytes() - set.vector.estimatedBytes();
  for (const f of ['own', 'context'] as const) n -= set.fields[f].estimatedBytes();
  return n;
}

describe('UnitSet', () => {
  it('keeps its byte estimate as records come, change and go, equal to that of a set loaded with the result', async () => {
    const a = new UserIndex({ embedder });
    for (let i = 0; i < 40; i++) a.put(unit({ id: `u${i}`, content: `memory number ${i}`, stream_id: `s${i % 3}` }), vec(i));
    for (let i = 0; i < 40; i += 4) a.delete(`u${i}`); // every stream keeps units (an emptied stream keeps its empty set)
    for (let i = 1; i < 40; i += 6) a.replaceRecord(unit({ id: `u${i}`, content: `memory number ${i}`, stream_id: `s${i % 3}`, importance: 0.9, keywords: ['longer', 'record'] }));
    a.put(unit({ id: 'u4', content: 'moved elsewhere', stream_id: 's9' }), vec(4));
    a.loadEdges([edge('e1', 'u1', 'u2'), edge('e2', 'u2', 'u4'), edge('e3', 'u5', 'u7')]);
    a.putEdge(edge('e4', 'u1', 'u4'));
    a.removeEdge('e2');
    a.delete('u7'); // takes e3 with it (u4 was deleted above and put again)

    const b = new UserIndex({ embedder, chunk: 4 });
    const entries: IndexEntry[] = [...a.units.values()].map((u) => ({ unit: { keywords: [], assets: [], ...u }, vector: a.vector.getVector(u.id) ?? null }));
    await b.load(entries);
    b.loadEdges([edge('e1', 'u1', 'u2'), edge('e4', 'u1', 'u4')]);
    expect(b.size).toBe(a.size);
    expect(b.edgeCount).toBe(a.edgeCount);
    expect(contentBytes(b)).toBe(contentBytes(a));
  });

  it('loads in chunks: the event loop turns during a load, and readers see the old content until it is done', async () => {
    const set = new UnitSet({ embedder, chunk: 10 });
    set.put(unit({ id: 'old', content: 'an old memory' }), vec(0));
    const entries: IndexEntry[] = Array.from({ length: 100 }, (_, i) => ({ unit: unit({ id: `n${i}`, content: `new memory ${i}` }), vector: vec(i) }));
    let turns = 0;
    let seenDuring: string[] | null = null;
    const ticker = () => {
      turns++;
      seenDuring ??= [...set.units.keys()];
      if (!done) setImmediate(ticker);
    };
    let done = false;
    setImmediate(ticker);
    await set.load(entries);
    done = true;
    expect(turns).toBeGreaterThan(5);
    expect(seenDuring).toEqual(['old']);
    expect(set.size).toBe(100);
    expect(set.units.has('old')).toBe(false);
    expect(set.byStream.get('s1')?.size).toBe(100);
    expect(set.text.search('memory', 5).length).toBe(5);
  });

  it('keeps slim records (no keywords or assets, the first reference), searchable by their keywords; whole ones when asked', async () => {
    const whole = unit({
      id: 'k1', content: 'a trip to the coast', keywords: ['seaside', 'holiday'], references: ['e1', 'e2', 'e3'],
      assets: [{ asset_id: 'f'.repeat(64), media_type: 'image', size: 10, url: null, phash: '0123456789abcdef' }],
    });
    const slimSet = new UnitSet({ embedder });
    slimSet.put(whole, vec(1));
    const held = slimSet.units.get('k1')!;
    expect(held.keywords).toBeUndefined();
    expect(held.assets).toBeUndefined();
    expect(held.references).toEqual(['e1']);
    expect({ ...held, keywords: whole.keywords, assets: whole.assets, references: whole.references }).toEqual(whole);
    expect(isSlimRecord(held)).toBe(true);
    // what was left out is still searched and matched: the keywords in the text index, the image's hash
    expect(slimSet.text.search('seaside', 1)[0]?.id).toBe('k1');
    expect(slimSet.images.get('k1')).toEqual(['0123456789abcdef']);

    const wholeSet = new UnitSet({ embedder, wholeRecords: true });
    await wholeSet.load([{ unit: whole, vector: vec(1) }]);
    expect(wholeSet.units.get('k1')).toBe(whole);
    expect(isSlimRecord(wholeSet.units.get('k1')!)).toBe(false);
    // built the same way (a load trims what growing left unused, puts do not)
    const slimLoaded = new UnitSet({ embedder });
    await slimLoaded.load([{ unit: whole, vector: vec(1) }]);
    expect(slimLoaded.estimatedBytes()).toBeLessThan(wholeSet.estimatedBytes());
  });

  it('keeps each record\'s times as its unit\'s, by puts and by a load, past the bound of the recent-times table', async () => {
    // repeated times (as a command's units share them) and distinct ones, more than the table holds (1,024)
    const units = Array.from({ length: 3000 }, (_, i) => unit({
      id: `t${i}`, content: `memory ${i}`,
      valid_time: i % 3 === 0 ? `2024-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z` : new Date(Date.UTC(2023, 0, 1) + i * 60_000).toISOString(),
      transaction_time: new Date(Date.UTC(2025, 0, 1) + Math.floor(i / 7) * 1000).toISOString(),
    }));
    const put = new UnitSet({ embedder });
    for (const u of units) put.put(u, vec(1));
    const loaded = new UnitSet({ embedder, chunk: 100 });
    await loaded.load(units.map((u) => ({ unit: u, vector: vec(1) })));
    for (const set of [put, loaded]) {
      for (const u of units) {
        const held = set.units.get(u.id)!;
        expect([held.valid_time, held.transaction_time]).toEqual([u.valid_time, u.transaction_time]);
      }
    }
  });
});
