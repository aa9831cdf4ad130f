/**
 * Change cues: does a statement announce that a value changed? `update`: a new value holds from now on
 * ("now", "these days", "switched", "moved", "new", "instead", "started", "updated", "cut the budget to",
 * "went up", a correction: "Mondays, not Wednesdays"); `end`: an old value stopped
 * ("quit", "sold", "left", "no longer", "broke up"). Consolidation retires the values a change replaces
 * (consolidation/updates.ts); retrieval ranks an ending below the value that holds now, and above it
 * for a question about before (retrieval/fusion.ts).
 */
export type ChangeCue = 'update' | 'end';

const END_CUE = /\b(?:quit|quitting|resigned|retired|sold|selling|left|leaving|no longer|not (?:\w+ )?any ?more|stopped|dropped|gave up|giving up|broke up|split up|divorced|finished|handed in|laid off|let go|cancel(?:l)?ed|moved out|lost (?:my|his|her|the) job|ended|over with)\b/i;
const UPDATE_CUE = /\b(?:now|these days|nowadays|currently|at the moment|instead|switched|switching|changed|changing|moved|moving|relocated|relocating|settled|new|started|starting|began|become|became|joined|transferred|upgraded|downgraded|replaced|from now on|down to|up to|updated|(?:raised|increased|reduced|lowered|cut|drop)(?: \w+){0,2} to|(?:goes|going|went|gone) (?:up|down)|took (?:a|the) job|got (?:a|the) job|got hired|hired|promoted|accepted (?:an?|the) offer|signed|enrolled|took up|rescheduled|postponed|pushed back|pushed to|got pushed|delayed to|brought forward|changed to|takes over|taking over|took over|went (?:vegan|vegetarian|keto))\b/i;

/**
 * A correction: "correction: Dutch class is Mondays not Wednesdays", "demos are at 3pm, not 2", "it's
 * tuesday nights, not monday". A value set against another of its kind (a number, a weekday, a month)
 * says which one holds: an update, like "moved to".
 */
const CORRECTION = /\b(?:correction|corrected|correcting|scratch that|i meant|my mistake|typo)\b|\b(?:not|rather than|instead of)\s+(?:(?:on|at|in|the)\s+)?(?:\d|(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|(?:january|february|march|april|june|july|august|september|october|november|december)\b)/i;

/** The change a statement announces, if any. An ending wins: "I quit, I'm freelance now" is split before. */
export function changeCue(text: string): ChangeCue | null {
  if (/\?\s*$/.test(text)) return null;
  if (END_CUE.test(text)) return 'end';
  if (UPDATE_CUE.test(text) || CORRECTION.test(text)) return 'update';
  return null;
}

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
  return text.split(CLAUSE_BREAK).map((c) => c.trim()).filter((c) => c !== '' && !givesNewValue(c)).join(', ');
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
