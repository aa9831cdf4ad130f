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
import { capitalizedWords, memoByText, withoutIdioms, endedClause, facetGroup, facetsInOrder, facetWords, specificValues, STATE_FACETS, STOPWORDS, stemPlural, valueStem, withoutSpeakerPrefix, words, type Facet } from '../text';
import { lowerSentenceOpeners, openingName, pointsBack, withoutQuestion } from './discourse';
import { changeCue, type ChangeCue } from '../text';
import { splitSentences } from './split';

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

/** A statement opening with a third person's pronoun that discourse.ts could not name. */
const UNRESOLVED_PERSON = /^(?:she|he|they)(?:'s|'d|'ll|'re)?\b(?! \()/i;

/** "She (Miso) lives …": the name consolidation wrote beside a pronoun (discourse.ts). */
const RESOLVED_PRONOUN = /^(?:she|he)(?:'s|'d|'ll)? \((\p{Lu}[\p{L}'-]*)\)/iu;

/** The person a statement's opening "she"/"he" was resolved to ("he's (Marco) a physio" → "marco"), else null. */
export function aboutPronoun(text: string): string | null {
  return RESOLVED_PRONOUN.exec(text)?.[1]?.toLowerCase() ?? null;
}

/**
 * The slot of a statement, or null when it speaks of no single-valued facet. `speakerSubject` is the
 * normalized speaker (speaker.ts normalizeSubject); `names` are the names the conversation uses.
 */
export function slotOf(text: string, speakerSubject: string, names: ReadonlySet<string>): Slot | null {
  if (INTENT.test(text)) return null;
  // "he took a job in Valencia" with no one to point to is someone else's state, never the speaker's
  if (UNRESOLVED_PERSON.test(text)) return null;
  // "also amara is moving to leeds 😭 her mum got a job at the hospital there": the job is her mum's
  const facets = facetsInOrder(text).filter((f) => STATE_FACETS.has(f) && !othersClause(text, f));
  if (facets.length === 0) return null;
  const named = RESOLVED_PRONOUN.exec(text)?.[1] ?? openingName(text, names) ?? clauseSubject(text, facets[0], names);
  const subject = named && named.toLowerCase() !== speakerSubject ? named.toLowerCase() : speakerSubject;
  // "And, um, we moved in." moved into the place already named ("made an offer on the townhouse on Saguaro
  // Lane"): it confirms that home, it replaces none
  const movedIn = facets.length === 1 && facets[0] === 'residence' && /\bmov(?:e|ed|es|ing) in\b(?!\s+(?:to|with)\b)/i.test(text) && specificValues(text).size === 0;
  return { subject, facets, cue: movedIn ? null : changeCue(text) };
}

/**
 * The person a later clause is about, when the statement opens with something else: "Actually speaking of
 * flatmates, Josie is moving out end of February" is Josie's move, not the speaker's. The clause that
 * speaks of `facet` must open with a name the conversation uses; null otherwise.
 */
function clauseSubject(text: string, facet: Facet, names: ReadonlySet<string>): string | null {
  const clauses = withoutSpeakerPrefix(text).split(/[,;:.!?]+\s+|\s[-–—]\s/);
  const first = clauses.findIndex((c) => facetsInOrder(c).includes(facet));
  return first > 0 ? openingName(clauses[first].trim(), names) : null;
}

