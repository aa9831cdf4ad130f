/**
 * What kind of answer a question wants, beyond its words: the memory that *states* the asked thing,
 * not one that only shares the person's name or the topic.
 *
 * - Time: "now", "these days", "still", a present-tense question (the default) wants the value that
 *   holds today; "before", "used to", "originally", "old", "previous", "ex" want an earlier value, and
 *   a past-tense question ("What car did Kofi have?") may be answered by one. Superseded memories are
 *   searched only for those two (`tense`), and earlier versions are scaled down for the first.
 * - Kind of answer: a "when" question is answered by a statement that carries a time (a date, a
 *   weekday, "yesterday", "in June"); "how much / how many / what number" by one with a number; "who"
 *   by one that names someone; "where / which city" by one that says a place; "why" by one that gives a reason. A candidate without what the question asks for is scaled down: a
 *   bounded demotion, never a filter.
 *
 * Pure functions over plain text; the factors are applied in fusion (fusion.ts `answerFocus`).
 */
import { asksAboutHistory } from './arbitration';
import { isQuestion } from './query';
import { IRREGULAR_PAST } from '@strata/store/indexes';
import { FUNCTION_WORDS, stem, STOPWORDS, withoutSpeakerPrefix, words } from '../text';

export type Tense = 'current' | 'past' | 'history';
export type AnswerKind = 'time' | 'number' | 'person' | 'place' | 'identity' | 'reason' | null;

export interface QueryIntent {
  tense: Tense;
  kind: AnswerKind;
  /** the query's content words (stems), question words, tense words and names aside */
  terms: string[];
  /** the names the query gives (`namesIn`): a statement naming only them names no one else */
  names: ReadonlySet<string>;
  /** the question asks for the value before a change ("before", "first", "used to"), not how it changed */
  earlier: boolean;
}

/**
 * Content stems as the text index reads them: an irregular past by its base form ("grew" → "grow", "met"
 * → "meet": store indexes/tokenizer.ts), so a statement the index found for "Where did Jamal grow up?"
 * also holds the question's words here ("I grew up in Bristol" is no statement matched by its context).
 */
function indexedStems(text: string): string[] {
  return words(text).filter((w) => !FUNCTION_WORDS.has(w)).map((w) => stem(IRREGULAR_PAST.get(w) ?? w)).filter((w) => w.length > 0);
}

const QUESTION_STEMS = new Set(indexedStems('what which who whom whose when where why how now these days currently still today nowadays moment do does did is are was were have has had'));

/** The query's content stems: what a statement on the same topic shares with it. */
export function queryTerms(query: string): string[] {
  // Names are left out: every statement about a person shares the name, so it says nothing of the topic.
  const names = new Set(indexedStems(query.split(/\s+/).slice(1).filter((t) => /^\p{Lu}/u.test(t)).join(' ')));
  return [...new Set(indexedStems(query).filter((w) => !QUESTION_STEMS.has(w) && !names.has(w)))];
}

/**
 * Words of order in time ("last", "next", "first"): in a question they place the asked thing ("Helen's last
 * day", "the next rehearsal"), in a statement they mostly date another ("cut over last night", "next
 * week"), so two statements sharing only them are no versions of one thing.
 */
const ORDER_STEMS = new Set(indexedStems('last next past previous latest upcoming first'));

/** The query's terms that say what thing two versions are of (`queryTerms` without words of order). */
export function versionTerms(intent: QueryIntent): string[] {
  return intent.terms.filter((t) => !ORDER_STEMS.has(t));
}

/** A unit's own words as stems (its speaker prefix aside): what `matchedTerms` looks in. */
export function ownStems(content: string): Set<string> {
  return new Set(indexedStems(withoutSpeakerPrefix(content)));
}

/** Which of `terms` a unit's own words hold (its speaker prefix aside). */
export function matchedTerms(content: string, terms: readonly string[], own: ReadonlySet<string> = ownStems(content)): Set<string> {
  return matchedStems(terms, own);
}

/** `matchedTerms` given the unit's own stems (`ownStems`, kept by unit-traits.ts). */
export function matchedStems(terms: readonly string[], own: ReadonlySet<string>): Set<string> {
  return new Set(terms.filter((t) => own.has(t)));
}

