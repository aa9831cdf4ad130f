/**
 * Facts handed in by the caller (CONTRACT §2 `POST /v1/users/:user_id/facts`, "bring your own
 * extraction"): each becomes an L1 unit at once, under the same correction rule as consolidation (a
 * new value for a subject and attribute supersedes the current unit stating another one, linked
 * `EvolvedTo`; the same value again reinforces the current unit instead of repeating it). Pure apart
 * from the injected embedder and lookup: the caller proposes the plan as one command.
 */
import type { Edge, MemoryType, MemoryUnit } from '@strata/store';
import { DEFAULT_KEYWORD_OPTIONS, extractKeywords, namedEntities } from './keywords';
import { existingValue } from './plan';
import { reinforceImportance, scoreImportance } from './importance';
import { extractSubjectAttribute, normalizeValue, type SubjectAttribute } from './subject';
import type { NewUnit, Reinforcement, Retirement } from './types';

export interface FactInput {
  content: string;
  memory_type?: MemoryType | null;
  keywords?: string[] | null;
  valid_time?: string | null;
  org_id?: string | null;
  agent_id?: string | null;
  stream_id?: string | null;
  /** both or neither: the fact's subject and attribute, for corrections (else read from the content) */
  subject?: string | null;
  attribute?: string | null;
}

export interface FactsInput {
  user_id: string;
  facts: FactInput[];
  now: string;
  newId: () => string;
  /** the stream of a fact that names none */
  default_stream_id: string;
  embedder: { id: string; embed(texts: string[]): Promise<Float32Array[]> };
  findBySubjectAttribute: (userId: string, subject: string, attribute: string) => Promise<MemoryUnit[]>;
}

export interface FactsPlan {
  units: NewUnit[];
  reinforced: Reinforcement[];
  retired: Retirement[];
  edges: Edge[];
  /** per fact, in order: the unit that now holds it (a new unit, or the current one it repeats) */
  memory_ids: string[];
}

/**
 * The subject and attribute a fact states: the caller's (its value read from the words when they
 * state that attribute, else its whole normalized content), else read from its words like consolidation does.
 */
function factOf(f: FactInput): SubjectAttribute | null {
  if (f.subject && f.attribute) {
    // the caller names what the fact is about; its value is what the words state for it, else all they say
    const subject = f.subject.toLowerCase().trim();
    const attribute = f.attribute.toLowerCase().trim();
    const read = extractSubjectAttribute(f.content, subject);
    return { subject, attribute, value: read && read.attribute === attribute ? read.value : normalizeValue(f.content) };
  }
  return (f.memory_type ?? 'factual') === 'factual' ? extractSubjectAttribute(f.content, 'user') : null;
}

export async function planFacts(input: FactsInput): Promise<FactsPlan> {
  const plan: FactsPlan = { units: [], reinforced: [], retired: [], edges: [], memory_ids: [] };
  const facts = input.facts.map((f) => ({ input: f, content: f.content.trim(), fact: factOf(f) }));
  const vectors = facts.length > 0 ? await input.embedder.embed(facts.map((f) => f.content)) : [];
  const current = new Map<string, { unit: MemoryUnit; value: string | null }>(); // subject|attribute → the current holder in this plan
  const reinforced = new Map<string, { base: number; count: number }>();
  const retired = new Set<string>();

  for (let i = 0; i < facts.length; i++) {
    const { input: f, content, fact } = facts[i];
    const supersedes: MemoryUnit[] = [];
    if (fact) {
      const key = `${fact.subject}|${fact.attribute}`;
      const inPlan = current.get(key);
      const holders = inPlan
        ? [inPlan]
        : (await input.findBySubjectAttribute(input.user_id, fact.subject, fact.attribute))
          .filter((u) => u.retired_at === null && !retired.has(u.id))
          .map((u) => ({ unit: u, value: existingValue(u, fact) ?? normalizeValue(u.content) }));
      const same = holders.find((h) => h.value === fact.value);
      if (same) {
        const r = reinforced.get(same.unit.id) ?? { base: same.unit.importance, count: 0 };
        r.count++;
        reinforced.set(same.unit.id, r);
        plan.memory_ids.push(same.unit.id);
        continue;
      }
      supersedes.push(...holders.map((h) => h.unit));
    }
    const unit: MemoryUnit = {
      id: input.newId(), user_id: input.user_id, stream_id: f.stream_id ?? input.default_stream_id, org_id: f.org_id ?? null,
      agent_id: f.agent_id ?? null, level: 1, memory_type: f.memory_type ?? 'factual', content,
      keywords: f.keywords && f.keywords.length > 0 ? [...new Set(f.keywords.map((k) => k.toLowerCase().trim()).filter(Boolean))] : extractKeywords(content, DEFAULT_KEYWORD_OPTIONS),
      speaker: null, valid_time: f.valid_time ?? input.now, transaction_time: input.now, references: [], assets: [],
      importance: scoreImportance({ text: content, entityCount: namedEntities(content).length, hasDate: false, hasSubjectAttribute: fact !== null, procedural: f.memory_type === 'procedural' }),
      subject: fact?.subject ?? null, attribute: fact?.attribute ?? null, retired_at: null, retired_reason: null, superseded_by: null,
    };
    for (const old of supersedes) {
      const inPlan = plan.units.find((n) => n.unit === old);
      if (inPlan) {
        // superseded within the same request: created already retired, so history keeps both
        old.retired_at = input.now; old.retired_reason = 'superseded'; old.superseded_by = unit.id;
      } else {
        retired.add(old.id);
        plan.retired.push({ unit_id: old.id, retired_at: input.now, reason: 'superseded', superseded_by: unit.id });
      }
      plan.edges.push({ edge_id: input.newId(), user_id: input.user_id, source_id: old.id, target_id: unit.id, relation: 'EvolvedTo', weight: 1, created_at: input.now });
    }
    plan.units.push({ unit, vector: Array.from(vectors[i]) });
    if (fact) current.set(`${fact.subject}|${fact.attribute}`, { unit, value: fact.value });
    plan.memory_ids.push(unit.id);
  }
  plan.reinforced = [...reinforced].map(([unit_id, r]) => ({ unit_id, add_references: [], importance: reinforceImportance(r.base, r.count) }));
  return plan;
}
