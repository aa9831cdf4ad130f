/**
 * Consolidation planning alone, in process: the LoCoMo development conversations planned the way the
 * worker plans them (one user's events in batches, the user's memory kept current between batches),
 * with no store, log or HTTP. What `npm run bench:consolidation` measures minus apply, Raft and I/O.
 *
 *   node --conditions=strata-source --import tsx scripts/bench-consolidation-plan.ts [--data ../shared/data/locomo] [--batch 21]
 *        [--rounds 5] [--full-scan] [--no-topic-words] [--digest]
 *
 * Prints the CPU time of the best round (the machine is shared: the least disturbed round is the
 * figure). `--digest` prints a SHA-256 of every plan instead (ids come from a counter, so it is
 * reproducible): the same digest before and after a change shows that the change left every plan as it
 * was. `--full-scan` answers `findSimilar` by comparing every current unit, as the worker did before
 * `SimilarUnits` pruned its scan (issue 13): its digest must equal the default's.
 * `--batch 21` is what the worker's default batch of 64 events gives each of the 3 users.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { SifEmbedder } from '@strata/memory/embedding';
import { planConsolidation, SharedDirections, SimilarUnits, TopicWords, type SimilarUnit } from '@strata/memory/consolidation';
import type { EventRecord, MemoryUnit } from '@strata/store';
import { deterministicUuid, loadLocomo, turnContent } from './lib/locomo';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : def;
}

const NOW = '2026-01-01T00:00:00.000Z';

const norm = (v: Float32Array): number => {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
};

interface Held { unit: MemoryUnit; vector: Float32Array; norm: number }

/** The scan the worker made before: every current L1 unit compared (its norm computed once), top k by insertion, ties by id. */
function fullScan(units: Iterable<Held>, q: Float32Array, k: number): SimilarUnit[] {
  const qn = norm(q);
  if (qn === 0 || k <= 0) return [];
  const better = (s: number, id: string, than: SimilarUnit) => s > than.similarity || (s === than.similarity && id < than.unit.id);
  const top: SimilarUnit[] = [];
  for (const { unit, vector, norm: n } of units) {
    if (unit.level !== 1 || unit.retired_at !== null) continue;
    if (n === 0) continue;
    let d = 0;
    for (let i = 0; i < q.length; i++) d += q[i] * vector[i];
    const similarity = d / (qn * n);
    if (top.length === k && !better(similarity, unit.id, top[k - 1])) continue;
    let at = top.length;
    while (at > 0 && better(similarity, unit.id, top[at - 1])) at--;
    top.splice(at, 0, { unit, similarity });
    if (top.length > k) top.pop();
  }
  return top;
}

async function main(): Promise<void> {
  const convs = loadLocomo(resolve(arg('data', resolve(__dirname, '../../shared/data/locomo'))));
  const batch = Number(arg('batch', '21'));
  const rounds = Number(arg('rounds', '5'));
  const digestOnly = process.argv.includes('--digest');
  const scanAll = process.argv.includes('--full-scan');
  // without the word lookup of topic updates (as before it): its cost is the difference
  const noTopicWords = process.argv.includes('--no-topic-words');
  const embedder = SifEmbedder.load();

  async function round(digest: ReturnType<typeof createHash> | null): Promise<{ cpuMs: number; events: number; units: number }> {
    const shared = new SharedDirections(); // as the worker's views share them
    let cpuMs = 0;
    let events = 0;
    let units = 0;
    for (const conv of convs) {
      const records = conv.sessions.flatMap((s) => s.turns.map((t, i): EventRecord => ({
        event_id: deterministicUuid(`${conv.id}/${s.index}/${i}`), user_id: conv.id, stream_id: deterministicUuid(`${conv.id}/session/${s.index}`),
        content: turnContent(t), content_type: 'text', org_id: null, agent_id: null, role: 'user', level: null, parent_id: null,
        task_status: null, task_progress: null, valid_time: s.date, transaction_time: s.date, metadata: null, assets: [],
      } as unknown as EventRecord)));
      // The user's memory as the worker's view holds it: SimilarUnits for the neighbours, a map for the facts.
      const similar = new SimilarUnits(embedder.id, { shared });
      const topics = new TopicWords();
      const held = new Map<string, Held>();
      const facts = new Map<string, MemoryUnit[]>();
      let ids = 0;
      for (let i = 0; i < records.length; i += batch) {
        const started = process.cpuUsage();
        const plan = await planConsolidation({
          events: records.slice(i, i + batch), now: NOW, embedder, newId: () => `${conv.id}-${String(ids++).padStart(8, '0')}`,
          findSimilar: async (_user, vector, k) => (scanAll ? fullScan(held.values(), vector, k) : similar.topK(vector, k)),
          findBySubjectAttribute: async (_user, subject, attribute) => [...(facts.get(`${subject}\0${attribute}`) ?? [])],
          findSharingWords: noTopicWords ? undefined : async (_user, text, k, min) => topics.sharing(text, k, min),
        });
        for (const { unit, vector } of plan.units) {
          const v = Float32Array.from(vector);
          held.set(unit.id, { unit, vector: v, norm: norm(v) });
          similar.put(unit, { vector: v, embedder_id: embedder.id });
          topics.put(unit);
          if (unit.subject && unit.attribute) {
            const key = `${unit.subject}\0${unit.attribute}`;
            facts.set(key, [...(facts.get(key) ?? []), unit].sort((a, b) => (a.id < b.id ? -1 : 1)));
          }
        }
        for (const r of plan.reinforced) {
          const h = held.get(r.unit_id);
          if (!h) continue;
          h.unit = { ...h.unit, importance: r.importance, references: [...new Set([...h.unit.references, ...r.add_references])] };
          similar.put(h.unit, { vector: h.vector, embedder_id: embedder.id });
          topics.put(h.unit);
        }
        for (const r of plan.retired) {
          const h = held.get(r.unit_id);
          if (!h) continue;
          h.unit = { ...h.unit, retired_at: r.retired_at, retired_reason: r.reason, superseded_by: r.superseded_by };
          similar.put(h.unit, { vector: h.vector, embedder_id: embedder.id });
          topics.put(h.unit);
          for (const [key, list] of facts) facts.set(key, list.map((u) => (u.id === r.unit_id ? h.unit : u)));
        }
        const used = process.cpuUsage(started);
        cpuMs += (used.user + used.system) / 1000;
        events += Math.min(batch, records.length - i);
        units += plan.units.length;
        digest?.update(JSON.stringify(plan));
      }
    }
    return { cpuMs, events, units };
  }

  if (digestOnly) {
    const digest = createHash('sha256');
    const r = await round(digest);
    console.log(`plans of ${r.events} events (${r.units} units${scanAll ? ', full scan' : ''}): sha256 ${digest.digest('hex')}`);
    return;
  }
  let best = Infinity;
  let last = { events: 0, units: 0 };
  for (let i = 0; i < rounds; i++) {
    const r = await round(null);
    best = Math.min(best, r.cpuMs);
    last = r;
  }
  console.log(`planned ${last.events} events into ${last.units} units in batches of ${batch}${scanAll ? ' (full scan)' : ''}: `
    + `best of ${rounds} rounds ${Math.round(best)} ms CPU, ${Math.round((last.events / best) * 1000)} events per CPU second`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