const PAST_VERB = /\b(?:did|was|were|had|used to|went|got|became|made|took)\b/i;
const PRESENT = /\b(?:now|these days|nowadays|currently|at the moment|still|today|is|are|am|does|do|has|have)\b/i;
const EARLIER = /\b(?:ex|ex-\w+|old|older|former|formerly|previous|previously|before|originally|original|used to|earlier|first|initially|prior|last (?:one|time)|back (?:in|then|when)|at the (?:start|beginning|outset)|in the beginning|to begin with|when (?:\w+ ){1,4}(?:started|began|joined|moved in|signed up))\b/i;

export function queryIntent(query: string): QueryIntent {
  const q = query.normalize('NFKC').replace(/\s+/g, ' ').trim();
  let tense: Tense = 'current';
  if (asksAboutHistory(q) || EARLIER.test(q)) tense = 'history';
  else if (PAST_VERB.test(q) && !/\b(?:now|these days|currently|still)\b/i.test(q)) tense = 'past';
  else if (!PRESENT.test(q) && PAST_VERB.test(q)) tense = 'past';
  return { tense, kind: answerKind(q), terms: queryTerms(q), names: namesIn(q), earlier: tense === 'history' && EARLIER.test(q) };
}

/** "Who is Arjun?", "who's Linda?": a name alone, asked who that person is to the speaker (a relation, a role). */
const WHO_IS_NAME = /^\s*[Ww]ho(?:'s|’s| is| was)\s+\p{Lu}[\p{L}'’-]*(?:\s+\p{Lu}[\p{L}'’-]*)?\s*\??\s*$/u;

function answerKind(q: string): AnswerKind {
  if (WHO_IS_NAME.test(q)) return 'identity';
  const lower = q.toLowerCase();
  if (/^(?:why|how come)\b|\bwhat (?:was|is|were|are) the reasons?\b|\bwhat'?s the reason\b|\bfor what reason\b/.test(lower)) return 'reason';
  if (/^(?:when|what time|what date|which day|what day|how long ago|since when|by when)\b|\b(?:what|which) (?:date|day|time|month|year)\b|\bwhen\b/.test(lower)) return 'time';
  if (/^(?:how (?:much|many|often|far|long|old|fast|big|heavy|tall))\b|\b(?:what|which) (?:number|price|amount|dose|size|score|pace|speed|percentage|rate|fee|premium|balance|salary)\b|\bhow much\b|\bhow many\b/.test(lower)) return 'number';
  if (/^(?:who|whom|whose)\b|\bwho\b|\bwhat(?:'s| is) the name\b|\bwhat is (?:his|her|their) name\b/.test(lower)) return 'person';
  if (/^where\b|\b(?:what|which|in which|in what) (?:city|town|country|neighbou?rhood|area|place|street|village|state|region|district|part of)\b/.test(lower)) return 'place';
  return null;
}

const MONTH_OR_DAY = /\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|mon(?:day)?s?|tue(?:s(?:day)?)?s?|wed(?:nesday)?s?|thu(?:rs(?:day)?)?s?|fri(?:day)?s?|sat(?:urday)?s?|sun(?:day)?s?|weekend|tonight|tomorrow|yesterday|today|last (?:week|month|year|night)|next (?:week|month|year)|this (?:week|month|year|morning|evening|afternoon)|(?:\d+|a|two|three|few) (?:days?|weeks?|months?|years?) ago|in (?:the )?(?:spring|summer|autumn|fall|winter)|morning|evening|noon|midnight|o'clock|am|pm)\b/i;

/** Does the statement say when (a date, a weekday or month, a relative day, a clock time)? */
export function carriesTime(content: string): boolean {
  return /\d/.test(content) || MONTH_OR_DAY.test(content);
}

/** Does the statement name someone or something (a capitalized word past the first, the speaker prefix aside)? */
export function namesSomeone(content: string): boolean {
  const body = withoutSpeakerPrefix(content);
  const tokens = body.split(/\s+/);
  const first = (tokens[0] ?? '').replace(/[^\p{L}]+$/u, '');
  if (/^\p{Lu}\p{Ll}+$/u.test(first) && !STOPWORDS.has(first.toLowerCase())) return true;
  return tokens.slice(1).some((t) => /^[("']?\p{Lu}\p{Ll}/u.test(t));
}

/** A sentence started in a small letter after a full stop, or "i" for I: the writer does not capitalize. */
const WRITES_SMALL = /[.!?]\s+\p{Ll}|\bi\b(?!\.)/u;

const MONTH_OR_WEEKDAY_NAME = /^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)$/;

/**
 * The names a text gives, lowercased: its capitalized words (the speaker prefix aside) that are no
 * stopword, month or weekday, possessives cut ("Claire's" → "claire").
 */
export function namesIn(content: string): Set<string> {
  const out = new Set<string>();
  for (const token of withoutSpeakerPrefix(content).split(/\s+/)) {
    const word = token.replace(/^[^\p{L}]+/u, '').replace(/(?:['’]s)?[^\p{L}]*$/u, '');
    if (!/^\p{Lu}\p{Ll}/u.test(word)) continue;
    const lower = word.toLowerCase();
    if (!STOPWORDS.has(lower) && !MONTH_OR_WEEKDAY_NAME.test(lower)) out.add(lower);
  }
  return out;
}

/**
 * `kindFactor` when the question names people: "Who did Abuela stay with?" is not answered by a
 * statement whose only name is Abuela, nor "Who is Claire's dentist?" by one naming only a Friday in
 * February; a place likewise must be more than the person asked about. `names` are the statement's
 * (`namesIn`), `known` the question's.
 */
export function kindFactorBeyond(kind: AnswerKind, content: string, names: ReadonlySet<string>, known: ReadonlySet<string>): number {
  if (kind === 'identity') return isQuestion(content) || saysWhoIs(content, known) ? 1 : KIND_FACTOR;
  const f = kindFactor(kind, content);
  if (f < 1 || known.size === 0 || (kind !== 'person' && kind !== 'place') || isQuestion(content)) return f;
  // a writer who starts sentences in small letters writes names so too ("Greta starts mat leave next fri.
  // tomasz covering as EM"): that a statement names no one else is known only from one who capitalizes
  if (WRITES_SMALL.test(withoutSpeakerPrefix(content))) return f;
  for (const n of names) if (!known.has(n)) return 1;
  if (kind === 'place' && saysPlaceInWords(content)) return 1;
  return KIND_FACTOR;
}

/**
 * Does the statement say who a named person is: a relation or role beside the name ("my brother Arjun",
 * "ur gf hana", "Arjun, my neighbour", "Linda is our accountant", "she's (Sara) my wife")? Every statement
 * naming Arjun answers "Who is Arjun?" less well than the one that says what Arjun is to the speaker.
 */
export function saysWhoIs(content: string, known: ReadonlySet<string>): boolean {
  const body = withoutSpeakerPrefix(content);
  for (const name of known) {
    const n = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const before = new RegExp(`\\b(?:my|our|your|ur|his|her|their)\\s+(?:[\\p{L}-]+\\s+){0,2}?${n}(?!\\p{L})`, 'iu');
    const after = new RegExp(`(?<!\\p{L})${n}(?:['’]s)?\\s*(?:,|\\(|\\bis\\b|\\bwas\\b|['’]s\\b)\\s*(?:my|our|your|ur|a|an|the|his|her|their)\\b`, 'iu');
    const resolved = new RegExp(`\\b(?:she|he|they)(?:['’]s|['’]re| is| was| are)\\s*\\(${n}\\)\\s*(?:my|our|your|ur|a|an|the|his|her|their)\\b`, 'iu');
    if (before.test(body) || after.test(body) || resolved.test(body)) return true;
  }
  return false;
}

/**
 * A statement that gives a new value without the old one ("Sina: playing a Sire Marcus Miller now", "I
 * switched to Japanese classes"): it does not answer what the value was before. One that names where
 * it came from ("moved from Leeds to York", "instead of German", "moved to 10am now, not 9") does.
 */
export function givesOnlyNewValue(content: string, cue: 'update' | 'end' | null): boolean {
  if (cue !== 'update') return false;
  // "from now on", "from tomorrow", "from 1 March" say when the new value holds, not where it came from
  const body = withoutSpeakerPrefix(content);
  return REPLACING.test(body) && !/\b(?:from|instead of|no longer|used to|before|previously|was|were|had|not|any ?more|no more)\b/i.test(body.replace(FROM_WHEN, ' '));
}

const FROM_WHEN = /\bfrom (?:now on|here on|then on|today|tonight|tomorrow|next \w+|this \w+|(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b(?!\s*(?:to|-|–)\s)|the \d|\d{1,2}(?:st|nd|rd|th)?\b(?! ?(?:to|-))|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?(?: \d{1,2}\w*)?(?! to\b))/gi;

/** Words that say a value replaced another (a beginning, "started me on metformin", may be the first value itself). */
const REPLACING = /\b(?:now|these days|nowadays|currently|instead|switched|switching|changed|moved|relocated|settled|replaced|upgraded|downgraded|updated to|from now on|rescheduled|postponed|pushed|delayed|brought forward|takes over|taking over|took over)\b/i;

/** A place said in lowercase, as chats do: "in porto", "moving to bonfim" ("to" only after a verb of going: "to help" is no place). */
const PLACE_AFTER_PREPOSITION = /\b(?:in|at|from|near|around|outside|(?:mov\w*|went|go|goes|going|gone|relocat\w*|transferr?\w*|sending \w+|sent \w+|fl[yi]\w*|flew|back|came|come|coming|drive|driving|drove|headed|heading) to)\s+(?!(?:the|a|an|my|your|his|her|our|their|this|that|it|me|you|him|them|us|all|least|last|first|home|work|time|bed|once|least)\b)\p{L}{3,}/iu;

/** Does the statement say where: a name (Porto, Bunker Studios) or a lowercase place after a preposition? */
export function saysWhere(content: string): boolean {
  return namesSomeone(content) || saysPlaceInWords(content);
}

/** A place said without a name: a lowercase place after a preposition, or "at home". */
function saysPlaceInWords(content: string): boolean {
  return PLACE_AFTER_PREPOSITION.test(withoutSpeakerPrefix(content)) || /\bat home\b/i.test(content);
}

/**
 * A statement that reports something as it happened ("Callum proposed.", "We are back from Norway.",
 * "sold the car today"): its own time (when it was said) answers "when did …?", and the context shows it.
 */
const EVENT_REPORT = /\b(?:(?:just|finally|officially) \w+|proposed|arrived|moved|started|finished|graduated|married|engaged|born|passed|quit|retired|resigned|sold|bought|adopted|got back|(?:am|are|is|we're|i'm) back|came back|broke up|laid off|closed|signed|accepted|landed|left|died|won|lost)\b/i;

function reportsEvent(content: string): boolean {
  return EVENT_REPORT.test(withoutSpeakerPrefix(content));
}

/** Bounded demotions of an answer's form (see the header); 1 when the statement has what is asked. */
export const KIND_FACTOR = 0.7;
/**
 * The same for a question about when: a statement with no time in it and no event it reports ("and the job
 * for me also same same") cannot say when, however close its words. Conversation suite, means of three
 * runs, at 0.7 / 0.5 / 0.35: top-1 0.577 / 0.591 / 0.591, holdout.json 0.512 / 0.526 / 0.523; LoCoMo dev
 * L1-evidence recall@10 in docs/memory-quality.md.
 */
export const TIME_KIND_FACTOR = 0.5;

export function kindFactor(kind: AnswerKind, content: string): number {
  // 'identity' needs the name asked about: kindFactorBeyond
  if (kind === null || kind === 'identity' || isQuestion(content)) return 1;
  if (kind === 'time') return carriesTime(content) || reportsEvent(content) ? 1 : TIME_KIND_FACTOR;
  if (kind === 'number') return /\d/.test(content) ? 1 : KIND_FACTOR;
  if (kind === 'place') return saysWhere(content) ? 1 : KIND_FACTOR;
  if (kind === 'reason') return givesReason(content) ? 1 : KIND_FACTOR;
  return namesSomeone(content) ? 1 : KIND_FACTOR;
}

/**
 * Does the statement give a reason: a word of cause ("because", "bc", "since", "due to", "so we …", "that's
 * why") or a clause after a break that tells what happened to someone ("Aoife is moving to Cork, her husband
 * got a job there", "changed to the 27th — Jess's wedding is on the 20th")?
 */
export function givesReason(content: string): boolean {
  const body = withoutSpeakerPrefix(content);
  return REASON_WORD.test(body) || REASON_CLAUSE.test(body);
}

const REASON_WORD = /\b(?:because|cause|cos|coz|bc|b\/c|since|due to|owing to|thanks to|so (?:that|we|i|she|he|they|it|you)|that'?s why|which is why|reasons?|in order to|after (?:the|my|his|her|their|our)|for (?:my|his|her|their|our) (?:work|job|health|family|studies))\b/i;
const REASON_CLAUSE = /[,;:—–]\s+(?:(?:she|he|they|we|i)(?:'s|'re|'m)?|(?:her|his|their|my|our)\s+\p{L}+|\p{Lu}\p{Ll}+(?:'s\s+\p{L}+)?)\s+(?:got|gets|is|was|has|had|needs?|wanted|wants|moved|moving|left|leaving|can'?t|couldn'?t|won'?t|broke|lost|started|found|took)\b/u;
