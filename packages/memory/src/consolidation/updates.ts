/**
 * Updates said in passing: "I switched to decaf", "sold the bike, I take the train now", "Settled in
 * Vienna now", "I quit the cafe last week". No "my X is Y" pattern (subject.ts) reads these, yet each
 * gives a new value of a fact its speaker (or a person it names) holds one value of at a time.
 *
 * A statement is read as a slot: who it is about (the subject), which single-valued facets it speaks of
 * (text/facets.ts: residence, work, diet, drink, commute, schedule, …), and a change cue:
 *  - `update`: a new value holds from now on ("now", "these days", "switched", "moved", "new",
 *    "instead", "started"): every current statement of the subject on that facet is retired;
 *  - `end`: an old value stopped ("quit", "sold", "left", "no longer", "broke up"): only the current
 *    statements that name what ended are retired (they share a content word with the statement).
 * Without a cue nothing is retired: "I love my job at the cafe" adds to "I work at the cafe".
 */
import { facetGroup, facetsInOrder, specificValues, STATE_FACETS, STOPWORDS, stemPlural, withoutSpeakerPrefix, words, type Facet } from '../text';
import { openingName } from './discourse';
import { changeCue, type ChangeCue } from '../text';

export { changeCue, type ChangeCue };

export interface Slot {
  /** normalized subject: the speaker's (`user` for the owner) or the named person's lowercased name */
  subject: string;
  /** single-valued facets the statement speaks of, first mentioned first */
  facets: Facet[];
  cue: ChangeCue | null;
}


/**
 * Plans, wishes and reports of a task state no value a person holds ("First I need to find an
 * apartment", "Task 'Find an apartment' completed: …"): they are not slots, so a new address never
 * retires the plan that led to it.
 */
const INTENT = /\b(?:need to|needs to|want to|wants to|wanna|my goal|goal is|plan(?:ning)? to|going to|gonna|hope to|hoping to|looking for|trying to|would like|thinking (?:of|about)|might|maybe)\b|^Task '/i;

/** "She (Miso) lives …": the name consolidation wrote beside a pronoun (discourse.ts). */
const RESOLVED_PRONOUN = /^(?:she|he)(?:'s|'d|'ll)? \((\p{Lu}[\p{L}'-]*)\)/iu;

/**
 * The slot of a statement, or null when it speaks of no single-valued facet. `speakerSubject` is the
 * normalized speaker (speaker.ts normalizeSubject); `names` are the names the conversation uses.
 */
export function slotOf(text: string, speakerSubject: string, names: ReadonlySet<string>): Slot | null {
  if (INTENT.test(text)) return null;
  const facets = facetsInOrder(text).filter((f) => STATE_FACETS.has(f));
  if (facets.length === 0) return null;
  const named = RESOLVED_PRONOUN.exec(text)?.[1] ?? openingName(text, names);
  const subject = named && named.toLowerCase() !== speakerSubject ? named.toLowerCase() : speakerSubject;
  return { subject, facets, cue: changeCue(text) };
}

/** Every attribute a slot's update may retire (a new job replaces the old occupation and employer). */
export function slotAttributes(slot: Slot): string[] {
  return [...new Set(slot.facets.flatMap(facetGroup))];
}

const CUE_WORDS = new Set(['quit', 'quitting', 'resigned', 'retired', 'sold', 'selling', 'left', 'leaving', 'longer', 'anymore', 'stopped',
  'dropped', 'gave', 'giving', 'broke', 'split', 'finished', 'handed', 'laid', 'cancelled', 'canceled', 'moved', 'lost', 'ended', 'last',
  'week', 'month', 'year', 'today', 'yesterday', 'ago', 'finally', 'just', 'really', 'officially']);

/** Content words of a statement (stems), without stopwords, cue words and the speaker prefix. */
function objectStems(text: string): Set<string> {
  const body = withoutSpeakerPrefix(text);
  return new Set(words(body.toLowerCase()).filter((w) => w.length > 2 && !STOPWORDS.has(w) && !CUE_WORDS.has(w) && !/^\d/.test(w)).map(stemPlural));
}