/** A clause opened by an unresolved "she"/"he"/"they" or by "his/her/their …" speaks of someone else. */
const OTHERS_CLAUSE = /^(?:(?:and|also|so|but|plus|oh)\s+)?(?:(?:she|he|they)(?:'s|'d|'ll|'re)?\b(?! \()|(?:his|her|their)\s+\p{L}+)/iu;

/** Is the first clause that speaks of `facet` another person's ("her mum got a job")? Emoji end a clause too. */
function othersClause(text: string, facet: Facet): boolean {
  const clauses = withoutSpeakerPrefix(text).split(/[,;:.!?]+\s+|\s[-–—]\s|\s*\p{Extended_Pictographic}+\s*/u);
  const clause = clauses.find((c) => facetsInOrder(c).includes(facet));
  return clause !== undefined && OTHERS_CLAUSE.test(clause.trim());
}

/** Facets whose trigger word is the value: the way someone gets around, what they eat, what they drink. */
const VALUE_FACETS: ReadonlySet<Facet> = new Set<Facet>(['commute', 'diet', 'drink']);

/**
 * Does an update on `facet` give the value `old` already states? "Got a new bike, it lives in the shed"
 * is still the bike of "my bike got nicked" and "Gary put up a bike shed": no value changed, nothing
 * retires. Only for facets whose words are their values (a bike, vegan, decaf).
 */
export function restatesValue(next: string, old: string, facet: string): boolean {
  if (!VALUE_FACETS.has(facet as Facet)) return false;
  const before = facetWords(old, facet as Facet);
  if (before.size === 0) return false;
  const now = facetWords(next, facet as Facet);
  for (const w of before) if (!now.has(w)) return false;
  return true;
}

/**
 * The facets a statement that tells several changes gives new values of. "Moved cities, changed jobs
 * twice, adopted Mochi, passed Grade 3. Not bad." looks back over a year: each clause announces a change
 * and none says to what, so no address or job it names is the one that holds now, and retiring every
 * current one on those facets (as one update does: "We've moved. Edinburgh!") took the flat in Leith
 * with it. When two or more clauses announce changes, a facet is updated only by a clause that gives a
 * value (a name, a number, a date: "moved to Leeds, started at St James's"). Null: one change or none,
 * the statement's facets stand as they are.
 */
export function valuedFacets(text: string): Set<Facet> | null {
  const clauses = withoutSpeakerPrefix(text).split(/[,;.!?]+|\s(?:and|but|then)\s/).map((c) => c.trim()).filter((c) => c !== '');
  const changing = clauses.filter((c) => changeCue(c) !== null);
  if (changing.length < 2) return null;
  const out = new Set<Facet>();
  for (const c of changing) {
    const facets = facetsInOrder(c).filter((f) => STATE_FACETS.has(f));
    if (facets.length === 0) continue;
    const valued = specificValues(c).size > 0 || facets.some((f) => VALUE_FACETS.has(f) && facetWords(c, f).size > 0);
    if (valued) for (const f of facets) out.add(f);
  }
  return out;
}

/** Every attribute a slot's update may retire (a new job replaces the old occupation and employer). */
export function slotAttributes(slot: Slot): string[] {
  return [...new Set(slot.facets.flatMap(facetGroup))];
}

// The words that announce a change say nothing of what changed: two statements that both say "new" or
// "changed" ("New year, new plan. I'm Hana" / "because of my new job") are not about one thing. Nor do
// the words of a time or a frequency ("once a day" / "twice a day": a dose, a watering).
const CUE_WORDS = new Set(['quit', 'quitting', 'resigned', 'retired', 'sold', 'selling', 'left', 'leaving', 'longer', 'anymore', 'stopped',
  'dropped', 'gave', 'giving', 'broke', 'split', 'finished', 'handed', 'laid', 'cancelled', 'canceled', 'moved', 'lost', 'ended', 'last',
  'day', 'days', 'week', 'month', 'year', 'today', 'yesterday', 'ago', 'finally', 'just', 'really', 'officially', 'once', 'twice', 'times',
  'new', 'now', 'changed', 'change', 'changes', 'changing', 'switched', 'switch', 'switching', 'updated', 'update', 'instead', 'started',
  'starting', 'pushed', 'rescheduled', 'postponed', 'delayed', 'bumped', 'shifted', 'replaced', 'same', 'still',
  // the parts of a day or a week locate a statement, they are not its topic ("3200 to Dorsey (asked:
  // anything else from this morning?)" / "she's been running mornings anyway, bumping her to 19/hr")
  'morning', 'mornings', 'afternoon', 'afternoons', 'evening', 'evenings', 'night', 'nights', 'tonight', 'tomorrow',
  'weeks', 'months', 'years', 'weekend', 'weekends', 'less',
  // so do the days money moves ("£100 going in each payday" is no topic of "bump the ISA to £550 from April payday")
  'payday', 'paydays',
  // a letter's greeting and an announcement's word say nothing of what is announced ("Dear Mr Ashworth,
  // she is a seven-year-old cat" / "Dear Mr Ashworth, Clive fitted a new catch"; "news from me")
  'dear', 'news',
  // counts and places in a series say how many or which, not of what ("first two months at M Shed done" and
  // "the quiz is on the first monday of the month now" share no thing)
  'first', 'second', 'third', 'fourth', 'fifth', 'next', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten',
  'eleven', 'twelve', 'couple', 'few', 'several']);

/**
 * A transcript's or an export's tag before what was said ("Nadia: [voice note 2:20] and um, I got a job
 * …") is no part of it: "voice" and "note" are no topic, "2:20" no time of anything.
 */
function withoutTag(text: string): string {
  return text.replace(/^((?:[^\s:[\]]+(?: [^\s:[\]]+){0,2}): )?\[[^\]]{1,40}\]\s*/u, '$1');
}

