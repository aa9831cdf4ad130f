/**
 * Step 3: atomic statements. Sentence splitting that leaves abbreviations, decimals, URLs and emails whole,
 * then a conservative clause split: only at a coordinating conjunction (or `;`) whose right side starts
 * with its own personal subject, so both halves are independent clauses that keep their subject.
 */

import { facetsOf } from '../text';

/** Tokens ending in a period that do not end a sentence (lowercase, without the final period). */
const ABBREVIATIONS = new Set([
  'mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'mt', 'ft', 'vs', 'etc', 'e.g', 'i.e', 'cf', 'approx', 'no',
  'inc', 'ltd', 'co', 'corp', 'dept', 'est', 'fig', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept',
  'oct', 'nov', 'dec', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun', 'u.s', 'u.k', 'a.m', 'p.m', 'ave', 'rd', 'blvd',
]);
/** Abbreviations that never end a sentence, whatever follows (titles and "for example"). */
const NEVER_FINAL = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'st', 'mt', 'e.g', 'i.e', 'cf', 'vs', 'no']);

/** The words that open a letter's sign-off ("Kind regards,", "Best wishes,", "Thanks,"). */
export const SIGN_OFF_WORDS = String.raw`(?:kind|best|warm|warmest|many)\s+(?:regards|thanks|wishes)|regards|best wishes|thanks(?: again)?|thank you|cheers|sincerely|yours (?:sincerely|faithfully|truly)|all the best|best|love`;

/**
 * A sign-off and the few short lines under it ("Kind regards,\nGerald Ashworth\n07700 900112") as one line:
 * each line alone is a fragment, and fragments join the sentence before them (discourse.ts), so every
 * letter's last sentence carried the signature.
 */
const SIGN_OFF_BLOCK = new RegExp(String.raw`\n[ \t]*(${SIGN_OFF_WORDS})[ \t]*,?[ \t]*((?:\n[ \t]*[^\n]{1,60}){1,4})\s*$`, 'i');

function withSignOffOnOneLine(text: string): string {
  return text.replace(SIGN_OFF_BLOCK, (_m, words: string, lines: string) => `\n${words}, ${lines.trim().split(/\s*\n\s*/).join(' ')}`);
}

/** A list item's marker: a bullet, or a number with "." or ")" ("- Bettina is our new treasurer", "2) …"). */
export const LIST_MARKER = /^\s*(?:[-*•]|\d{1,2}[.)])\s+(?=\S)/;

export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const line of withSignOffOnOneLine(text).split(/\n+/).map((l) => l.replace(LIST_MARKER, ''))) {
    let start = 0;
    // A candidate boundary: terminal punctuation (with closing quotes/brackets), then whitespace.
    const re = /[.!?…]+["')\]]*(\s+)/g;
    let m: RegExpExecArray | null;
    while ((m = re.exec(line)) !== null) {
      const end = m.index + m[0].length - m[1].length;
      const next = line.slice(m.index + m[0].length);
      if (!isBoundary(line.slice(start, end), next)) continue;
      push(out, line.slice(start, end));
      start = m.index + m[0].length;
    }
    push(out, line.slice(start));
  }
  return out;
}