/** Does an ending ("I quit the cafe") name what `old` states ("Long shift at the cafe")? */
export function endingNames(ending: string, old: string): boolean {
  const a = objectStems(ending);
  for (const w of objectStems(old)) if (a.has(w)) return true;
  return false;
}

/** Cues that a plan or date moved: one shared word ("the defense got pushed to August") is enough. */
const RESCHEDULE = /\b(?:pushed|moved|rescheduled|postponed|brought forward|delayed|bumped|shifted|now on|now at|changed to)\b/i;
const FIRST_PERSON = /\b(?:i|i'm|i've|i'll|i'd|me|my|we|we're|our|us)\b/i;

/** Shared content stems of two statements (speaker prefixes, cue words and stopwords aside). */
export function sharedStems(a: string, b: string): number {
  const x = objectStems(a);
  let n = 0;
  for (const w of objectStems(b)) if (x.has(w)) n++;
  return n;
}

/** Amounts with their unit ("500 mg", "£32", "20 minutes", "6:40 per km"), as the unit words. */
const MEASURE = /(?:[£$€]\s?\d[\d.,]*|\d[\d.,:]*\s?(?:%|mg|g|kg|km|mi|miles?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|per (?:km|mile|month|week|day)|a (?:month|week|day|year)|AED|EUR|GBP|USD|euros?|pounds?|dollars?))/giu;

function measureUnits(text: string): Set<string> {
  return new Set([...text.matchAll(MEASURE)].map((m) => m[0].replace(/[\d.,:\s]+/g, ' ').trim().toLowerCase()));
}

/** Two statements giving an amount in the same unit ("metformin 500 mg" / "metformin, 1000 mg"): one measure, two values. */
function sameMeasure(a: string, b: string): boolean {
  const x = measureUnits(a);
  for (const u of measureUnits(b)) if (x.has(u)) return true;
  return false;
}

/**
 * An update said of a topic rather than a facet ("deadline moved. Atlas now has to be done by April
 * 30" after "Atlas migration deadline is March 31"; "new wifi password: thistle-kettle-88"): the new
 * statement announces a change, shares two content words with the old one (or one, and says that a
 * date or plan moved, or both give an amount in the same unit: "switched me to metformin, 1000 mg"
 * after "metformin 500 mg"), and both give a specific value (a number, a date, a name) that differs. Without
 * values two statements on one topic are a story ("I started a new painting" after "I love painting"),
 * not a replacement. Personal statements ("I", "my") must be the same person's; statements about a
 * thing (a deadline, a password, a booking) may be told by anyone in the chat.
 */
export function updatesTopic(next: { text: string; owner: string }, old: { text: string; owner: string }): boolean {
  if (changeCue(next.text) !== 'update') return false;
  const personal = FIRST_PERSON.test(next.text) || FIRST_PERSON.test(old.text);
  if (personal && next.owner !== old.owner) return false;
  const shared = sharedStems(next.text, old.text);
  if (!(shared >= 2 || (shared >= 1 && (RESCHEDULE.test(next.text) || sameMeasure(next.text, old.text))))) return false;
  const was = specificValues(old.text);
  const now = specificValues(next.text);
  if (was.size === 0 || now.size === 0) return false;
  for (const v of now) if (!was.has(v)) return true;
  return false;
}

/** Keys that name the record a JSON document is (a booking, an order, a policy), in document order. */
const RECORD_KEY = /^(?:id|uuid|[a-z_]*_(?:id|number|no|ref|reference)|booking|pnr|order|account|policy|ticket|claim|reservation|confirmation|case|subscription|invoice|exchange|shipment|tracking|contract|appointment)$/i;

/**
 * The record a tool's JSON output is about ("booking ZX81K", "order 40-77182"): a later output of the
 * same record is its current state, so it replaces the earlier one. Null for other documents.
 */
export function recordKey(json: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (!RECORD_KEY.test(k)) continue;
    if ((typeof v === 'string' && v.trim() !== '' && v.length <= 128) || (typeof v === 'number' && Number.isFinite(v))) return `record ${k.toLowerCase()} ${String(v).trim().toLowerCase()}`;
  }
  return null;
}