/**
 * Content words of a statement (stems), without stopwords, cue words, the speaker prefix and the words of
 * a date (months, weekdays: values, like numbers, not what a value is of): what `updatesTopic` counts as
 * shared. "The baby is due August 20" and "Carl is moving out end of August" share no topic.
 */
export const objectStems: (text: string) => ReadonlySet<string> = memoByText(objectStemsOf);

function objectStemsOf(text: string): ReadonlySet<string> {
  const body = withoutIdioms(withoutSpeakerPrefix(withoutTag(text)));
  const out = new Set(words(body.toLowerCase()).filter((w) => w.length > 2 && !STOPWORDS.has(w) && !CUE_WORDS.has(w) && !/^\d/.test(w) && !MONTH.test(w) && !WEEKDAY.test(w)).map(stemPlural));
  // a short thing written in capitals is a thing too: "PT moved his days", "the HR form", "my GP"
  for (const m of body.matchAll(/\b[A-Z]{2}\b/g)) if (!SHORT_CAPS_WORDS.has(m[0])) out.add(m[0].toLowerCase());
  return out;
}

/** Two-letter words written in capitals that are words, not things: "OK", "US" (us), "AM". */
const SHORT_CAPS_WORDS = new Set(['OK', 'US', 'HI', 'NO', 'SO', 'OH', 'MY', 'IT', 'IS', 'IN', 'ON', 'AT', 'TO', 'DO', 'GO', 'BE', 'ME', 'WE', 'HE', 'UP', 'OF', 'OR', 'AN', 'AS', 'BY', 'IF', 'AM', 'PM']);

/**
 * Does an ending ("I quit the cafe") name what `old` states ("Long shift at the cafe")? Only the clause
 * that says what ended is read: "sold my bike too, I take the train to the office now" ends the bike
 * (and so "I cycle to work": one value, two words), not "their office is in Cardiff".
 */
export function endingNames(ending: string, old: string): boolean {
  // "handed in my notice at Brightline" ended Brightline, not what was said of a notice period
  const clause = (endedClause(ending) ?? ending).replace(/\b(?:handed in|gave|giving|put in) (?:my|his|her|their) notice\b/gi, ' ');
  const a = new Set([...objectStems(clause)].map(valueStem));
  for (const w of objectStems(old)) if (a.has(valueStem(w))) return true;
  return false;
}

/** Endings that leave no doubt of what stopped (not "left", "stopped", "finished": "left my keys at Sam's"). */
const CLEAR_END = /\b(?:quit|quitting|resigned|broke up|split up|divorced|sold|moved out|laid off|no longer|not (?:\w+ )?any ?more|gave up|giving up|handed in (?:my|his|her|their) notice)\b/i;

/**
 * Does a statement end something of the speaker's own ("i quit grindhouse", "me and tess broke up",
 * "sold the car today")? Then earlier statements of the same speaker naming the ended thing are no
 * longer current, whatever facet they were filed under, or none ("grindhouse was a zoo today").
 */
export function endsOwnThing(text: string): boolean {
  const body = withoutSpeakerPrefix(text);
  // a plan is no ending yet ("i'm gonna quit the library job after finals")
  const end = CLEAR_END.exec(body);
  if (!end || /\?\s*$/.test(body) || INTENT.test(body)) return false;
  // "we have 3 healers and 0 tanks since Marco quit": another's ending, whoever else the sentence names
  const before = body.slice(0, end.index).trim().split(/\s+/).pop() ?? '';
  if (/^(?:he|she|they|\p{Lu}\p{Ll}+)$/u.test(before) && !/^(?:I|We|Just|Finally|Also|And|So|Then|Today|Yesterday)$/.test(before)) return false;
  return FIRST_PERSON.test(body) || /^(?:just |finally )?(?:quit|sold|resigned|gave up|handed in)\b/i.test(body);
}

/** A change that says part of the old value holds: "same date", "same time", "still at 8". */
const KEEPS_PART = /\bsame (?:date|day|time|place|venue|address|price|room|hotel|flight)\b/i;

