/**
 * Consolidation planner: a batch of pending L0 events → one plan (new L1 units, reinforcements of existing
 * units, retirements by correction, edges, dropped noise). Pure apart from the injected providers
 * (embedder, LLM, lookups of existing memory): the caller proposes the plan as one command, and apply is
 * deterministic because every id, time, vector and decision is already in it.
 *
 * Order of decisions per statement: correction (same subject+attribute, other value) → duplicate (same
 * subject+attribute and value, or similarity ≥ duplicate threshold with compatible text and the same
 * speaker) → new unit, auto-linked to its most similar current units.
 */
import { isEventRole, type Edge, type MemoryUnit, type Relation } from '@strata/store';
import { DEFAULT_KEYWORD_OPTIONS, extractKeywords, namedEntities } from './keywords';
import { DEFAULT_TEXT_OPTIONS } from './text';
import { DEFAULT_MIN_WORD_OVERLAP, DEFAULT_THRESHOLDS, compatibleText, cosine, wordOverlap } from './similarity';
import { resolveTemporal } from './temporal';
import { FACT_ANNOTATION, extractSubjectAttribute, isBackReference, normalizeValue, type SubjectAttribute } from './subject';
import { normalizeSubject, resolveSpeaker } from './speaker';
import { reinforceImportance, scoreImportance } from './importance';
import { draftEvents, newDiscourseState, type StatementDraft } from './drafts';
import { changeCue, emojiWords, endedClause, facetsStated, replacedValues, STATE_FACETS, valueKey, valueKeys, withEmojiWords, type Facet } from '../text';
import { namesOtherHolder, newRoleHolder } from './roles';
import { aboutPronoun, endingNames, endsOwnThing, objectStems, recordEntries, recordKey, restatesChangedFields, restatesValue, slotAttributes, slotOf, updatesTopic, valuedFacets, type Slot } from './updates';
import { llmDrafts } from './llm-extract';
import { openingName } from './discourse';
import { assertPlanCoversEvents } from './invariants';
import type { ConsolidationInput, ConsolidationOptions, ConsolidationPlan, NewUnit, Reinforcement, Retirement } from './types';

export const DEFAULT_CONSOLIDATION_OPTIONS: ConsolidationOptions = {
  thresholds: DEFAULT_THRESHOLDS,
  maxLinks: 3,
  candidateK: 8,
  keywords: DEFAULT_KEYWORD_OPTIONS,
  text: DEFAULT_TEXT_OPTIONS,
  minWordOverlap: DEFAULT_MIN_WORD_OVERLAP,
};

/** A statement made ready for the decisions: content, vector, fact. */
interface Prepared {
  draft: StatementDraft;
  content: string;
  validTime: string;
  keywords: string[];
  fact: SubjectAttribute | null;
  /** who and which single-valued facets the statement speaks of, and whether it announces a change (updates.ts) */
  slot: Slot | null;
  importance: number;
}

const round4 = (x: number): number => Math.round(x * 10000) / 10000;

