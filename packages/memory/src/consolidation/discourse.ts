/**
 * Turn-level discourse, between splitting (split.ts) and the unit: what a statement needs from its
 * neighbours to stand alone as memory.
 *
 *  - Lead-ins ("Big news here too: I passed the test") announce the statement: they are cut off, so
 *    the unit is the fact, not the announcement.
 *  - Fragments ("Station 7, starting Monday." after "Graduated from the academy today!") join the
 *    statement they belong to: alone they are an orphan no question finds.
 *  - "She" or "he" opening a statement points to the person the previous statement was about ("Miso
 *    turned out to be allergic-trigger central for Min, so she lives with my sister Dae now"): the name
 *    is written beside the pronoun ("She (Miso) lives …"), so the unit says whom it is about.
 *  - An assistant's pleasantries and its narration of its own work ("Happy to help, Rui!", "Looking for
 *    flights now.", "Noted, the plan follows your new days.") state nothing about the user or the world.
 */

import { capitalizedWords, STOPWORDS } from '../text';
import { LIST_MARKER, SIGN_OFF_WORDS } from './split';

/** Words that announce news rather than state it, in a lead-in before a colon. */
const LEAD_IN = /^(?:(?:big|good|great|bad|sad|some|quick|small|little|fun|random|exciting|huge|other|more|latest)\s+)*(?:news|update|updates|thing|things|fact|heads[- ]up|announcement|confession|question|story|status)\b|^(?:btw|fyi|so|well|also|oh and|and|anyway|guess what|ps|p\.s\.|update|news|reminder|note to self)\b/i;

/** Is this the whole of a lead-in ("Update", "Big news", "Heads up", "PS") rather than, say, a speaker's name? */
export function isLeadIn(words: string): boolean {
  const m = LEAD_IN.exec(words.trim());
  return !!m && m[0].length === words.trim().length;
}

/** "Big news here too: I passed …" → "I passed …"; other statements unchanged. */
export function stripLeadIn(statement: string): string {
  const m = /^([^:]{1,48}):\s+(\S.*)$/u.exec(statement);
  if (!m) return statement;
  const [, left, right] = m;
  if (/\d/.test(left) || left.split(/\s+/).length > 6 || right.split(/\s+/).length < 3) return statement;
  if (!LEAD_IN.test(left.trim())) return statement;
  return right.charAt(0).toUpperCase() + right.slice(1);
}

/** Subjects and verbs that make a statement a clause; without either it is a fragment. */
const SUBJECT_WORD = /\b(?:i|i'm|i've|i'll|i'd|you|you're|he|he's|she|she's|we|we're|they|they're|it|it's|this|that|there|there's|here's|who|which)\b/i;
const FINITE_VERB = /\b(?:am|is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|shall|should|may|might|must|got|get|gets|go|goes|went|make|makes|made|take|takes|took|love|loves|like|likes|want|wants|need|needs|live|lives|work|works|start|starts|say|says|said|know|knows|think|thinks|feel|feels|\w+ed)\b/i;

/** A phrase that opens with a preposition: where, when or how the statement before it happened. */
const PREPOSITION_OPENER = /^(?:on|at|in|from|with|near|by|after|before|during|since|until|outside|inside|under|over|behind|next to|right after|just after)\s/i;

/**
 * A statement with no subject that cannot stand alone: short and without a finite verb ("Station 7,
 * starting Monday.", "New year, new plan."), or a prepositional phrase that says where or when the one
 * before it happened ("Sam proposed! On the Clifton Suspension Bridge, at sunset, like a film.": alone,
 * the bridge answered no "where did he propose?", and the proposal said no place).
 */
export function isFragment(statement: string): boolean {
  const words = statement.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  if (words.length === 0 || SUBJECT_WORD.test(statement)) return false;
  if (words.length <= 5 && !FINITE_VERB.test(statement)) return true;
  return words.length <= 12 && PREPOSITION_OPENER.test(statement.trim());
}

/**
 * A list of values rather than of statements ("Allergies:\n- penicillin\n- peanuts"): every item a
 * fragment. It stays one statement: alone, each item says nothing.
 */
