import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateDb, StateMachine, type Command, type MemoryUnit } from '@strata/store';
import { UserMemoryView } from '../../src/workers/memory-view';

const T = '2026-01-01T00:00:00.000Z';
const unit = (id: string, extra: Partial<MemoryUnit> = {}): MemoryUnit => ({
  id, user_id: 'u', stream_id: 's', org_id: null, agent_id: null, level: 1, memory_type: 'factual', content: id, keywords: [], speaker: 'user',
  valid_time: T, transaction_time: T, references: [`e-${id}`], assets: [], importance: 0.5, subject: null, attribute: null,
  retired_at: null, retired_reason: null, superseded_by: null, ...extra,
});

describe('UserMemoryView', () => {
  let dir: string;
  let db: StateDb;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-view-'));
    db = await StateDb.open(dir);
    const sm = await StateMachine.open(db);
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
});
