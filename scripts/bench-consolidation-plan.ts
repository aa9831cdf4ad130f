/**
 * Consolidation planning alone, in process: the LoCoMo development conversations planned the way the
 * worker plans them (one user's events in batches, the user's memory kept current between batches),
 * with no store, log or HTTP. What `npm run bench:consolidation` measures minus apply, Raft and I/O.
 *
 *   node --conditions=strata-source --import tsx scripts/bench-consolidation-plan.ts [--data ../shared/data/locomo] [--batch 21]
 *        [--rounds 5] [--full-scan] [--no-topic-words] [--digest] [--chat 6400] [--conversations]
 *
 * Prints the CPU time of the best round (the machine is shared: the least disturbed round is the
 * figure). `--digest` prints a SHA-256 of every plan instead (ids come from a counter, so it is
 * reproducible): the same digest before and after a change shows that the change left every plan as it
 * was. `--full-scan` answers `findSimilar` by comparing every current unit, as the worker did before
 * `SimilarUnits` pruned its scan (issue 13): its digest must equal the default's.
 * `--batch 21` is what the worker's default batch of 64 events gives each of the 3 users.
 * `--chat N` plans `npm run bench:cluster -- --default-config`'s chat lines instead (N of them, dealt
 * over its 64 users in turn, as its clients send them): with `--batch 1`, what a gathered trickle at 32
 * clients gives the leader to plan (a tick of ~64 events, one per user). `--conversations` plans the
 * conversation suite's chats (test/conversations/*.json: corrections, updates said in passing, endings,
 * records, several speakers), each in its order, as the conversation eval sends them.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { SifEmbedder } from '@strata/memory/embedding';
import { planConsolidation, SharedDirections, SimilarUnits, TopicWords, type SimilarUnit } from '@strata/memory/consolidation';
import type { EventRecord, MemoryUnit } from '@strata/store';
import { deterministicUuid, loadLocomo, turnContent } from './lib/locomo';
import { loadSuite, turnEvent } from './lib/conversations';
import { chatLine } from './lib/chat-lines';

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

/** Users the chat lines are dealt over, as bench-cluster.ts does. */
const CHAT_USERS = 64;

/** `count` chat lines dealt over 64 users in turn, each user's in the order sent, a second apart. */
function chatConversations(count: number): { id: string; records: EventRecord[] }[] {
  const users = Array.from({ length: CHAT_USERS }, (_, u) => ({ id: `bench-${u}`, records: [] as EventRecord[] }));
  for (let n = 0; n < count; n++) {
    const user = users[n % CHAT_USERS];
    const at = new Date(Date.parse('2026-01-01T00:00:00.000Z') + n * 1000).toISOString();
    user.records.push({
      event_id: deterministicUuid(`chat/${n}`), user_id: user.id, stream_id: deterministicUuid(`chat/stream/${n % CHAT_USERS}`),
      content: chatLine(n), content_type: 'text', org_id: null, agent_id: null, role: 'user', level: null, parent_id: null,
      task_status: null, task_progress: null, valid_time: at, transaction_time: at, metadata: null, assets: [],
    } as unknown as EventRecord);
  }
  return users;
}

/** The conversation suite's chats (test/conversations), their turns made events as the eval sends them (scripts/lib/conversations.ts turnEvent). */
function suiteConversations(): { id: string; records: EventRecord[] }[] {
  const dir = resolve(__dirname, '../test/conversations');
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort().flatMap((f) => loadSuite(resolve(dir, f)).conversations.map((c) => ({
    id: `${f}/${c.id}`,
    records: c.turns.map((turn, i): EventRecord => {
      const e = turnEvent(turn);
      return {
        event_id: deterministicUuid(`${f}/${c.id}/${i}`), user_id: `${f}/${c.id}`, stream_id: deterministicUuid(`${f}/${c.id}/stream`), seq: String(i).padStart(8, '0'),
        content: e.content, content_type: e.content_type ?? 'text', org_id: null, agent_id: null, role: e.role ?? 'user', level: null, parent_id: null,
        task_status: null, task_progress: null, valid_time: e.valid_time, transaction_time: e.valid_time, metadata: e.metadata ?? null, assets: [],
      } as unknown as EventRecord;
    }),
  })));
}

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
  const chat = Number(arg('chat', '0'));
  const conversations = chat > 0 ? chatConversations(chat) : process.argv.includes('--conversations') ? suiteConversations() : convs.map((conv) => ({
    id: conv.id,
    records: conv.sessions.flatMap((s) => s.turns.map((t, i): EventRecord => ({
      event_id: deterministicUuid(`${conv.id}/${s.index}/${i}`), user_id: conv.id, stream_id: deterministicUuid(`${conv.id}/session/${s.index}`),
      content: turnContent(t), content_type: 'text', org_id: null, agent_id: null, role: 'user', level: null, parent_id: null,
      task_status: null, task_progress: null, valid_time: s.date, transaction_time: s.date, metadata: null, assets: [],
    } as unknown as EventRecord))),
  }));

  async function round(digest: ReturnType<typeof createHash> | null): Promise<{ cpuMs: number; events: number; units: number }> {
    const shared = new SharedDirections(); // as the worker's views share them
    let cpuMs = 0;
    let events = 0;
    let units = 0;
    for (const { id: convId, records } of conversations) {
      const conv = { id: convId };
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
    // twice in one process: the second round finds every text the first analysed kept (text/memo.ts), so
    // a value kept per text that differed from a fresh analysis would show as two digests
    const digests: string[] = [];
    let r = { events: 0, units: 0 };
    for (let i = 0; i < 2; i++) {
      const digest = createHash('sha256');
      r = await round(digest);
      digests.push(digest.digest('hex'));
    }
    const same = digests[0] === digests[1] ? 'both rounds' : `SECOND ROUND DIFFERS: ${digests[1]}`;
    console.log(`plans of ${r.events} events (${r.units} units${scanAll ? ', full scan' : ''}): sha256 ${digests[0]} (${same})`);
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
