import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BufferSnapshotWriter, bufferSnapshotReader } from '@strata/raft';
import { StateDb, StateMachine, allUnits, unitsBySubjectAttribute, userVectors, type Command, type MemoryUnit } from '@strata/store';
import { SimilarUnits } from '@strata/memory/consolidation';
import { MemoryViews, UserMemoryView } from '../../src/workers/memory-view';

const T = '2026-01-01T00:00:00.000Z';
const unit = (id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id, user_id: 'u', stream_id: 's', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: id, keywords: [], speaker: 'user',
  valid_time: T, transaction_time: T, references: [`e-${id}`], assets: [], importance: 0.5, subject: null, attribute: null,
  retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});

describe('UserMemoryView', () => {
  let dir: string;
  let db: StateDb;
  let sm: StateMachine;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-view-'));
    db = await StateDb.open(dir);
    sm = await StateMachine.open(db);
    const commands: Command[] = [
      { type: 'events.ingest', user_id: 'u', stream_id: 's', at: T, idempotency: null, assets: [], events: [] },
      {
        type: 'memory.consolidate', user_id: 'u', at: T, consumed: [], embedder_id: 'emb-a', method: 'offline',
        units: [
          { unit: unit('a'), vector: [1, 0, 0] },
          { unit: unit('b'), vector: [0.6, 0.8, 0] },
          { unit: unit('c'), vector: [0.6, 0.8, 0] },
          { unit: unit('d'), vector: [0, 0, 1] },
          { unit: unit('old', { retired_at: T, retired_reason: 'superseded', superseded_by: 'a' }), vector: [1, 0, 0] },
          { unit: unit('home', { subject: 'user', attribute: 'residence' }), vector: [0, 1, 0] },
        ],
        reinforced: [], retired: [], edges: [], dropped: [],
      },
      {
        type: 'memory.insights', user_id: 'u', at: T, embedder_id: 'emb-a', create: [{ unit: unit('l2', { level: 2 }), vector: [1, 0, 0] }],
        update: [], edges: [], removed_edges: [], reflected: [],
      },
      {
        type: 'memory.consolidate', user_id: 'u', at: T, consumed: [], embedder_id: 'emb-other', method: 'offline',
        units: [{ unit: unit('foreign'), vector: [1, 0, 0] }], reinforced: [], retired: [], edges: [], dropped: [],
      },
    ];
    for (let i = 0; i < commands.length; i++) expect(await sm.apply(i + 1, commands[i])).not.toHaveProperty('error');
  });
  afterAll(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ranks current L1 units of the same embedder by cosine, ties by id, best k only', async () => {
    const view = await UserMemoryView.load(db, 'u', 'emb-a');
    expect(view.size).toBe(5);
    const hits = await view.findSimilar('u', new Float32Array([2, 1, 0]), 3);
    expect(hits.map((h) => h.unit.id)).toEqual(['b', 'c', 'a']);
    expect(hits[0].similarity).toBeCloseTo((2 * 0.6 + 0.8) / Math.sqrt(5), 6);
    expect(hits[2].similarity).toBeCloseTo(2 / Math.sqrt(5), 6);
    expect((await view.findSimilar('u', new Float32Array([0, 0, 1]), 10)).map((h) => h.unit.id)).toEqual(['d', 'a', 'b', 'c', 'home']);
    expect(await view.findSimilar('someone-else', new Float32Array([1, 0, 0]), 3)).toEqual([]);
    expect(await view.findSimilar('u', new Float32Array([0, 0, 0]), 3)).toEqual([]);
  });

  it('finds units by subject and attribute', async () => {
    const view = await UserMemoryView.load(db, 'u', 'emb-a');
    expect((await view.findBySubjectAttribute('u', 'user', 'residence')).map((u) => u.id)).toEqual(['home']);
  });

  /** What reading LevelDB now answers: the definition a held view must keep to. */
  async function fresh(userId: string, query: Float32Array, k: number) {
    return SimilarUnits.of(await allUnits(db, userId), await userVectors(db, userId), 'emb-a').topK(query, k);
  }

  it('kept current by applied commands: new, reinforced, retired, forgotten and re-embedded units', async () => {
    const views = new MemoryViews({ db, embedderId: 'emb-a', sm });
    const queries = [new Float32Array([2, 1, 0]), new Float32Array([0, 0, 1]), new Float32Array([1, 1, 1])];
    const same = async () => {
      const view = await views.get('u');
      for (const q of queries) expect(await view.findSimilar('u', q, 4)).toEqual(await fresh('u', q, 4));
      expect(await view.findBySubjectAttribute('u', 'user', 'residence')).toEqual(await unitsBySubjectAttribute(db, 'u', 'user', 'residence'));
    };
    await same();
    let index = sm.appliedIndex();
    const apply = async (command: Command) => expect(await sm.apply(++index, command)).not.toHaveProperty('error');
    await apply({
      type: 'memory.consolidate', user_id: 'u', at: T, consumed: [], embedder_id: 'emb-a', method: 'offline',
      units: [
        { unit: unit('e'), vector: [1, 1, 0] },
        { unit: unit('home2', { subject: 'user', attribute: 'residence', content: 'Lisbon' }), vector: [0, 1, 1] },
      ],
      reinforced: [{ unit_id: 'a', add_references: ['e-x'], importance: 0.9 }],
      retired: [{ unit_id: 'home', retired_at: T, reason: 'superseded', superseded_by: 'home2' }],
      edges: [], dropped: [],
    });
    await same();
    expect((await (await views.get('u')).findSimilar('u', new Float32Array([1, 0, 0]), 1))[0].unit.importance).toBe(0.9);
    await apply({ type: 'memory.delete', user_id: 'u', at: T, unit_ids: ['b', 'home2'], event_ids: [], require_units: true });
    await same();
    expect(views.users).toBe(1);
  });

  it('keeps a fact\'s units in key order through a trickle of corrections, retirements and deletions (ids of every UTF-8 length)', async () => {
    const views = new MemoryViews({ db, embedderId: 'emb-a', sm });
    const ids = ['f-m', 'f-a', 'f-\u00e9', 'f-\u4e2d', 'f-\ud83d\ude00', 'f-\uffff', 'f-z', 'f-0', 'f-\uff5e', 'f-\ud7ff', 'f-b', 'f-\ue000'];
    let index = sm.appliedIndex();
    const apply = async (command: Command) => expect(await sm.apply(++index, command)).not.toHaveProperty('error');
    const same = async () => {
      const view = await views.get('u');
      expect((await view.findBySubjectAttribute('u', 'user', 'pet')).map((x) => x.id)).toEqual((await unitsBySubjectAttribute(db, 'u', 'user', 'pet')).map((x) => x.id));
      expect(await view.findBySubjectAttribute('u', 'user', 'pet')).toEqual(await unitsBySubjectAttribute(db, 'u', 'user', 'pet'));
      for (const q of [new Float32Array([1, 2, 3]), new Float32Array([3, 0, 1])]) expect(await view.findSimilar('u', q, 5)).toEqual(await fresh('u', q, 5));
    };
    await same();
    // one correction per command, each retiring the fact's unit before it (a live trickle's pattern)
    for (const [i, id] of ids.entries()) {
      await apply({
        type: 'memory.consolidate', user_id: 'u', at: T, consumed: [], embedder_id: 'emb-a', method: 'offline',
        units: [{ unit: unit(id, { subject: 'user', attribute: 'pet', content: `pet ${i}` }), vector: [i % 3, 1, (i * 7) % 5] }],
        reinforced: [], retired: i > 0 ? [{ unit_id: ids[i - 1], retired_at: T, reason: 'superseded', superseded_by: id }] : [], edges: [], dropped: [],
      });
      await same();
    }
    await apply({ type: 'memory.delete', user_id: 'u', at: T, unit_ids: ['f-\u00e9', 'f-\ue000', ids[ids.length - 1]], event_ids: [], require_units: false });
    await same();
  });

  it('reads afresh after a snapshot install, and holds no more than its budget beyond the view in use', async () => {
    const views = new MemoryViews({ db, embedderId: 'emb-a', sm, maxBytes: 1 });
    await views.get('u');
    await views.get('someone-else');
    expect(views.users).toBe(1);
    const image = new BufferSnapshotWriter();
    await sm.snapshot(image);
    await sm.restore(bufferSnapshotReader(image.bytes()));
    expect(views.users).toBe(0);
    expect((await (await views.get('u')).findSimilar('u', new Float32Array([0, 0, 1]), 2)).map((h) => h.unit.id))
      .toEqual((await fresh('u', new Float32Array([0, 0, 1]), 2)).map((h) => h.unit.id));
  });
});