function isBoundary(sentence: string, next: string): boolean {
  // the next sentence starts with a capital or digit; in a chat also with a small letter after a full
  // stop when it opens a clause of its own ("i quit greggs. i start at the cinema monday"), the sentence
  // before being one of its own (three words or more) that ends no abbreviation. A small-letter sentence
  // without a subject ("… the course. starts 1 september, based at the hub"; "airpods or money. money is
  // good") goes on with the one before.
  if (!/^["'([]?[\p{Lu}\p{N}]/u.test(next)) {
    // "haha yes! good eye": in a chat "!" and "?" end a sentence whatever case follows, but a statement's
    // tail without a subject of its own goes on with it ("i got a job offer in Toronto!! moving in april")
    if (/[!?]["')\]]*$/.test(sentence)) {
      return !(/!["')\]]*$/.test(sentence) && wordCount(sentence) >= 4 && !LOWERCASE_CLAUSE.test(next) && !LOWERCASE_QUESTION.test(next));
    }
    if (!/[^.]\.$/.test(sentence) || endsWithAbbreviation(sentence)) return false;
    // "… doing logistics planning. you?", "… on May 17. can you build me a plan?": a question in small
    // letters is a sentence of its own, so the statement before it is not taken for part of a question.
    if (LOWERCASE_QUESTION.test(next) && /^[^.!?]*\?/.test(next)) return true;
    return LOWERCASE_CLAUSE.test(next) && wordCount(sentence) >= 3;
  }
  if (!/\.["')\]]*$/.test(sentence)) return true; // ! ? … always end a sentence before a capital
  const lastToken = (sentence.match(/(\S+)$/)?.[1] ?? '').replace(/["')\]]+$/, '').replace(/\.+$/, '').toLowerCase();
  const bare = lastToken.replace(/^[("'[]+/, '');
  if (NEVER_FINAL.has(bare)) return false;
  // "at 7 a.m. Then …" ends; "on Jan. 5" does not (the digit check above already kept it whole).
  if (ABBREVIATIONS.has(bare)) return /^["'([]?\p{Lu}/u.test(next);
  if (/^\p{Lu}$/u.test(bare)) return false; // an initial: "J. R. R. Tolkien"
  return true;
}

/**
 * A sentence a chat writes in small letters that opens with its own subject ("i start monday", "we moved"),
 * also after a connective that adds news ("… at the bakery. and my brother moved to Leeds", "also we sold
 * the car", "btw she's at Kew now"): the news is a statement of its own, not a tail of the one before.
 */
const LOWERCASE_CLAUSE = /^(?:(?:and|also|plus|btw|oh and|and also)\s+)?(?:i|i'm|i've|i'll|i'd|we|we're|we've|he|he's|she|she's|they|they're|my \p{Ll}+)\s/u;

/** A question opened in small letters: an auxiliary or a question word, or a question back ("you?", "wbu?"). */
const LOWERCASE_QUESTION = /^(?:can|could|would|will|should|shall|is|isn't|are|aren't|was|were|do|does|did|have|has|what|what's|whats|where|when|who|how|how's|why|which|any|anything|you|u|and (?:you|u)|wbu|hbu)\b/u;

/** Does the sentence end with an abbreviation or an initial ("Dr.", "etc.", "J.")? */
function endsWithAbbreviation(sentence: string): boolean {
  const bare = (sentence.match(/(\S+)$/)?.[1] ?? '').replace(/\.+$/, '').replace(/^[("'[]+/, '').toLowerCase();
  return ABBREVIATIONS.has(bare) || /^\p{L}$/u.test(bare) || /\.\p{L}$/u.test(bare);
}

function push(out: string[], s: string): void {
  const t = s.trim();
  if (t !== '') out.push(t);
}

/** Personal subjects that open an independent clause. "it"/"that" are left out on purpose: they point back. */
const CLAUSE_SUBJECT = /^(?:I|we|he|she|they|you|my\s+\p{L}+|our\s+\p{L}+|his\s+\p{L}+|her\s+\p{L}+|their\s+\p{L}+)\b(?!\s+(?:and|or)\b)/u;
const CONJUNCTION = /(?:,\s*(?:and|but|so|yet)?|;\s*(?:and|but|so)?|\s+and)\s+/g;
/** "I teach piano in Ghent and I cycle everywhere": a bare "and" joins two clauses of the speaker's own. */
const OWN_CLAUSE = /^(?:I|[Ww]e)\b(?:'\w+)?\s+\S+/u;
/** A left side opened by one of these is a subordinate clause ("When I got home, I cooked"): never cut after it. */
const SUBORDINATE = /^(?:when|whenever|if|because|since|after|before|while|although|though|as|once|until|unless|whether|even if|even though|now that|so that)\b/i;
/** A comma splice ("I sold the bike, I take the train now") is cut only before "I" or "we" opening a clause of its own. */
const SPLICE_SUBJECT = /^(?:I|we)\b(?!\s+(?:and|or)\b)(?!\s+(?:mean|guess|think|suppose|hope|know)\b)/u;

/** Splits one sentence into independent clauses, conservatively; each part keeps its own subject. */
export function splitClauses(sentence: string, minWords = 3): string[] {
  const parts: string[] = [];
  let start = 0;
  let m: RegExpExecArray | null;
  CONJUNCTION.lastIndex = 0;
  while ((m = CONJUNCTION.exec(sentence)) !== null) {
    const left = sentence.slice(start, m.index).trim();
    const right = sentence.slice(m.index + m[0].length);
    if (!CLAUSE_SUBJECT.test(right)) continue;
    const bareComma = /^,\s*$/.test(m[0]);
    if (bareComma && (!SPLICE_SUBJECT.test(right) || SUBORDINATE.test(left) || oneKindOfFact(left, firstClause(right)))) continue;
    // without a comma, only "I … and I …" / "we … and we …" is cut: "Marco and I broke up" is one subject
    const bareAnd = /^\s+and\s+$/.test(m[0]);
    if (bareAnd && (!SPLICE_SUBJECT.test(right) || !OWN_CLAUSE.test(sentence.slice(start).trim()) || wordCount(left) < 4)) continue;
    if (wordCount(left) < minWords || wordCount(firstClause(right)) < rightMinWords(firstClause(right), minWords)) continue;
    if (!hasVerbAfterSubject(left)) continue;
    parts.push(left);
    start = m.index + m[0].length;
  }
  if (parts.length === 0) return sentence.trim() === '' ? [] : [sentence.trim()];
  parts.push(sentence.slice(start).trim());
  return parts.filter((p) => p !== '').map(finishClause);
}

/**
 * Do both sides of a comma splice speak of one kind of fact ("I got the job at the Vienna opera, I start
 * in June as a lighting designer": one job)? Then they stay one statement, so a question about the job
 * finds both halves together; a splice of two kinds ("I sold the bike, I'm vegan now") is two facts.
 */
function oneKindOfFact(left: string, right: string): boolean {
  const l = facetsOf(left);
  for (const f of facetsOf(right)) if (l.has(f)) return true;
  return false;
}

/**
 * A subject and its verb in one word ("I'm", "we're", "she's") make a whole clause of two words: "I lift at
 * PureGym on Mondays, and I'm vegetarian" holds two facts, and the diet may change alone.
 */
function rightMinWords(right: string, minWords: number): number {
  return /^(?:I|we|he|she|they)['’](?:m|ve|re|s)\s+\p{L}/iu.test(right) ? Math.min(minWords, 2) : minWords;
}

function firstClause(s: string): string {
  const m = /,\s*(?:and|but|so|yet)\s|;/.exec(s);
  return m ? s.slice(0, m.index) : s;
}

/** Left side must itself be a clause: a subject somewhere before a word (a crude but safe check). */
function hasVerbAfterSubject(left: string): boolean {
  return /\b(?:I|we|he|she|they|you|it|\p{Lu}\p{Ll}+)\b\s*(?:'\w+\s+)?\S+/u.test(left);
}

/** The left half lost its sentence punctuation to the split; give it a period so it reads as a sentence. */
function finishClause(s: string): string {
  const t = s.replace(/[,;]\s*$/, '').trim();
  const first = t.charAt(0);
  const capital = /\p{Ll}/u.test(first) ? first.toUpperCase() + t.slice(1) : t;
  return /[.!?…"')\]]$/.test(capital) ? capital : `${capital}.`;
}

function wordCount(s: string): number {
  return s.split(/\s+/).filter((w) => /\p{L}|\p{N}/u.test(w)).length;
}

/** Sentences, then clauses. */
export function splitStatements(text: string): string[] {
  return splitSentences(text).flatMap((s) => splitClauses(s));
}
