/**
 * Change cues: does a statement announce that a value changed? `update`: a new value holds from now on
 * ("now", "these days", "switched", "moved", "new", "instead", "started", "updated", "cut the budget to",
 * "went up", a correction: "Mondays, not Wednesdays"); `end`: an old value stopped
 * ("quit", "sold", "left", "no longer", "broke up"). Consolidation retires the values a change replaces
 * (consolidation/updates.ts); retrieval ranks an ending below the value that holds now, and above it
 * for a question about before (retrieval/fusion.ts).
 */
import { memoByText } from './memo';
import { STOPWORDS } from './stopwords';

export type ChangeCue = 'update' | 'end';

const END_CUE = /\b(?:quit|quitting|resigned|retired|sold|selling|left|leaving|no longer|not (?:\w+ )?any ?more|stopped|dropped|gave up|giving up|broke up|split up|divorced|finished|handed in|laid off|let go|cancel(?:l)?ed|moved out|lost (?:my|his|her|the) job|ended|over with)\b/i;
const UPDATE_CUE = /\b(?:now|these days|nowadays|currently|at the moment|instead|switched|switching|changed|changing|moved|moves|moving|relocated|relocating|settled|new|started|starting|began|become|became|joined|transferred|upgraded|downgraded|replaced|from now on|going forward|from here on|as of (?:today|now|this week|next week|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|effective (?:immediately|today|now)|switch(?:es)?(?: \w+){0,3} to|down to|up to|updated|(?:raised|increased|reduced|lowered|cut|drop|shorten(?:ed)?|extend(?:ed)?|lengthen(?:ed)?|bump(?:ed)?|upped|decreased|trimmed)(?: \w+){0,3} to|(?:goes|going|went|gone) (?:up|down)|took (?:a|the) job|got (?:a|the) job|got hired|hired|promoted|accepted (?:an?|the) offer|signed|enrolled|took up|rescheduled|postponed|pushed back|pushed to|got pushed|push(?:ing|es)?(?: \w+){0,2} (?:back|to)|delayed to|brought forward|changed to|takes over|taking over|took over|went (?:vegan|vegetarian|keto))\b/i;

/**
 * A value set for a date to come: "from 1 June the rent will be £915", "the class becomes Tuesdays from next
 * month". A span ("from May to July"), or a stay for a while ("sending me to Lisbon for two weeks from July
 * 14"), replaces nothing.
 */
const SCHEDULED = /\bfrom (?:the )?(?:(?:\d{1,2}(?:st|nd|rd|th)?(?: of)? )?(?:january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b(?!\s+(?:to|until|till|through)\b)|next (?:week|month|year|term|season)\b)/i;
const WILL_BE = /\b(?:will be|'ll be|becomes|will become|goes (?:up|down)|will go (?:up|down)|rises|will rise|will cost|will change|changes to|is changing|will move|will switch|will start)\b/i;
const FOR_A_WHILE = /\bfor (?:a|an|one|two|three|four|five|six|\d+|a few|a couple of) (?:days?|nights?|weeks?|months?)\b/i;

/**
 * A correction: "correction: Dutch class is Mondays not Wednesdays", "demos are at 3pm, not 2", "it's
 * tuesday nights, not monday". A value set against another of its kind (a number, a weekday, a month)
 * says which one holds: an update, like "moved to".
 */
const CORRECTION = /\b(?:correction|corrected|correcting|scratch that|i meant|my mistake|typo)\b|\b(?:not|rather than|instead of)\s+(?:(?:on|at|in|the)\s+)?(?:#?\d|(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|(?:january|february|march|april|june|july|august|september|october|november|december)\b)/i;

/**
 * The change a statement announces, if any. An ending wins: "I quit, I'm freelance now" is split before.
 * Remembered per text (memo.ts): consolidation asks it of a statement by several of its steps, and
 * retrieval of every stored statement it ranks.
 */
export const changeCue: (text: string) => ChangeCue | null = memoByText(changeCueOf);

function changeCueOf(text: string): ChangeCue | null {
  if (/\?\s*$/.test(text)) return null;
  if (END_CUE.test(text) && !updateForAnothersEnding(text)) return 'end';
  // "Elena loves the new job though" speaks of a change already told; "the new one is Northfield Grain"
  // tells it
  const told = text.replace(/\bthe new\b(?!(?:\s+[\p{L}-]+){1,2}\s+(?:is|are|will be|:))/giu, 'the');
  if (UPDATE_CUE.test(told) || CORRECTION.test(told)) return 'update';
  if (SCHEDULED.test(text) && WILL_BE.test(text) && !FOR_A_WHILE.test(text)) return 'update';
  return null;
}

/**
 * A clause that tells someone else's or something else's ending ("the tuesday teacher left", "Tomasz left
 * the team", "our landlord retired"): its subject is a thing or another person, not the speaker.
 */
const OTHERS_ENDING = /^(?:(?:and|but|so|because|since|as|cause|cos|coz)\s+)?(?:the|a|an|his|her|their|our|its|that|this)\s+[\p{L}-]+|^(?:(?:and|but|so|because|since|as|cause|cos|coz)\s+)?\p{Lu}\p{Ll}+(?!'s\b)\s+(?!(?:and|or)\b)\p{Ll}/u;

/**
 * Is the ending in a statement only the reason for a change it tells first ("spanish moved to thursdays
 * btw, the tuesday teacher left"; "standup is 10:15 now, Tomasz left")? Then the statement announces the
 * new value: the class is not what ended. An ending of the speaker's own ("got hired at a bakery, quit
 * marlowe's") or told first ("quit marlowe's, got hired at a bakery") stays an ending.
 */
function updateForAnothersEnding(text: string): boolean {
  // "Happy new year choir!" tells no change
  const clauses = text.replace(GREETING_NEW, ' ').split(CLAUSE_BREAK).map((c) => c.trim()).filter((c) => c !== '');
  const firstChange = clauses.findIndex((c) => END_CUE.test(c) || UPDATE_CUE.test(c));
  if (firstChange < 0 || END_CUE.test(clauses[firstChange])) return false;
  return clauses.slice(firstChange + 1).every((c) => !END_CUE.test(c) || OTHERS_ENDING.test(c));
}

const GREETING_NEW = /\b(?:happy )?new (?:year|year's)\b/gi;

/** A thing got in place of one that ended: "Sold the truck finally. Got a hybrid" (read only beside an ending: "got a cold" alone is no change). */
const ACQUIRED = /\b(?:got|bought|getting|buying|picked up|adopted|leased|leasing)\s+(?:a|an|myself an?|us an?|our|my)\b/i;

const CLAUSE_BREAK = /[,;:.!?()]+|\s(?:but|and then|so)\s|\s[-–—]\s/;

/** Does a clause give a value that holds now, without saying that something ended? */
function givesNewValue(clause: string): boolean {
  return !END_CUE.test(clause) && (UPDATE_CUE.test(clause) || ACQUIRED.test(clause));
}

/**
 * The part of a statement that says what ended: its clauses but those that give the value holding now
 * ("sold my bike too, I take the train to the office now" → "sold my bike too"; "handed in my notice at
 * the café, last shift is friday" stays whole). Null when the statement announces no ending. What ended
 * is named there; the clause with the new value may name other things ("the office").
 */
export function endedClause(text: string): string | null {
  if (!END_CUE.test(text)) return null;
  // from the clause that says what ended up to the first that gives the new value: "ok i have news. quit
  // marlowe's, got hired at a bakery, 5am-1pm shifts. so im back for raids" ended Marlowe's, not the raids
  const clauses = text.split(CLAUSE_BREAK).map((c) => c.trim()).filter((c) => c !== '');
  const first = clauses.findIndex((c) => END_CUE.test(c));
  const out: string[] = [];
  for (const c of clauses.slice(Math.max(first, 0))) {
    if (givesNewValue(c)) { if (out.length > 0) break; continue; }
    out.push(c);
  }
  return out.join(', ');
}

/**
 * Does a statement that something ended also give the value that holds now ("I drink green tea in the
 * mornings now, I gave up coffee"; "Sold the truck finally. Got a hybrid")? Then it answers a question
 * about now; an ending alone ("I quit the cafe") does not.
 */
export function endsWithNewValue(text: string): boolean {
  if (!END_CUE.test(text)) return false;
  return UPDATE_CUE.test(text) || text.split(CLAUSE_BREAK).some(givesNewValue);
}

/**
 * Words naming an old value outright, with the value after them. "not", "rather than", "instead of"
 * name an old value only in a statement of change ("pto is apr 1-5, not march"; "rent goes through the
 * portal starting Feb instead of Zelle"): "tea instead of coffee this morning" is one morning. After
 * "not" and "rather than" only a value-like word counts (a number, a code, a weekday or month, a name):
 * "not sure", "not bad" name no value.
 */
const NOT_VALUE = /\b(?:not|rather than)\s+(?:(?:the|a|an|on|at|in|my|our|his|her|their)\s+)?([#$£€]?[\p{L}\p{N}][\p{L}\p{N}:.,/-]*)/giu;
const INSTEAD_OF = /\b(?:instead of|in place of)\s+(?:(?:the|a|an|my|our|his|her|their)\s+)?([#$£€]?[\p{L}\p{N}][\p{L}\p{N}:.,/-]*)/giu;
/** A choice made for good, which makes "instead of" a change: "I have decided to try 'Sungold' this year instead of Moneymaker". */
const DECIDED = /\b(?:decided|decision|chose|choosing|picked|opted|going with|went with)\b/i;

/** Words that say by themselves that a value is the old one: "Mochi (ex-Pickle)", "formerly Harlow St", "bye bye quartz". */
const FORMER = /(?:\b(?:formerly|previously|no more|bye bye|goodbye to)\s+|\bex-)(?:(?:the|a|an|my|our|his|her|their)\s+)?([#$£€]?[\p{L}\p{N}][\p{L}\p{N}:.,/-]*)/giu;
/** "went from $1,450 to $1,525", "switched from oat to almond": the value after "from" is the old one. */
const FROM_TO = /\b(?:moved|moving|moves|switched|switching|changed|changing|went|going|goes|gone|go|upgraded|downgraded|raised|lowered|bumped|cut|dropped)\b[^.!?]{0,30}?\bfrom\s+(?:(?:the|a|an|my|our|his|her|their)\s+)?([#$£€]?[\p{L}\p{N}][\p{L}\p{N}:.,/-]*)\s+to\b/giu;

/** A month or weekday however written ("march", "Mar", "Wednesdays", "tues", "weds"). */
const MONTH_OR_DAY = /^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|(?:mon|tues?|wed(?:nes)?|weds|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:days?)?)$/;
/** Short forms that are also ordinary words ("may", "sat", "sun", "wed"): a value only when written out. */
const WORD_TOO = new Set(['may', 'mar', 'mon', 'sat', 'sun', 'wed', 'tue', 'thu', 'fri', 'jan', 'jun', 'jul', 'aug', 'oct', 'nov', 'dec', 'sep', 'apr', 'feb']);

/**
 * One spelling per value, so "march" meets "mar 18-22", "Wednesdays" meets "wednesday" and "#12" meets
 * "12": lowercased, signs and closing punctuation dropped, a month or weekday by its first three letters.
 */
export function valueKey(token: string): string {
  const t = token.toLowerCase().replace(/^[#$£€]+/, '').replace(/[.,:/-]+$/, '');
  return MONTH_OR_DAY.test(t) ? t.slice(0, 3) : t;
}

/** Is a word a value as opposed to an ordinary word: a number or code, a weekday or month, a name? */
function valueLike(token: string): boolean {
  if (/\d/.test(token) || /^[#$£€]/.test(token)) return true;
  const t = token.toLowerCase().replace(/[.,:/-]+$/, '');
  if (MONTH_OR_DAY.test(t) && !WORD_TOO.has(t)) return true;
  return /^\p{Lu}/u.test(token) && token !== 'I';
}

/**
 * The values a statement names as the ones it replaces: "Devon's spot will be #9 not #12" → 12,
 * "Mochi (ex-Pickle)" → pickle, "pto is apr 1-5, not march" → mar, "rent goes through the portal instead
 * of Zelle" → zelle, "bye bye Phibsboro" → phibsboro (valueKey spellings). Consolidation retires the
 * earlier statements that give such a value (plan.ts, step 8e). A question names nothing.
 */
export function replacedValues(text: string): string[] {
  if (/\?\s*$/.test(text)) return [];
  const out = new Set<string>();
  // "instead" is a change cue of its own; here another word must say the value changed
  const change = changeCue(text.replace(/\binstead(?: of)?\b/gi, ' ')) !== null || DECIDED.test(text);
  if (change) for (const m of text.matchAll(NOT_VALUE)) if (valueLike(m[1])) out.add(valueKey(m[1]));
  for (const re of change ? [INSTEAD_OF, FORMER, FROM_TO] : [FORMER, FROM_TO]) {
    for (const m of text.matchAll(re)) {
      const key = valueKey(m[1]);
      if (valueLike(m[1]) || (key.length >= 3 && !STOPWORDS.has(key))) out.add(key);
    }
  }
  return [...out].filter((v) => v !== '');
}

/** The values a statement gives, in valueKey spellings: what `replacedValues` is looked up in. */
export function valueKeys(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/[#$£€]?[\p{L}\p{N}][\p{L}\p{N}:.,/-]*/gu)) {
    out.add(valueKey(m[0]));
    // and its parts: "$40/mo" gives 40, "hickory-look" gives hickory
    if (/[/-]/.test(m[0])) for (const part of m[0].split(/[/-]+/)) if (part !== '') out.add(valueKey(part));
  }
  return out;
}