const FIRST_PERSON = /\b(?:i|i'm|i've|i'll|i'd|me|my|we|we're|our|us)\b/i;

/** The stems of the words a statement writes as names (capitalized past its first word); kept per text, read only. */
const capitalStems: (text: string) => ReadonlySet<string> = memoByText((t) => new Set(capitalizedWords(withoutSpeakerPrefix(t)).map((w) => stemPlural(w.toLowerCase()))));

/** Shared content stems that both statements write as a name (capitalized past their first word). */
function sharedNames(a: string, b: string, known: ReadonlySet<string> = new Set()): Set<string> {
  const names = capitalStems;
  const x = names(a);
  const y = names(b);
  const stemsA = objectStems(a);
  const stemsB = objectStems(b);
  const out = new Set<string>();
  // a name the conversation knows counts wherever it stands, a sentence's first word too ("Bev found her
  // when she came in at 2" / "Bev's coming every day now, 9 till 1": Bev is no topic of both)
  const capitalIn = (t: string, w: string) => new RegExp(`(?:^|[^\\p{L}])${w.charAt(0).toUpperCase()}${w.slice(1)}`, 'u').test(withoutSpeakerPrefix(t));
  for (const w of stemsB) {
    if (!stemsA.has(w)) continue;
    if ((x.has(w) && y.has(w)) || (known.has(w) && capitalIn(a, w) && capitalIn(b, w))) out.add(w);
  }
  return out;
}

/** The statements' owners named in both (`a`, `b`: their object stems). */
function sharedOwners(next: { owner: string }, old: { owner: string }, a: ReadonlySet<string>, b: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const owner of new Set([next.owner, old.owner])) {
    const o = stemPlural(owner.toLowerCase());
    if (a.has(o) && b.has(o)) out.add(o);
  }
  return out;
}

/** Plural words after a number that are units or times (MEASURE reads them), not things counted. */
const COUNT_NOT_THING = /^(?:minutes|mins|hours|hrs|days|weeks|months|years|miles|times|pounds|dollars|euros|percent|points|degrees|kms|mgs)$/;

/** Amounts with their unit ("500 mg", "£32", "20 minutes", "6:40 per km"); `typedValues` groups them by unit. */
const MEASURE = /(?:[£$€]\s?\d[\d.,]*|\d[\d.,:]*\s?(?:[a-z]+\s?)?\/\s?(?:min|minute|sec|second|s|hr|hour|h|day|wk|week|mo|month|yr|year|night|session|episode|ep|person|head)\b|\d[\d.,:]*\s?(?:%|mg|g|kg|km|mi|miles?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|per (?:km|mile|month|week|day)|a (?:month|week|day|year)|AED|EUR|GBP|USD|euros?|pounds?|dollars?))/giu;

/**
 * An update said of a topic rather than a facet ("deadline moved. Atlas now has to be done by April
 * 30" after "Atlas migration deadline is March 31"; "new wifi password: thistle-kettle-88"): the new
 * statement announces a change, shares a content word with the old one that is neither a person nor a
 * date word (the question a short reply carries counts: "118 degrees (asked: How far does the knee
 * bend?)"), and both give a specific value of one kind (a number, a date, a name) that differs. Without
 * values two statements on one topic are a story ("I started a new painting" after "I love painting"),
 * not a replacement. Personal statements ("I", "my") must be the same person's; statements about a
 * thing (a deadline, a password, a booking) may be told by anyone in the chat.
 */
