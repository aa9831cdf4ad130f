/**
 * Step 13 (optional): the front half of consolidation done by an LLM. It is asked for JSON facts
 * (atomic statements, memory type, keywords, subject/attribute/value) and noise verdicts per event; the
 * answer is validated strictly and mapped to the same drafts the offline path makes, so everything after
 * (dates, corrections, duplicates, links, importance, provenance) is the same code. A transport error, a
 * non-JSON or malformed reply → null, and the caller runs the offline algorithm for the whole batch.
 * Events the reply leaves out are drafted offline, so none is lost.
 */
import type { EventRecord, MemoryType } from '@strata/store';
import type { ChatMessage, Llm } from '../providers/types';
import { draftEvent, orderEvents, participantNames, type DraftResult, type StatementDraft } from './drafts';
import { eventText, type TextOptions } from './text';
import { resolveSpeaker } from './speaker';
import { SINGLE_VALUED_FACETS } from '../text';

/** Beyond this many characters of event text the batch is consolidated offline (a prompt must stay bounded). */
export const MAX_LLM_BATCH_CHARS = 24_000;

/**
 * Attribute names the model is asked to use: the single-valued facets of the offline path (text/facets.ts),
 * so a fact drafted by the model and one drafted offline, or by two batches, meet under one name and the
 * later retires the earlier (consolidation/plan.ts).
 */
const LLM_ATTRIBUTES = [...SINGLE_VALUED_FACETS, 'birthday'];

export const EXTRACTION_SYSTEM_PROMPT = [
  'You turn conversation events into long-term memory. Reply with one JSON object and nothing else:',
  '{"facts":[{"event":<event number>,"statement":"<one atomic statement>","memory_type":"factual"|"procedural",',
  '"keywords":["<keyword>",...],"subject":<string|null>,"attribute":<string|null>,"value":<string|null>}],',
  '"noise":[{"event":<event number>,"reason":"<why it holds nothing to remember>"}]}',
  'Rules: every event appears in facts or in noise. A statement keeps the speaker\'s own words and person ("I ...")',
  'without the speaker\'s name in front, and keeps relative dates as said ("yesterday"). Greetings, thanks and',
  'acknowledgements are noise. procedural = how-to steps or what an agent/assistant/tool did; otherwise factual.',
  'subject/attribute/value only for a fact someone holds one value of at a time, which a later value replaces',
  '(subject "user" for the user, else the person\'s first name in lowercase; value short, e.g. "denver"); otherwise null.',
  `Use these attribute names where they fit, the same name for the same kind of fact every time: ${LLM_ATTRIBUTES.join(', ')};`,
  'else a short lowercase name of your own (e.g. "medication", "landlord", "wifi password").',
  'Do not invent anything that the events do not say.',
].join('\n');

export function buildExtractionMessages(events: EventRecord[], textOptions?: TextOptions): ChatMessage[] {
  const lines = events.map((e, i) => {
    const t = eventText(e, textOptions);
    const who = resolveSpeaker(e, t.text);
    return `[${i}] (speaker: ${who.speaker ?? 'unknown'}, type: ${e.content_type}, time: ${e.valid_time}) ${who.text}`;
  });
  return [
    { role: 'system', content: EXTRACTION_SYSTEM_PROMPT },
    { role: 'user', content: `Events:\n${lines.join('\n')}` },
  ];
}

interface LlmFact {
  event: number;
  statement: string;
  memory_type: MemoryType;
  keywords: string[];
  subject: string | null;
  attribute: string | null;
  value: string | null;
}

interface LlmReply {
  facts: LlmFact[];
  noise: { event: number; reason: string }[];
}

/** Strict validation of the reply; null for anything malformed. Code fences around the JSON are tolerated. */
export function parseExtractionReply(reply: string, eventCount: number): LlmReply | null {
  const body = reply.trim().replace(/^```(?:json)?\s*/i, '').replace(/\s*```$/, '');
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return null;
  }
  if (!isObject(doc)) return null;
  const facts = doc.facts ?? [];
  const noise = doc.noise ?? [];
  if (!Array.isArray(facts) || !Array.isArray(noise)) return null;
  const okEvent = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0 && (n as number) < eventCount;
  const optString = (v: unknown): v is string | null | undefined => v === null || v === undefined || (typeof v === 'string' && v.length <= 200);
  const out: LlmReply = { facts: [], noise: [] };
  for (const f of facts) {
    if (!isObject(f) || !okEvent(f.event)) return null;
    if (typeof f.statement !== 'string' || f.statement.trim() === '' || f.statement.length > 2000) return null;
    if (f.memory_type !== 'factual' && f.memory_type !== 'procedural') return null;
    const kw = f.keywords ?? [];
    if (!Array.isArray(kw) || !kw.every((k) => typeof k === 'string' && k.length <= 100)) return null;
    if (!optString(f.subject) || !optString(f.attribute) || !optString(f.value)) return null;
    out.facts.push({
      event: f.event, statement: f.statement.trim(), memory_type: f.memory_type, keywords: (kw as string[]).slice(0, 20),
      subject: f.subject ?? null, attribute: f.attribute ?? null, value: f.value ?? null,
    });
  }
  for (const n of noise) {
    if (!isObject(n) || !okEvent(n.event)) return null;
    out.noise.push({ event: n.event, reason: typeof n.reason === 'string' && n.reason.trim() !== '' ? n.reason.trim().slice(0, 200) : 'no information' });
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Drafts from the LLM, or null when the offline algorithm must take the batch. */
export async function llmDrafts(llm: Llm, events: EventRecord[], textOptions?: TextOptions): Promise<DraftResult | null> {
  const ordered = orderEvents(events);
  const size = ordered.reduce((s, e) => s + e.content.length, 0);
  if (size > MAX_LLM_BATCH_CHARS) return null;
  let reply: string;
  try {
    reply = await llm.complete(buildExtractionMessages(ordered, textOptions), { json: true, temperature: 0 });
  } catch {
    return null;
  }
  const parsed = parseExtractionReply(reply, ordered.length);
  if (!parsed) return null;
  const names = participantNames(ordered);
  const out: DraftResult = { drafts: [], dropped: [] };
  ordered.forEach((e, i) => {
    const facts = parsed.facts.filter((f) => f.event === i);
    if (facts.length === 0) {
      const n = parsed.noise.find((x) => x.event === i);
      if (n) out.dropped.push({ event_id: e.event_id, reason: `noise (llm): ${n.reason}` });
      else {
        const r = draftEvent(e, names, textOptions); // left out by the model: the offline path takes it
        out.drafts.push(...r.drafts);
        out.dropped.push(...r.dropped);
      }
      return;
    }
    const t = eventText(e, textOptions);
    const who = resolveSpeaker(e, t.text);
    for (const f of facts) {
      let statement = f.statement;
      if (who.speaker && statement.toLowerCase().startsWith(`${who.speaker.toLowerCase()}: `)) statement = statement.slice(who.speaker.length + 2);
      const draft: StatementDraft = {
        event: e, text: statement, speaker: who.speaker, prefix: who.prefix, memoryType: f.memory_type, assets: t.assets,
        keywords: f.keywords,
        fact: f.subject && f.attribute && f.value ? { subject: f.subject, attribute: f.attribute, value: f.value } : null,
      };
      out.drafts.push(draft);
    }
  });
  return out;
}
