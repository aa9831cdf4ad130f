/**
 * What a consolidation command's vectors cost on their way through the log, per unit, in the form of
 * logs before issue 27 (JSON numbers) and today's (float32 base64, store/src/command-vectors.ts): the
 * proposer's conversion and JSON.stringify (the log's bytes) and its private copy (json-copy.ts), a
 * follower's JSON.parse, and apply's conversion to the stored record. One process; a command of `--units` units (default 21, a bulk
 * drain's batch of one user) with `--dims`-dimension vectors (default 100, the local embedder's).
 * `--insights`: a `memory.insights` command instead, of `--units` new L2 units (default 3) and as many
 * updates of existing ones, each with its vector (the same two forms since the session after).
 *   node --conditions=strata-source --import tsx scripts/bench-command-vectors.ts [--units 21] [--dims 100] [--insights]
 */
import { commandVector, storedVectorOf } from '../packages/store/src/command-vectors';
import { jsonCopy } from '../packages/store/src/json-copy';

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}

const insights = process.argv.includes('--insights');
const units = arg('units', insights ? 3 : 21);
const dims = arg('dims', 100);
const at = '2026-11-27T18:00:00.000Z';
const unit = (i: number) => ({
  id: `3f0c8a52-${String(i).padStart(4, '0')}-4d7e-9b1a-2c5e8f7a6d3b`, user_id: 'bench-3', stream_id: '0b1b6a4e-5a57-4d0e-8f0e-5f5a0e1d2c3b', org_id: null,
  agent_id: null, level: 1, memory_type: 'factual', content: 'Sam moved to Bristol in May and works at the harbour', keywords: ['sam', 'bristol', 'harbour'],
  speaker: null, valid_time: at, transaction_time: at, references: ['6f1c1c1e-7a8e-4a51-9a53-1f0b5b2a9c11'], assets: [], importance: 0.5,
  subject: 'sam', attribute: 'city', retired_at: null, retired_reason: null, superseded_by: null,
});
/** What an embedder gives: float32 values of a unit vector. */
const embedding = (): Float32Array => {
  const v = Float32Array.from({ length: dims }, () => Math.random() * 2 - 1);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const plan = Array.from({ length: units }, (_, i) => ({ unit: unit(i), vector: Array.from(embedding()) }));
const members = Array.from({ length: 8 }, (_, i) => `6f1c1c1e-7a8e-4a51-9a53-1f0b5b2a9c${String(i).padStart(2, '0')}`);
/** An insights command: `u` new L2 units, and an update of as many existing ones with the same vectors. */
const insightsCommand = (u: { unit: ReturnType<typeof unit> }[]) => ({
  type: 'memory.insights', user_id: 'bench-3', at, embedder_id: 'sif-v1',
  create: u.map((x) => ({ ...x, unit: { ...x.unit, level: 2, memory_type: 'reflective', content: 'Sam: moved to Bristol, works at the harbour, sails on weekends', references: members } })),
  update: u.map(({ unit: x, ...v }) => ({
    unit_id: `${x.id}-old`, content: 'Sam: moved to Bristol and works at the harbour', keywords: ['sam', 'bristol'], references: members, importance: 0.6, valid_time: at, memory_type: 'reflective', ...v,
  })),
  edges: [], removed_edges: [], reflected: [],
});
const command = (u: { unit: ReturnType<typeof unit> }[]) => (insights ? insightsCommand(u) : {
  type: 'memory.consolidate', user_id: 'bench-3', at, consumed: [], embedder_id: 'sif-v1', method: 'offline', units: u, reinforced: [], retired: [], edges: [], dropped: [],
});
/** Every vector of a parsed command (the units', or the insights' created and updated). */
const vectorsOf = <V>(c: { units?: V[]; create?: V[]; update?: V[] }): V[] => (insights ? [...c.create!, ...c.update!] : c.units!);
const perUnit = insights ? 2 * units : units;

function time(f: () => unknown): number {
  for (let i = 0; i < 200; i++) f();
  const n = 2000;
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t) / n / 1000;
}

const forms = {
  numbers: {
    command: () => command(plan),
    store: (c: object) => vectorsOf<{ vector: number[] }>(c).map((u) => storedVectorOf({ vector: u.vector }, 'sif-v1')),
  },
  f32_b64: {
    command: () => command(plan.map((p) => ({ unit: p.unit, ...commandVector(p.vector) }))),
    store: (c: object) => vectorsOf<{ f32_b64: string }>(c).map((u) => storedVectorOf({ f32_b64: u.f32_b64 }, 'sif-v1')),
  },
};
const rows: Record<string, unknown>[] = [];
for (const [name, f] of Object.entries(forms)) {
  const text = JSON.stringify(f.command());
  const parsed = JSON.parse(text);
  const propose = time(() => JSON.stringify(f.command()));
  const copy = time(() => jsonCopy(parsed));
  const parse = time(() => JSON.parse(text));
  const store = time(() => (f.store as (c: unknown) => unknown)(parsed));
  rows.push({
    form: name, 'log bytes': text.length, 'log bytes per unit': Math.round(text.length / perUnit), 'propose µs per unit': +(propose / perUnit).toFixed(2), 'copy µs per unit': +(copy / perUnit).toFixed(2),
    'parse µs per unit': +(parse / perUnit).toFixed(2), 'to stored µs per unit': +(store / perUnit).toFixed(2),
    'leader µs per unit': +((propose + copy + store) / perUnit).toFixed(2), 'follower µs per unit': +((parse + store) / perUnit).toFixed(2),
  });
}
console.log(insights ? `memory.insights of ${units} new and ${units} updated L2 units, ${dims}-dimension vectors` : `memory.consolidate of ${units} units, ${dims}-dimension vectors`);
console.table(rows);