export function updatesTopic(next: { text: string; owner: string }, old: { text: string; owner: string }, opts: { follows?: boolean; names?: ReadonlySet<string> } = {}): boolean {
  if (changeCue(next.text) !== 'update') return false;
  // "The wedding is at Ashton Court now, same date": part of the old statement still holds (its date);
  // it stays, and retrieval orders the two as versions (fusion.ts findVersions)
  if (KEEPS_PART.test(next.text)) return false;
  // a statement of many facts (minutes, a list of results, a long email) is not replaced by a change of
  // one of them: retrieval orders the two as versions ("Laying-up moves to Saturday 25 October" and an
  // AGM's outcomes that also give the new membership fees)
  if (manyFacts(old.text)) return false;
  const personal = FIRST_PERSON.test(next.text) || FIRST_PERSON.test(old.text);
  if (personal && next.owner !== old.owner) return false;
  const stemsNext = objectStems(next.text);
  const stemsOld = objectStems(old.text);
  let shared = 0;
  for (const w of stemsOld) if (stemsNext.has(w)) shared++;
  // One shared word is enough when it is the thing that changed ("the defense got pushed to August",
  // "the bend is up to 130 now" after "118 degrees (asked: How far does the knee bend?)"): the cue says
  // it changed, and the value check below says to what. A shared person is no such thing ("now on July
  // 3, for both you and Adam" / "my son Adam, he's 9"), and neither is the owner's own name, wherever it
  // stands ("Maya moved to Quito" moved no plan of "Maya's cat is called Miso").
  const people = new Set([...sharedNames(next.text, old.text, opts.names), ...sharedOwners(next, old, stemsNext, stemsOld)]);
  const thing = shared - people.size;
  // "January 28 now, 10am" right after the same person's "my visa appointment … is Jan 21": a value
  // with no topic words of its own continues the topic its speaker was on (`follows`: the caller's word)
  const continues = opts.follows === true && stemsNext.size === 0;
  // names and owners alone ("Pablo is moving to Glasgow" / "Pablo says hi from Glasgow, he's joined a
  // choir") are one person in one place, no thing of which a value changed
  if (thing < 1 && !continues) return false;
  if (keepsUntouchedSentence(old.text, stemsNext)) return false;
  const oldValues = typedValues(old.text);
  const nextValues = typedValues(next.text);
  // the date a change takes effect is compared only with a calendar date on the other side (valuesBesideWhen)
  // when both say when their change takes effect, those dates are of two changes, not values of one thing
  // ("from November we meet in the library room" / "the library is putting the room up to £25 from September")
  const bothTakeEffect = takesEffect(old.text) && takesEffect(next.text);
  const was = givesCalendarDate(nextValues) && !bothTakeEffect ? oldValues : valuesBesideWhen(old.text, typedValues) ?? oldValues;
  const topic = new Set([...stemsOld].filter((w) => stemsNext.has(w)));
  const near = (t: string) => valuesNear(t, topic);
  const now = continues ? nextValues : (givesCalendarDate(oldValues) && !bothTakeEffect ? null : valuesBesideWhen(next.text, near)) ?? near(next.text);
  // A new value replaces an old one of its kind: a date another date, an amount another amount of its
  // unit, a code another code. "He's 9" is no new value for "the flight is now on July 3".
  for (const [kind, values] of now) {
    const before = was.get(kind);
    if (!before) continue;
    for (const v of values) {
      if (before.has(v)) continue;
      // "started last week (week of 2025-03-03)" is the "Starting in March" of before, not a new date
      if (kind === 'date' && sameDateAsAny(v, before)) continue;
      return true;
    }
  }
  return false;
}

/**
 * Does a statement of several sentences keep one that gives a value and shares no word with the change
 * ("Tech confirmed for Sunday 9 November. Opening night Friday 14 November." / "Tech moves to Monday 10
 * November")? That sentence still holds, so the statement stays; retrieval orders the two as versions.
 */
function keepsUntouchedSentence(oldText: string, stemsNext: ReadonlySet<string>): boolean {
  const sentences = sentencesOf(oldText);
  if (sentences.length < 2) return false;
  return sentences.some((sentence) => {
    if (typedValues(sentence).size === 0) return false;
    const own = objectStems(sentence);
    return own.size > 0 && ![...own].some((w) => stemsNext.has(w));
  });
}

/** A stored statement's sentences, its speaker aside (asked of it by every later update it is a candidate of: kept per text, read only). */
const sentencesOf: (text: string) => readonly string[] = memoByText((text) => splitSentences(withoutSpeakerPrefix(text)));

/** Does a statement say when its change takes effect ("from November", "starting 1 March")? */
function takesEffect(text: string): boolean {
  return TAKES_EFFECT_ANYWHERE.test(text);
}

/** Four sentences or list items or more (asked of every candidate a statement may update: kept per text). */
const manyFacts: (text: string) => boolean = memoByText(manyFactsOf);

function manyFactsOf(text: string): boolean {
  return withoutSpeakerPrefix(text).split(/(?<=[.!?])\s+|\n+\s*(?:\d+[.)]|[-*•])?\s*/).filter((p) => /\p{L}{2}/u.test(p)).length >= 4;
}

/** A month's name or its short form, in small letters. */
const MONTH_WORD = '(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t|tember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)';

/**
 * When a change takes effect: "from November", "starting 16 Sept", "as of next month", "from 1 February
 * (2025-02-01)". A span ("from May to July", "from 9 till 5") is a value, not its start.
 */