export async function planConsolidation(input: ConsolidationInput): Promise<ConsolidationPlan> {
  const opts: ConsolidationOptions = { ...DEFAULT_CONSOLIDATION_OPTIONS, ...input.options };
  const plan: ConsolidationPlan = { units: [], reinforced: [], retired: [], edges: [], dropped: [], method: 'offline', embedder_id: input.embedder.id };
  if (input.events.length === 0) return plan;
  const userId = input.events[0].user_id;
  const other = input.events.find((e) => e.user_id !== userId);
  if (other) throw new Error(`consolidation batch mixes users: ${userId} and ${other.user_id}`);
  if (new Set(input.events.map((e) => e.event_id)).size !== input.events.length) throw new Error('consolidation batch repeats an event id');

  // 1-5: drafts, from the LLM when one is configured and answers well, else offline.
  // The names the batch uses, read once: the drafts resolve pronouns with them, the slots find subjects.
  const discourse = newDiscourseState(input.events);
  let front = null;
  if (input.llm) front = await llmDrafts(input.llm, input.events, opts.text);
  if (front) plan.method = 'llm';
  else front = draftEvents(input.events, opts.text, discourse);
  plan.dropped.push(...front.dropped);

  // 6-8, 11: content, valid time, keywords, subject/attribute, importance.
  const previousFact = new Map<string, SubjectAttribute>(); // per speaker, for "actually, it's Y"
  const names = discourse.names;
  // the names of the batch and its speakers, lowercased: what two statements share by naming a person is no topic
  const knownNames = new Set([...names, ...input.events.map((e) => resolveSpeaker(e, e.content_type === 'text' ? e.content : '').speaker ?? '')].map((n) => n.toLowerCase()).filter((n) => n !== ''));
  const openedBy = (text: string) => openingName(text, names)?.toLowerCase();
  const prepared: Prepared[] = front.drafts.map((d) => {
    const t = resolveTemporal(d.text, d.event.valid_time);
    const subject = normalizeSubject(d.speaker);
    let fact: SubjectAttribute | null = null;
    if (d.fact !== undefined) fact = d.fact && { subject: d.fact.subject.toLowerCase().trim(), attribute: d.fact.attribute.toLowerCase().trim(), value: normalizeValue(d.fact.value) };
    else if (d.memoryType === 'factual') fact = extractSubjectAttribute(d.text, subject, previousFact.get(subject) ?? null);
    // A tool's JSON output about a record (a booking, an order): a later output of the record replaces it.
    const record = !fact && d.event.content_type === 'json' ? recordKey(d.event.content) : null;
    if (record) fact = { subject: 'user', attribute: record, value: normalizeValue(t.text).slice(0, 200) };
    if (fact && !record) previousFact.set(subject, fact);
    // "Actually, it's Denver" alone means nothing later: say which attribute it corrects.
    const annotation = fact && isBackReference(d.text) && !FACT_ANNOTATION.test(t.text) ? ` (${fact.attribute}: ${fact.value})` : '';
    const content = `${d.prefix}${t.text}${annotation}`;
    // the speaker, and what its emoji name ("meet Lola 🐕" is about a dog): keywords the words do not give
    const named = [...(d.speaker && !isEventRole(d.speaker) ? [d.speaker] : []), ...emojiWords(t.text)];
    const keywords = d.keywords && d.keywords.length > 0
      ? dedupeLower([...named, ...d.keywords]).slice(0, opts.keywords.max)
      : extractKeywords(d.event.content_type === 'json' ? jsonKeywordText(t.text) : t.text, opts.keywords, named);
    const importance = scoreImportance({
      text: t.text, entityCount: namedEntities(t.text).length, hasDate: t.expressions.length > 0,
      hasSubjectAttribute: fact !== null, procedural: d.memoryType === 'procedural',
    });
    const slot = fact ? null : slotOf(d.text, subject, names);
    return { draft: d, content, validTime: t.validTime, keywords, fact, slot, importance };
  });

  // The vectors, in one call.
  // an emoji is no word to the embedder: its words are read beside it ("meet Lola 🐕" is about a dog)
  const vectors = prepared.length > 0 ? await input.embedder.embed(prepared.map((p) => withEmojiWords(p.content))) : [];
  if (vectors.length !== prepared.length) throw new Error(`embedder returned ${vectors.length} vectors for ${prepared.length} texts`);

  const planned: { unit: MemoryUnit; vector: Float32Array; fact: SubjectAttribute | null }[] = [];
  const byFactKey = new Map<string, number>(); // subject|attribute → index in `planned` of the current one
  const reinforced = new Map<string, { refs: string[]; base: number; count: number }>();
  const retired = new Map<string, Retirement>();
  const plannedCue = new Map<string, 'update' | 'end'>(); // this batch's new units that announced a change
  const edge = (source: string, target: string, relation: Relation, weight: number): Edge => ({
    edge_id: input.newId(), user_id: userId, source_id: source, target_id: target, relation, weight, created_at: input.now,
  });
  const reinforce = (unit: MemoryUnit, eventId: string): void => {
    const r = reinforced.get(unit.id) ?? { refs: [], base: unit.importance, count: 0 };
    if (!r.refs.includes(eventId)) r.refs.push(eventId);
    r.count++;
    reinforced.set(unit.id, r);
  };
  const mergeIntoPlanned = (i: number, eventId: string): void => {
    const u = planned[i].unit;
    if (!u.references.includes(eventId)) u.references.push(eventId);
    u.importance = reinforceImportance(u.importance);
  };
  const isCurrent = (u: MemoryUnit): boolean => u.retired_at === null && !retired.has(u.id) && u.user_id === userId;

  for (let i = 0; i < prepared.length; i++) {
    const p = prepared[i];
    let vec = vectors[i];
    const eventId = p.draft.event.event_id;
    const speakerKey = normalizeSubject(p.draft.speaker);
    const supersedes: MemoryUnit[] = [];

    // 8: corrections, first among this batch's own statements, then against existing memory.
    if (p.fact) {
      const key = `${p.fact.subject}|${p.fact.attribute}`;
      const inBatch = byFactKey.get(key);
      const isRecord = p.fact.attribute.startsWith('record ');
      if (isRecord) {
        // A record's later output is its new state: the fields it gives replace the old ones, the fields
        // it leaves out ("plan: Fibre 500; status: upgraded" after the whole account) still hold. The new
        // unit states the merged record and supersedes the old one, so no field keeps a stale value current.
        const olds = inBatch !== undefined ? [planned[inBatch].unit] : sortById((await input.findBySubjectAttribute(userId, p.fact.subject, p.fact.attribute)).filter(isCurrent));
        const given = p.content.slice(p.draft.prefix.length);
        const merged = olds.reduce((acc, u) => mergeRecordText(withoutPrefix(u), acc), given);
        const same = olds.find((u) => withoutPrefix(u) === merged);
        if (same) {
          if (inBatch !== undefined) mergeIntoPlanned(inBatch, eventId);
          else reinforce(same, eventId);
          continue;
        }
        if (merged !== given) {
          p.content = `${p.draft.prefix}${merged}`;
          [vec] = await input.embedder.embed([p.content]);
        }
        supersedes.push(...olds);
        // What was said of the old state in words ("You're on Fibre 150 at £32 a month") is stale with
        // the field it restated: those statements retire with the record's old version.
        const restating = [
          ...planned.map((q) => q.unit),
          ...(await input.findSimilar(userId, vec, opts.candidateK * 2)).map((s) => s.unit),
        ].filter((u) => isCurrent(u) && u.level === 1 && !u.attribute?.startsWith('record ') && !supersedes.includes(u));
        for (const old of olds) {
          for (const u of restating) {
            if (!supersedes.some((x) => x.id === u.id) && restatesChangedFields(withoutPrefix(u), withoutPrefix(old), merged)) supersedes.push(u);
          }
        }
      } else if (inBatch !== undefined) {
        if (planned[inBatch].fact?.value === p.fact.value) { mergeIntoPlanned(inBatch, eventId); continue; }
        supersedes.push(planned[inBatch].unit);
      } else {
        const existing = (await input.findBySubjectAttribute(userId, p.fact.subject, p.fact.attribute)).filter(isCurrent);
        const same = existing.find((u) => existingValue(u, p.fact as SubjectAttribute) === p.fact?.value);
        if (same) { reinforce(same, eventId); continue; }
        supersedes.push(...sortById(existing));
      }
    }

    // 8b: updates said in passing (updates.ts): a change cue retires the subject's current statements on the facet.
    if (!p.fact && p.slot?.cue) {
      const valued = p.slot.cue === 'update' ? valuedFacets(p.draft.text) : null;
      // an update retires the facets it gives a value of: "Now I rent a small apartment in Delft with my
      // colleague Sanne" moved house and kept the job (facetsStated)
      const stated = p.slot.cue === 'update' ? facetsStated(p.draft.text) : null;
      const slot = { ...p.slot, facets: p.slot.facets.filter((f) => (!valued || valued.has(f)) && (!stated || stated.has(f))) };
      const attrs = slotAttributes(slot);
      const sameEvent = (u: MemoryUnit) => u.references.includes(eventId);
      const retirable = (u: MemoryUnit) => isCurrent(u) && u.subject === slot.subject && u.attribute !== null
        && (slot.cue === 'end' ? STATE_FACETS.has(u.attribute as Facet) : attrs.includes(u.attribute))
        // an ending retires only what it names; an update retires the rest, but not a sibling clause of
        // its own turn, unless that sibling is the ending of the old value ("sold the bike, I take the train now")
        && (slot.cue === 'end' ? endingNames(p.draft.text, withoutPrefix(u)) && !sameEvent(u)
          : (!sameEvent(u) || plannedCue.get(u.id) === 'end') && !restatesValue(p.draft.text, withoutPrefix(u), u.attribute));
      for (const q of planned) if (retirable(q.unit) && !supersedes.includes(q.unit)) supersedes.push(q.unit);
      // An ending names what it ends, so any facet of the subject may hold it ("Long shift at the cafe" is
      // about a schedule, "I quit the cafe" about work); an update retires its own facets only.
      // A fact's list holds its retired versions too (it grows with every correction): the retirable ones
      // are sorted, not the whole list (`retirable` reads nothing this loop changes, so the same units
      // come in the same order).
      for (const attr of slot.cue === 'end' ? STATE_FACETS : attrs) {
        for (const u of sortById((await input.findBySubjectAttribute(userId, slot.subject, attr)).filter(retirable))) {
          if (!supersedes.some((x) => x.id === u.id)) supersedes.push(u);
        }
      }
    }

    // The current statements nearest this one, stored and in this batch: 8c and 8d look among them for
    // what this statement retires, 9 for what it duplicates.
    const similar = (await input.findSimilar(userId, vec, opts.candidateK)).filter((s) => isCurrent(s.unit) && s.unit.level === 1);

    const batchSimilar = planned
      .map((q, j) => ({ j, unit: q.unit, similarity: cosine(vec, q.vector) }))
      .filter((s) => s.unit.retired_at === null);
    // What 8c and 8d may retire: a current statement (level 1) of another event, not yet taken. An
    // assistant's statement is procedural (what it did), yet may state a value that changes since ("I can
    // see you're on our 300 Mbps plan with an NW-600 modem"): its kind does not keep it current. A tool's
    // output is a record, replaced by a later state of itself only (step 8, recordKey).
    const mayRetire = (u: MemoryUnit): boolean => !supersedes.some((x) => x.id === u.id) && !u.references.includes(eventId)
      && isCurrent(u) && u.level === 1 && u.speaker !== 'tool';

    // 8d: a speaker's own clear ending ("i quit grindhouse", "me and tess broke up", "sold the car";
    // its cue is an ending, so 8c below passes it by) ends what their earlier statements say of the thing
    // it names, whatever facet they were filed under or none: "grindhouse was a zoo today", "tess made me
    // dinner", "my car heater died" (updates.ts endsOwnThing).
    if (endsOwnThing(p.draft.text)) {
      const speaker = normalizeSubject(p.draft.speaker);
      const sharing = input.findSharingWords ? await input.findSharingWords(userId, endedClause(p.draft.text) ?? p.draft.text, opts.candidateK, 1) : [];
      for (const u of [...planned.map((q) => q.unit), ...similar.map((s) => s.unit), ...sharing]) {
        if (!mayRetire(u)) continue;
        // the speaker's own statements, not what they told of another ("he's (Marco) a physio" holds after
        // "Marco and I broke up")
        if (normalizeSubject(u.speaker) !== speaker || !endingNames(p.draft.text, withoutPrefix(u))) continue;
        const about = u.subject ?? aboutPronoun(withoutPrefix(u));
        if (about === null || about === speaker) supersedes.push(u);
      }
    }

    // 8c: updates of a topic (updates.ts updatesTopic), among the statements most like this one. Only a
    // statement that announces an update updates a topic (updatesTopic's first test, asked here once for
    // the statement rather than once per candidate): for the others neither the statements sharing its
    // words nor its candidates' owners are looked up.
    if (p.slot?.cue !== 'end' && !p.fact?.attribute.startsWith('record ') && changeCue(p.draft.text) === 'update') {
      // whose the statements are: a slot's subject, else the person a statement opens with ("Anjali moved
      // the wedding to March 14" is Anjali's, like "my sister Anjali just got engaged"), else the speaker's
      const next = { text: p.draft.text, owner: ownerOf(p.draft.speaker, p.slot?.subject ?? openedBy(p.draft.text)) };
      // beside the vector-nearest, the statements sharing its words: "I'm home Mondays and Wednesdays now,
      // nursery changed its pickup days" is far, as vectors go, from "WFH Tue/Thu from now on, nursery pickup"
      const sharing = input.findSharingWords ? await input.findSharingWords(userId, p.draft.text, opts.candidateK) : [];
      const lastOfSpeaker = planned.findLast((q) => q.unit.speaker === p.draft.speaker && !q.unit.references.includes(eventId))?.unit;
      const confirming = CONFIRMATION.test(p.draft.text) && normalizeSubject(p.draft.speaker) === 'assistant';
      for (const u of [...batchSimilar.map((s) => s.unit), ...similar.map((s) => s.unit), ...sharing]) {
        if (!mayRetire(u)) continue;
        // an assistant's "Noted: …" or "Updated …" confirms what the user just said: it replaces nothing the
        // user said in the same conversation hours ("Northfield raised flour to $36 a bag" / "Updated
        // Northfield Grain's bread flour price to $36.00/bag"); a value from before still retires
        if (confirming && normalizeSubject(u.speaker) !== 'assistant' && [p.validTime, p.draft.event.valid_time].some((t) => Math.abs(Date.parse(t) - Date.parse(u.valid_time)) < SAME_EXCHANGE_MS)) continue;
        // the same speaker's last turn before this one is the topic a bare value may continue ("We've
        // moved it to December 3" continues what its speaker said last, not the sabbatical three turns up)
        const follows = u.speaker === p.draft.speaker && lastOfSpeaker === u;
        if (updatesTopic(next, { text: withoutPrefix(u), owner: ownerOf(u.speaker, u.subject ?? openedBy(withoutPrefix(u))) }, { follows, names: knownNames })) supersedes.push(u);
      }
    }
    // 8e: a statement that names the value it replaces ("Devon's spot will be #9 not #12", "Mochi
    // (ex-Pickle)", "bye bye Phibsboro", "from $1,450 to $1,525": text/changes.ts replacedValues) retires
    // the earlier statements giving that value on the same topic: a content word or another number shared
    // beside the value ("… #12 for $40/mo" / "… #9 not #12. Same $40"), or, for a name, the same owner
    // ("I'm calling him Pickle"). A number or a month alone is too common to say which statement meant it
    // ("the boiler in unit 12"). The speaker said which value no longer holds; no facet need match.
    const named = p.fact?.attribute.startsWith('record ') ? [] : replacedValues(p.draft.text);
    if (named.length > 0) {
      const owner = ownerOf(p.draft.speaker, p.slot?.subject ?? openedBy(p.draft.text));
      const topic = objectStems(p.draft.text);
      const numbers = [...valueKeys(p.draft.text)].filter((v) => /\d/.test(v) && !named.includes(v));
      const sharing = input.findSharingWords ? await input.findSharingWords(userId, named.join(' '), opts.candidateK, 1) : [];
      for (const u of [...planned.map((q) => q.unit), ...similar.map((s) => s.unit), ...sharing]) {
        if (!mayRetire(u)) continue;
        const body = withoutPrefix(u);
        const given = valueKeys(body);
        const gives = named.filter((v) => given.has(v));
        if (gives.length === 0) continue;
        const sameTopic = [...objectStems(body)].some((w) => topic.has(w) && !named.includes(valueKey(w))) || numbers.some((v) => given.has(v));
        const ownName = gives.some((v) => !/\d/.test(v) && v.length > 3) && ownerOf(u.speaker, u.subject ?? openedBy(body)) === owner;
        if (sameTopic || ownName) supersedes.push(u);
      }
    }
    // 8f: a new holder of a role ("Marcus takes over as our manager", "the new landlord is Northgate
    // Lettings") ends what earlier statements said of another holder in it ("Helen is the most
    // process-heavy manager I've ever had"): a role has one holder at a time (roles.ts).
    const role = p.fact?.attribute.startsWith('record ') ? null : newRoleHolder(p.draft.text);
    if (role) {
      const sharing = input.findSharingWords ? await input.findSharingWords(userId, role.role, opts.candidateK, 1) : [];
      for (const u of [...planned.map((q) => q.unit), ...similar.map((s) => s.unit), ...sharing]) {
        if (mayRetire(u) && namesOtherHolder(withoutPrefix(u), role)) supersedes.push(u);
      }
    }
    // 9: duplicates, by similarity, among this batch's new units and existing current units.
    if (supersedes.length === 0) {
      const canMerge = (u: MemoryUnit): boolean => normalizeSubject(u.speaker) === speakerKey && u.memory_type === p.draft.memoryType
        && compatibleText(u.content, p.content) && !conflictingFact(u, p.fact, speakerKey)
        && wordOverlap(withoutPrefix(u), p.content.slice(p.draft.prefix.length)) >= opts.minWordOverlap;
      const dupBatch = batchSimilar.filter((s) => s.similarity >= opts.thresholds.duplicate && canMerge(s.unit))
        .sort((a, b) => b.similarity - a.similarity || a.j - b.j)[0];
      if (dupBatch) { mergeIntoPlanned(dupBatch.j, eventId); continue; }
      const dupExisting = similar.filter((s) => s.similarity >= opts.thresholds.duplicate && canMerge(s.unit))
        .sort((a, b) => b.similarity - a.similarity || cmp(a.unit.id, b.unit.id))[0];
      if (dupExisting) { reinforce(dupExisting.unit, eventId); continue; }
    }

    // A new unit.
    const e = p.draft.event;
    const unit: MemoryUnit = {
      id: input.newId(), user_id: userId, stream_id: e.stream_id, org_id: e.org_id, agent_id: e.agent_id, level: 1,
      memory_type: p.draft.memoryType, content: p.content, keywords: p.keywords, speaker: p.draft.speaker,
      valid_time: p.validTime, transaction_time: input.now, references: [eventId], assets: p.draft.assets,
      importance: p.importance, subject: p.fact?.subject ?? p.slot?.subject ?? null, attribute: p.fact?.attribute ?? p.slot?.facets[0] ?? null,
      retired_at: null, retired_reason: null, superseded_by: null,
    };
    planned.push({ unit, vector: vec, fact: p.fact });
    if (p.slot?.cue) plannedCue.set(unit.id, p.slot.cue);
    if (p.fact) byFactKey.set(`${p.fact.subject}|${p.fact.attribute}`, planned.length - 1);

    for (const old of supersedes) {
      if (planned.some((q) => q.unit === old)) {
        // Superseded within the batch: the unit is created already retired, so history keeps both versions.
        old.retired_at = input.now; old.retired_reason = 'superseded'; old.superseded_by = unit.id;
      } else {
        retired.set(old.id, { unit_id: old.id, retired_at: input.now, reason: 'superseded', superseded_by: unit.id });
      }
      plan.edges.push(edge(old.id, unit.id, 'EvolvedTo', 1));
    }

    // 10: RelatedTo auto-links to the most similar current units above the lower threshold.
    const skip = new Set(supersedes.map((u) => u.id));
    const links = [
      ...batchSimilar.filter((s) => s.unit.id !== unit.id).map((s) => ({ id: s.unit.id, similarity: s.similarity })),
      ...similar.map((s) => ({ id: s.unit.id, similarity: s.similarity })),
    ].filter((l) => l.similarity >= opts.thresholds.related && !skip.has(l.id))
      .sort((a, b) => b.similarity - a.similarity || cmp(a.id, b.id));
    const seen = new Set<string>();
    for (const l of links) {
      if (seen.size >= opts.maxLinks) break;
      if (seen.has(l.id)) continue;
      seen.add(l.id);
      plan.edges.push(edge(unit.id, l.id, 'RelatedTo', round4(Math.min(1, l.similarity))));
    }
  }

  plan.units = planned.map((q): NewUnit => ({ unit: q.unit, vector: Array.from(q.vector) }));
  plan.reinforced = [...reinforced.entries()].map(([unit_id, r]): Reinforcement => ({
    unit_id, add_references: r.refs, importance: reinforceImportance(r.base, r.count),
  }));
  plan.retired = [...retired.values()];
  assertPlanCoversEvents(input.events, plan);
  return plan;
}