export function listsValues(text: string): boolean {
  const items = text.split('\n').filter((l) => LIST_MARKER.test(l));
  return items.length >= 2 && items.every((l) => isFragment(l.replace(LIST_MARKER, '')));
}

/**
 * A short announcement that opens a turn and names no one and nothing exact ("heads up, deadline
 * moved."): the next sentence says what it announces ("Atlas now has to be done by April 30").
 */
function isAnnouncement(statement: string, index: number, count: number): boolean {
  // "News from me not so happy." announces the speaker's news: "from me" is no statement of theirs
  const own = statement.replace(/\b(?:from|for) me\b/gi, ' ');
  const words = own.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  return index === 0 && count > 1 && words.length <= 5 && !/\d/.test(statement) && !/\b(?:i|i'm|my|me|we|our)\b/i.test(own)
    && !words.slice(1).some((w) => /^\p{Lu}/u.test(w));
}

/**
 * A short sentence that gives a value of what the sentence before it spoke of: "I've got a new number, the
 * old one's gone. It's 07700 900958 now." Alone, "It's 07700 900958 now" says nothing of a phone; it
 * stays with the sentence it points back to. Only with a value (a number, an address, a name): "It's
 * fine" and "That's the plan" are no such thing.
 */
export function pointsBack(statement: string): boolean {
  const m = /^(?:it'?s|it is|it was|it will be|it'll be|that'?s|that is|this is)\s+(.*)$/i.exec(statement.trim());
  if (!m) return false;
  const rest = m[1];
  return rest.split(/\s+/).length <= 7 && (/\d|@/.test(rest) || /(?:^|\s)\p{Lu}\p{Ll}/u.test(rest));
}

/**
 * A letter's sign-off ("Kind regards, Gerald Ashworth 07700 900112", "Best wishes, Marisol Quintero (and
 * Femi) Flat 2": split.ts keeps its lines together): a statement of its own, the same for every letter
 * that ends with it, not the tail of each last sentence (every email of the landlord's carried his phone
 * number and ranked for any number asked).
 */
const SIGN_OFF = new RegExp(`^(?:${SIGN_OFF_WORDS}),\\s*\\S`, 'i');

/**
 * A line that heads what follows ("Post-meeting summary for those who escaped early:", "Allergies:"): it
 * goes with the statement after it, which it introduces.
 */
function isHeading(statement: string): boolean {
  return /:$/.test(statement.trim()) && statement.split(/\s+/).length <= 12;
}

/**
 * Fragments joined to the statement before them (or after, for a turn's first statement), and an
 * opening announcement to the statement after it. Only these: statements of one turn are otherwise
 * kept apart, so an update to one retires only that one (joining whole turns by topic was tried and
 * cost LoCoMo evidence recall@10 0.79 -> 0.72: long units match less sharply, docs/memory-quality.md).
 */
export function joinFragments(statements: string[]): string[] {
  const out: string[] = [];
  let pendingHead: string | null = null;
  for (const [i, s] of statements.entries()) {
    if (i < statements.length - 1 && isHeading(s)) {
      pendingHead = pendingHead ? `${pendingHead} ${s}` : s;
      continue;
    }
    if (!SIGN_OFF.test(s) && (isFragment(s) || isAnnouncement(s, i, statements.length) || (out.length > 0 && pointsBack(s))) && statements.length > 1) {
      if (out.length > 0) out[out.length - 1] = `${out[out.length - 1]} ${s}`;
      else pendingHead = pendingHead ? `${pendingHead} ${s}` : s;
      continue;
    }
    out.push(pendingHead ? `${pendingHead} ${s}` : s);
    pendingHead = null;
  }
  if (pendingHead) out.push(pendingHead);
  return out;
}

const MONTHS_DAYS = /^(?:January|February|March|April|May|June|July|August|September|October|November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Christmas|Easter)$/;

/**
 * A capitalized word opening a sentence is a name when a verb follows it ("Miso turned out"), not "Heads
 * up", and when it does not look like a plural ("Bloods can go to every 8 weeks now", "Meetings are
 * monthly": an -s after a consonant; "James", "Chris", "Marcus" keep theirs). A name seen mid-sentence is
 * one wherever it stands (namesUsedIn).
 */
function opensAsName(word: string, next: string | undefined): boolean {
  return !STOPWORDS.has(word.toLowerCase()) && !/(?:ing|ed|ly)$/.test(word) && !/[bcdfghjklmnpqrtvwxz]s$/.test(word) && FINITE_VERB.test(next ?? '');
}

/** Capitalized words in the middle of sentences: the names a conversation uses (people, pets, places). */
export function namesUsedIn(texts: string[]): Set<string> {
  const names = new Set<string>();
  for (const text of texts) {
    for (const sentence of text.split(/[.!?:]\s+|\n+/)) {
      const tokens = sentence.trim().split(/\s+/).map((w) => w.replace(/^[^\p{L}]+|[^\p{L}]+$/gu, '').replace(/'s$/, ''));
      for (let i = 0; i < tokens.length; i++) {
        const t = tokens[i];
        if (!/^\p{Lu}\p{Ll}+$/u.test(t) || MONTHS_DAYS.test(t)) continue;
        // A sentence's first word is capitalized anyway: a name only when a verb follows it ("Miso turned out").
        if (i === 0 && !opensAsName(t, tokens[1])) continue;
        names.add(t);
      }
    }
  }
  return names;
}

/**
 * The text with a sentence's capitalized first word in small letters when it is no name: "Fair. Heads up,
 * I might miss April", "I got the job! Starting in March" (a name opening a sentence has a verb after it:
 * "Berlin is lovely", as namesUsedIn reads names). So "heads" and "starting" are not taken for values.
 */
export function lowerSentenceOpeners(text: string): string {
  return text.replace(/([.!?…—–]\s+["'(]?)(\p{Lu}\p{Ll}+)(\s+(\S+))?/gu, (all, lead: string, word: string, rest: string | undefined, next: string | undefined) => {
    return opensAsName(word, next) || MONTHS_DAYS.test(word) ? all : `${lead}${word.toLowerCase()}${rest ?? ''}`;
  });
}

/**
 * The person (or pet) a statement is about when a name opens it: "Miso turned out …", "My sister Dae
 * moved …", "Omar got …". `names` are the names the conversation uses.
 */
export function openingName(statement: string, names: ReadonlySet<string>): string | null {
  const m = /^(?:(?:my|our|his|her|their)\s+(?:\p{Ll}+\s+){0,2})?(\p{Lu}\p{Ll}+)(?:'s)?\b/u.exec(withoutReaction(statement.trim()));
  if (!m || !names.has(m[1])) return null;
  return m[1];
}

/**
 * The one person a statement introduces by their relation to someone ("I should let you know that my
 * partner, Tomás Reyes, would like to move in", "we had dinner with my cousin Ana"): whom a "he" or "she"
 * opening the next statement is about ("He is a staff nurse at St Aldhelm's"). Null when it introduces
 * none, or more than one.
 */
export function introducedName(statement: string, names: ReadonlySet<string>): string | null {
  const found = new Set<string>();
  for (const m of statement.matchAll(/\b(?:my|our|his|her|their)\s+(?:\p{Ll}+\s+){0,1}\p{Ll}+,?\s+(\p{Lu}\p{Ll}+)\b/gu)) if (names.has(m[1])) found.add(m[1]);
  return found.size === 1 ? [...found][0] : null;
}

/**
 * A reaction or interjection a chat turn opens with before its news: "nice. oh my sister Anjali just got
 * engaged", "lol ok. Anjali moved the wedding", "wow! btw Omar got the job". One or two words closed by
 * punctuation, then interjections.
 */
const REACTION_OPENER = /^(?:(?!(?:dr|mr|mrs|ms|prof|st|mt)\.)[\p{L}']+(?:\s+[\p{L}']+)?[.!,]+\s+)?(?:(?:oh|ah|btw|fyi|so|also|and|anyway|well|ok|okay|lol|omg|haha|hey|guess what)[,!.]?\s+)*/iu;

function withoutReaction(statement: string): string {
  return statement.slice(REACTION_OPENER.exec(statement)?.[0].length ?? 0);
}

const PRONOUN_OPENER = /^(she|he)(?:'s|'d|'ll)?\b/i;

/** "She lives with my sister" → "She (Miso) lives with my sister" when `antecedent` is known. */
export function resolvePronoun(statement: string, antecedent: string | null): string {
  if (!antecedent) return statement;
  const m = PRONOUN_OPENER.exec(statement);
  if (!m) return statement;
  return `${statement.slice(0, m[0].length)} (${antecedent})${statement.slice(m[0].length)}`;
}

/** An assistant's politeness before the substance: "Done,", "Sure!", "Happy to help, Rui!", "Hello Fatima,". */
const ASSISTANT_OPENER = /^(?:(?:sure|okay|ok|noted|got it|understood|will do|absolutely|of course|certainly|no problem|perfect|great|excellent|wonderful|awesome|fantastic|alright|all right|thanks|thank you|you're welcome|my pleasure|happy to help|glad to help|happy to|glad to hear(?: that)?|great question|love (?:that|this)(?: goal| idea| plan)?|sounds (?:good|great)|(?:i'?m |i am )?(?:so |very |really |truly )?sorry(?: to hear(?: that)?)?|oh no|congrats|congratulations|welcome(?: back)?|hi|hello|hey|dear|good (?:morning|afternoon|evening)|that'?s (?:great|fantastic|wonderful|amazing|awesome|good) (?:news|to hear)?)(?:,?\s+\p{Lu}\p{Ll}+)?[,.!:;—-]*\s*)+/iu;
/** What follows a politeness when it is still politeness: "for contacting Nordwind Air support", "to meet you". */
const PLEASANTRY_REST = /^(?:for (?:contacting|reaching out|getting in touch|sharing|your (?:patience|message|question|understanding)|waiting|letting (?:me|us) know|the update|asking|being)|to (?:meet|hear|help|see)|about (?:that|this|the (?:trouble|delay|wait|inconvenience))|on (?:the|your) (?:new )?\p{L}+[!.]?$|that'?s (?:a lot|hard|tough|great|fantastic|wonderful|amazing))/iu;
/** An assistant's own work, told as done or committed ("I've added", "is booked", "I'll move"): the world changed. */
const ACTION = /\b(?:booked|added|changed|moved|cancel(?:l)?ed|removed|saved|scheduled|rescheduled|requested|ordered|sent|updated|renewed|switched|upgraded|downgraded|registered|confirmed|set up|created|refunded|credited|charged|reserved|paid|issued|applied|activated|deactivated|replaced|noted down|reminder|will (?:arrive|ship|be)|ships?|arrives?|expires?|due)\b/i;
/** The assistant speaks of the user: "your plan", "you're on", "you have". */
const ABOUT_USER = /\b(?:your|you're|you are|you have|you've|you'll|you were|you need|you can't|you should)\b/i;
/** The assistant narrating its own work or asking to wait. */
const SELF_NARRATION = /^(?:(?:i'?m|i am|we'?re|we are)\s+(?:now\s+)?(?:looking|checking|searching|pulling|working|on it|going to|looking into)|let me\b|let's see\b|one (?:moment|sec(?:ond)?)\b|just a (?:moment|sec(?:ond)?)\b|give me a (?:moment|sec(?:ond)?)\b|(?:looking|checking|searching)\b|i'?ll (?:look|check|search|find|get back|see)\b|anything else\b|is there anything else\b|let me know\b|feel free\b|hope (?:this|that) helps\b|have a (?:great|good|nice|lovely)\b|enjoy\b)/i;
/** The assistant asking to be told ("Tell me about your current routine.", "Share your usual training week"): it asks, it states nothing. */
const ASKS_TO_BE_TOLD = /^(?:(?:please|now|so|first|next)\s*,?\s+)?(?:tell me|share|send me|walk me through|describe|fill me in)\b(?![^.!?]*\b(?:booked|added|moved|cancel(?:l)?ed|changed|updated)\b)/i;
/** An assistant's wish or exclamation: "What a…", "How exciting", "I hope…", "Happy holidays", "Good luck". */
const REACTION = /^(?:what an? |how (?:exciting|lovely|wonderful|fun|nice|great|amazing|fantastic|special|thoughtful|sweet)\b|i (?:really |do )?hope\b|hope (?:you|your|the|it|she|he|they|that)\b|happy (?:holidays|birthday|anniversary|new year|travels|easter|christmas|hanukkah|diwali|eid)\b|merry\b|good luck\b|best of luck\b|fingers crossed\b|safe travels\b|wishing\b|best wishes\b)/i;

/** Echoes of what the user just said ("the plan follows your new days"): a remark on the user's words with no value of its own. */
const ECHO = /^(?:the plan (?:follows|reflects|is updated|has been updated)|i'?ve noted|i have noted|that'?s noted|i'?ll remember|i will remember|i'?ll keep (?:that|it) in mind)\b/i;

/** How to do something ("To restart the build server, first drain the queue, then reboot"): an agent's knowledge. */
const PROCEDURE = /^to\s+\p{L}+\b[^,]{0,80},|\bfirst\b.+\bthen\b/iu;

/**
 * Why an assistant's statement is not memory, or null when it states something about the user or the
 * world: a number, an action done or committed, the user's own things ("your flight"), or something
 * named, or a procedure ("To restart the build server, first drain the queue"). Advice and
 * encouragement ("an internal move is a low-risk way to get experience") carry none of these and stay
 * in L0. `people` are the names of the conversation (vocatives such as "Rui").
 */
export function assistantChatter(statement: string, people: ReadonlySet<string> = new Set()): string | null {
  if (PROCEDURE.test(statement)) return null;
  const vocative = /^\p{Lu}\p{Ll}+,\s+/u.exec(statement);
  const bare = vocative && people.has(vocative[0].replace(/,\s+$/, '')) ? statement.slice(vocative[0].length) : statement;
  const rest = bare.replace(ASSISTANT_OPENER, '').trim();
  if (rest === '' || /^[^\p{L}\p{N}]*$/u.test(rest) || PLEASANTRY_REST.test(rest)) return 'an assistant pleasantry';
  if (SELF_NARRATION.test(rest)) return 'an assistant describing its own work';
  if (ASKS_TO_BE_TOLD.test(rest) && !/\d/.test(rest)) return 'an assistant asking to be told';
  // a wish or an exclamation over what the user told ("What a big week for your family, congratulations
  // to Ingrid on signing the lease!", "I hope Margaret's operation goes smoothly"): the user's own
  // statement holds the fact; the assistant's echo only adds a rival to it in search
  if (REACTION.test(rest) && !/\d/.test(rest) && !ACTION.test(rest)) return 'an assistant reaction';
  if (/\d/.test(rest)) return null;
  if (ECHO.test(rest)) return 'an assistant acknowledgement';
  if (ACTION.test(rest) || ABOUT_USER.test(rest)) return null;
  const named = capitalizedWords(rest, people, true);
  if (named.length > 0 && rest.split(/\s+/).length >= 4) return null;
  return 'an assistant remark without information about the user';
}

/**
 * A short reply with the question it answers beside it ("8.1% (asked: What was your HbA1c at
 * diagnosis?)"): the question gives the reply its topic, for search and for updates.
 */
export function withQuestion(reply: string, question: string): string {
  return `${reply} (asked: ${question})`;
}

/**
 * A turn that can only go on with its speaker's turn before: a fragment ("sunday 8pm KST", "6 weeks from
 * june") that opens with no capitalized word but a day or a month ("Sven spends the weekends sailing",
 * "Rosa's job: data engineer" have their own subject, whatever verb the fragment test misses).
 */
export function continuesTurn(statement: string): boolean {
  if (!isFragment(statement)) return false;
  const first = statement.trim().split(/\s+/)[0]?.replace(/[^\p{L}]+$/u, '') ?? '';
  return !/^\p{Lu}/u.test(first) || MONTHS_DAYS.test(first);
}

/**
 * A short turn with the statement its speaker's turn just before ended with ("sunday 8pm KST (after: also
 * schedule change, we release on sundays now)"): chats send one thought in several messages.
 */
export function withStatementBefore(turn: string, before: string): string {
  return `${turn} (after: ${before})`;
}

/** The reply alone, without the question (or the statement) put beside it: the values it gives are its own. */
export function withoutQuestion(text: string): string {
  const at = Math.max(text.lastIndexOf(' (asked: '), text.lastIndexOf(' (after: '));
  return at >= 0 && text.endsWith(')') ? text.slice(0, at) : text;
}