const TAKES_EFFECT = new RegExp(String.raw`\b(?:from|starting|as of|effective|beginning|commencing)\s+(?:(?:the|on|in)\s+)?(?:next (?:week|month|year|term|season)|\d{1,2}(?:st|nd|rd|th)?(?: of)? ${MONTH_WORD}\b|${MONTH_WORD}\b(?:\.? \d{1,2}(?:st|nd|rd|th)?\b)?|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\d{4}-\d{2}-\d{2})(?:\s*\(\d{4}-\d{2}(?:-\d{2})?\))?(?!\s*(?:to|until|till|through|-|–)\s)`, 'gi');
/** TAKES_EFFECT for a yes or no (the global one keeps a position between calls). */
const TAKES_EFFECT_ANYWHERE = new RegExp(TAKES_EFFECT.source, 'i');

/**
 * A statement's values without the date its change takes effect, when it gives another value: "meetings
 * move to the library community room from November" gives a room, and "meetings are the second
 * Wednesday" is no new value of its November; "I accept £1,185 per month from 1 February" gives an
 * amount. Null when it names no such date, or no other value ("I start from the 12th" keeps its date).
 * The caller keeps the date when the other statement gives a calendar date: "my day rate goes up to £500
 * from 1 January" gives a new date for "that rate works for me through December", "the job now starts on
 * June 2" for "starting May 5".
 */
function valuesBesideWhen(text: string, valuesOf: (t: string) => TypedValues): TypedValues | null {
  const masked = text.replace(TAKES_EFFECT, ' ');
  if (masked === text) return null;
  const rest = valuesOf(masked);
  return rest.size > 0 ? rest : null;
}

/** Does a statement's `typedValues` give a calendar date (a month or a day of one; a weekday is a schedule)? */
function givesCalendarDate(values: TypedValues): boolean {
  return [...(values.get('date') ?? [])].some((d) => !WEEKDAY_KEYS.has(d));
}

/** The keys `weekdayKey` gives. */
const WEEKDAY_KEYS = new Set(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);

/**
 * The values a new statement gives in the sentences that speak of the shared topic: "Heads up, I might
 * miss April — the new job started last week" gives the job no new date; April is another matter. The
 * question a reply carries names its topic for the whole reply.
 */
function valuesNear(text: string, topic: ReadonlySet<string>): TypedValues {
  const parts = replyParts(text);
  // a sentence that points back carries the value on ("I've got a new number. It's 07700 900958 now")
  const near = parts.filter((p, i) => [...objectStems(p)].some((w) => topic.has(w))
    || (i > 0 && pointsBack(p) && [...objectStems(parts[i - 1])].some((w) => topic.has(w))));
  return typedValues(near.length > 0 && near.length < parts.length ? near.join(' ') : text);
}

/** A reply's sentences and dash-set clauses, its question aside (valuesNear, once per candidate of a statement: kept per text, read only). */
const replyParts: (text: string) => readonly string[] = memoByText((text) => withoutQuestion(text).split(/(?<=[.!?…;])\s+|\s+[—–]\s+/));

/** A date value's month (0-11) and day, from "mar", "march 3", "2025-03-03"; null for a weekday or a bare day. */
function monthDay(v: string): { month: number; day: number | null } | null {
  const iso = /^\d{4}-(\d{2})-(\d{2})/.exec(v);
  if (iso) return { month: Number(iso[1]) - 1, day: Number(iso[2]) };
  const m = /^([a-z]+)\.?(?:\s+(\d{1,2}))?$/.exec(v);
  if (!m || !MONTH.test(m[1])) return null;
  return { month: MONTHS.indexOf(m[1].slice(0, 3)), day: m[2] ? Number(m[2]) : null };
}

/**
 * Does a date value name a time the earlier values already gave, one more exactly than the other ("mar"
 * and "2025-03-03")? Days are compared where both sides have one: "january 28" is new after "jan 21".
 */
function sameDateAsAny(v: string, before: ReadonlySet<string>): boolean {
  const x = monthDay(v);
  if (!x) return false;
  const sameMonth = [...before].map(monthDay).filter((y): y is { month: number; day: number | null } => !!y && y.month === x.month);
  if (sameMonth.length === 0) return false;
  const days = sameMonth.filter((y) => y.day !== null);
  return x.day === null || days.length === 0 || days.some((y) => y.day === x.day);
}

const MONTH = new RegExp(`^${MONTH_WORD}$`);
const WEEKDAY = /^(?:mon|tues|wednes|thurs|fri|satur|sun)days?$/;
/** A weekday written short, as chats list them: "Tue/Thu", "Mon, Wed & Fri" (alone, "sun" or "wed" is another word). */
const SHORT_DAY = '(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)';
const SHORT_DAY_LIST = new RegExp(`\\b${SHORT_DAY}(?:\\s*(?:/|,|&|and)\\s*${SHORT_DAY})+\\b`, 'gi');