/**
 * A record's state after a later output of it: the old entries in their order, each taking the new
 * value where the output gives the field, then the fields only the output has. An output that holds
 * every field is the new state as it is.
 */
export function mergeRecordText(old: string, next: string): string {
  const given = recordEntries(next);
  const byField = new Map(given);
  // a list given anew is the whole list: "admins[0]: b" after "admins[0]: a; admins[1]: b" leaves one admin
  const listsGiven = new Set(given.map(([field]) => listOf(field)).filter((l): l is string => l !== null));
  const out: string[] = [];
  const used = new Set<string>();
  for (const [field, value] of recordEntries(old)) {
    if (field.startsWith('…')) continue; // the "… (n more)" mark of a cut document
    const list = listOf(field);
    if (list !== null && listsGiven.has(list)) continue;
    out.push(value === null ? field : `${field}: ${byField.get(field) ?? value}`);
    used.add(field);
  }
  for (const [field, value] of given) if (!used.has(field)) out.push(value === null ? field : `${field}: ${value}`);
  return out.join('; ');
}

/** An assistant's confirmation of what it was told or did: "Noted: …", "Updated …", "Logged …", "Got it, …". */
const CONFIRMATION = /^(?:assistant:\s*)?(?:noted|updated|logged|recorded|saved|got it|done|added|changed|all set|confirmed|i've (?:noted|updated|logged|recorded|saved|added|changed))\b/i;
/** How far apart a confirmation and what it confirms may be: one exchange. */
const SAME_EXCHANGE_MS = 6 * 3_600_000;

/** The list a flattened field is an item of ("admins" for "admins[1]", "items" for "items[0].sku"), else null. */
function listOf(field: string): string | null {
  return /^([^[\]]+)\[\d+\]/.exec(field)?.[1] ?? null;
}

/** Whose statement it is: the subject when consolidation found one, else the speaker (an assistant speaks of the user). */
function ownerOf(speaker: string | null, subject: string | null | undefined): string {
  // an assistant's "your plan" is the user's, whether the role came as the speaker or as a slot's subject
  const s = subject || normalizeSubject(speaker);
  return s === 'assistant' || s === 'tool' || s === 'system' ? 'user' : s;
}

/** A unit's content without its "Speaker: " attribution. */
function withoutPrefix(u: MemoryUnit): string {
  return u.speaker && u.content.startsWith(`${u.speaker}: `) ? u.content.slice(u.speaker.length + 2) : u.content;
}

/** The value an existing unit states for `fact`'s subject/attribute, re-read from its content. */
export function existingValue(u: MemoryUnit, fact: SubjectAttribute): string | null {
  const body = withoutPrefix(u);
  const found = extractSubjectAttribute(body, fact.subject);
  return found && found.attribute === fact.attribute ? found.value : null;
}

/** A unit that states another value for the same subject+attribute is a correction candidate, never a duplicate. */
function conflictingFact(u: MemoryUnit, fact: SubjectAttribute | null, speakerKey: string): boolean {
  if (!u.subject || !u.attribute) return false;
  if (!fact) return false;
  if (u.subject !== fact.subject || u.attribute !== fact.attribute) return false;
  const value = existingValue(u, fact);
  return value !== null && value !== fact.value && speakerKey !== '';
}

/** "order.items[0].name: pen" → "order items name: pen": key segments become words for keyword extraction. */
function jsonKeywordText(text: string): string {
  return text.replace(/\[\d+\]/g, '').replace(/(\p{L})[._](?=\p{L})/gu, '$1 ');
}

function sortById(units: MemoryUnit[]): MemoryUnit[] {
  return [...units].sort((a, b) => cmp(a.id, b.id));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function dedupeLower(xs: string[]): string[] {
  return [...new Set(xs.map((x) => x.toLowerCase().trim()).filter((x) => x !== ''))];
}