/** A weekday in any case: its whole name, or "tues", "thurs", "weds" (no other word is spelt so). */
const WEEKDAY_IN_WORDS = /\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|tues|thurs|weds)\b/gi;
/** A month in any case with the day after it ("may 20", "aug 19th"): "may" alone is a verb. */
const MONTH_DAY_IN_WORDS = /\b((?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*)\.? (\d{1,2})(?:st|nd|rd|th)?\b(?!:|\d)/gi;

/** One key per weekday, however written: "Mondays", "monday" and "Mon" are the same day. */
function weekdayKey(word: string): string {
  return word.toLowerCase().slice(0, 3);
}

/**
 * A statement's specific values (words.ts specificValues) by kind: `date` (months, weekdays, ISO dates,
 * days of a month), `time` (07:15, 5pm), `amount` (an amount with its unit, by unit), `code` (letters
 * and digits together: NW418, thistle-kettle-88), `number`, `name`. Amounts are grouped by unit so that
 * "500 mg" meets "1000 mg" and not "20 minutes".
 */
export const typedValues: (text: string) => TypedValues = memoByText(typedValuesOf);

/** What `typedValues` gives: values by kind (shared between its callers: read only). */
export type TypedValues = ReadonlyMap<string, ReadonlySet<string>>;

function typedValuesOf(text: string): TypedValues {
  const out = new Map<string, Set<string>>();
  const add = (kind: string, v: string) => { let set = out.get(kind); if (!set) out.set(kind, set = new Set()); set.add(v); };
  // the question a reply carries is not its value ("€80 a week (asked: ... when do you shop?)")
  const reply = withoutQuestion(withoutTag(text));
  const body = withoutSpeakerPrefix(reply);
  const measured = new Set<string>();
  for (const m of body.matchAll(MEASURE)) {
    // a rate is its unit of time or count: "250/min" and "100 req/min" are two values of one kind
    const slash = /\/\s*([a-z]+)$/i.exec(m[0]);
    const unit = slash ? `/${slash[1].toLowerCase()}` : m[0].replace(/[\d.,:\s]+/g, ' ').trim().toLowerCase();
    const amount = m[0].replace(/[^\d.,:]/g, '').replace(/[.,]+$/, '');
    add(`amount ${unit}`, amount);
    measured.add(amount);
  }
  // a count of things is a value of its own kind: "we hired 6 people" gives no new value of "12 of 12 seats in
  // use" (only "14 seats" would)
  for (const m of body.matchAll(/\b(\d+)\s+([a-z]{3,}s)\b/g)) {
    if (COUNT_NOT_THING.test(m[2]) || measured.has(m[1])) continue;
    add(`count ${stemPlural(m[2])}`, m[1]);
    measured.add(m[1]);
  }
  // how often: "twice a day" and "once a day" are two values of one kind
  for (const m of body.matchAll(/\b(once|twice|(?:three|four|five|six|\d+) times) (?:a|per|every) (day|week|month|year|night)\b/gi)) add(`often ${m[2].toLowerCase()}`, m[1].toLowerCase());
  // a day beside its month is part of the date ("July 3"), not a number of its own
  const days = new Set<string>();
  for (const m of body.matchAll(/\b([A-Z][a-z]+)\.? (\d{1,2})\b|\b(\d{1,2}) ([A-Z][a-z]+)\b/g)) {
    const month = (m[1] ?? m[4]).toLowerCase();
    if (!MONTH.test(month)) continue;
    const day = m[2] ?? m[3];
    days.add(day);
    add('date', `${month} ${day}`);
  }
  for (const list of body.matchAll(SHORT_DAY_LIST)) for (const d of list[0].match(new RegExp(SHORT_DAY, 'gi')) ?? []) add('date', weekdayKey(d));
  // chats write days and dates in small letters ("it's tuesday nights, not monday", "starting may 20"):
  // a weekday's whole name, or the short forms no other word has, and a month with its day
  for (const m of body.matchAll(WEEKDAY_IN_WORDS)) add('date', weekdayKey(m[0]));
  for (const m of body.matchAll(MONTH_DAY_IN_WORDS)) {
    if (!MONTH.test(m[1].toLowerCase())) continue; // "market 5"
    days.add(m[2]);
    add('date', `${m[1].toLowerCase()} ${m[2]}`);
  }
  for (const v of specificValues(lowerSentenceOpeners(reply))) {
    if (days.has(v)) continue;
    if (WEEKDAY.test(v)) add('date', weekdayKey(v));
    else if (MONTH.test(v) || /^\d{4}-\d{2}-\d{2}/.test(v) || /^\d{1,2}(?:st|nd|rd|th)$/.test(v)) add('date', v);
    else if (/^\d{1,2}(?::\d{2})?(?:am|pm)$|^\d{1,2}:\d{2}$/.test(v)) add('time', v);
    else if (/^\d+(?:[.,]\d+)?$/.test(v)) { if (!measured.has(v)) add('number', v); }
    else if (/\d/.test(v)) add('code', v);
    else add('name', v);
  }
  return out;
}

/**
 * Keys that name the record a JSON document is (a booking, an order, a policy, a customer's account, a
 * workspace), in document order. A support tool's later output of a customer ("customer: BW-77; email: …;
 * status: updated") is that record's new state: its fields merge into the record; read as a statement of
 * contact details it retired the whole record, phone number and address with it.
 */
const RECORD_KEY = /^(?:id|uuid|[a-z_]*_(?:id|number|no|ref|reference)|booking|pnr|order|account|policy|ticket|claim|reservation|confirmation|case|subscription|invoice|exchange|shipment|tracking|contract|appointment|customer|client|member|membership|patient|workspace|tenant|employee|student|vehicle|device|property|project|lease|loan|prescription)$/i;

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

/** A record's or a statement's values, written alike: "£32" and "32.00 GBP" are 32, "the 5th" is 5. */
function comparableValues(text: string): Set<string> {
  const out = new Set<string>();
  for (const v of specificValues(text)) out.add(v.replace(/^[£$€]/, '').replace(/\.0+$/, '').replace(/^(\d+)(?:st|nd|rd|th)$/, '$1'));
  // "March 1, 2025" is the record's 2025-03-01
  for (const m of text.matchAll(/\b([A-Z][a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)?,? (\d{4})\b|\b(\d{1,2}) ([A-Z][a-z]+) (\d{4})\b/g)) {
    const month = MONTHS.indexOf((m[1] ?? m[5]).slice(0, 3).toLowerCase());
    if (month < 0) continue;
    out.add(`${m[3] ?? m[6]}-${String(month + 1).padStart(2, '0')}-${(m[2] ?? m[4]).padStart(2, '0')}`);
  }
  return out;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** A value specific enough to tie a sentence to a record: a code, a time, a date, an amount of 3+ digits. */
function distinctive(v: string): boolean {
  return /\d/.test(v) && (/\p{L}/u.test(v) || /[:.\-/]/.test(v) || v.length >= 3);
}

/** A record unit's "field: value" entries, in order (a value is null for an entry without one). */
export function recordEntries(text: string): [string, string | null][] {
  return text.split(/; (?=[^:;]{1,80}: )/).map((e): [string, string | null] => {
    const at = e.indexOf(': ');
    return at < 0 ? [e, null] : [e.slice(0, at), e.slice(at + 2)];
  });
}

/**
 * Does `statement` restate fields of a record's old state (`old`) that its new state (`merged`) changed?
 * It must share values with two of the old state's fields, one value distinctive (a flight number, a
 * plan's speed, a date), and a third of those fields must be ones whose values the new state no longer
 * has: "I see flight NW412 … seat 14A" after the booking moved to NW418, "You're on Fibre 150 at £32 a
 * month" after the upgrade, "An engineer will connect 4 Elm Close on May 9" after the visit moved. Fields,
 * not words, are counted: an address of three words is one field.
 */
export function restatesChangedFields(statement: string, old: string, merged: string): boolean {
  const said = comparableValues(statement);
  const now = comparableValues(merged);
  let shared = 0;
  let strong = false;
  let changed = 0;
  for (const [, value] of recordEntries(old)) {
    if (value === null) continue;
    const hits = [...comparableValues(value)].filter((v) => said.has(v));
    if (hits.length === 0) continue;
    shared++;
    if (hits.some(distinctive)) strong = true;
    if (hits.some((v) => !now.has(v))) changed++;
  }
  // A sentence that restated many fields and saw one of them change ("upgraded to Fibre 500 at £39 …, on a
  // new 18-month contract", then only the price rose) is still mostly true: it stays, the record says the rest.
  return shared >= 2 && strong && changed > 0 && changed * 3 >= shared;
}
