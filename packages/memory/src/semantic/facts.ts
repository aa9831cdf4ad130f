/**
 * A small subject/attribute/value extractor for first-person statements ("my X is Y", "I live in Y",
 * "I moved to Y", "I no longer Z", "I now Y", "I like Y", "I work at Y"), used to decide whether an
 * instruction is a new value, a contradiction or a repeat of a stored memory.
 *
 * The attribute vocabulary is the text toolkit's (text/attributes.ts), the same consolidation tags stored
 * units with, so a fact is normalized the same way when stored and when corrected.
 *
 * Conventions: subject `user` is the speaker ("I", "my"); another subject is the lowercased noun or
 * name ("my sister's name is Anna" -> subject `sister`). Values are lowercased, without leading
 * articles or trailing "now"/"anymore". Single-valued attributes (residence, employer, name, …) have
 * one current value, so a new value makes the old one obsolete; multi-valued ones (`likes`) do not.
 */
import { canonicalAttribute, canonicalSubject, isSelf, squash, stem } from '../text';

export type Polarity = 'positive' | 'negative';

export interface Fact {
  subject: string;
  attribute: string;
  value: string;
  polarity: Polarity;
  /** False for attributes a person holds many values of at once (likes). */
  single_valued: boolean;
  /** The clause the fact was read from. */
  text: string;
}

const MULTI_VALUED = new Set(['likes']);

function normalizeValue(value: string): string {
  return squash(value.toLowerCase()
    .replace(/[.!?,;:]+$/g, '')
    .replace(/\s+(?:now|anymore|any more|these days|nowadays|at the moment|currently)$/g, '')
    .replace(/^(?:the|a|an|now|currently)\s+/g, ''))
    .replace(/[.!?,;:]+$/g, '');
}

function expandContractions(text: string): string {
  return text.replace(/[’‘]/g, '\'')
    .replace(/\bi'm\b/gi, 'i am').replace(/\bi've\b/gi, 'i have').replace(/\bi'd\b/gi, 'i would')
    .replace(/\bdon't\b/gi, 'do not').replace(/\bdoesn't\b/gi, 'does not').replace(/\bdidn't\b/gi, 'did not')
    .replace(/\bisn't\b/gi, 'is not').replace(/\baren't\b/gi, 'are not').replace(/\bcan't\b/gi, 'cannot');
}

/** Clauses: sentences, further split before "and/but I|my". */
function clauses(text: string): string[] {
  return expandContractions(text)
    .split(/[.!?;\n]+(?:\s|$)|,?\s+(?:and|but)\s+(?=(?:i|my)\b)/i)
    .map((c) => squash(c))
    .filter((c) => c.length > 0);
}

type Reading = Omit<Fact, 'text' | 'single_valued'>;

const FIRST_PERSON: { re: RegExp; read: (m: RegExpExecArray) => Reading }[] = [
  { re: /^i (?:am |have been )?(?:live|living|lived|reside|residing|stay|staying|based)(?: now)? (?:in|at|on) (.+)$/, read: (m) => ({ subject: 'user', attribute: 'residence', value: m[1], polarity: 'positive' }) },
  { re: /^i (?:have )?(?:just |recently |finally )?(?:moved|move|relocated|relocate) (?:to|into|in) (.+)$/, read: (m) => ({ subject: 'user', attribute: 'residence', value: m[1], polarity: 'positive' }) },
  { re: /^i (?:am )?(?:work|working) (?:at|for) (.+)$/, read: (m) => ({ subject: 'user', attribute: 'employer', value: m[1], polarity: 'positive' }) },
  { re: /^i (?:am )?(?:work|working) as (?:an? )?(.+)$/, read: (m) => ({ subject: 'user', attribute: 'occupation', value: m[1], polarity: 'positive' }) },
  { re: /^i (?:really )?(like|love|enjoy|adore|prefer|hate|dislike|detest)s? (.+)$/, read: (m) => ({ subject: 'user', attribute: 'likes', value: m[2], polarity: /hate|dislike|detest/.test(m[1]) ? 'negative' : 'positive' }) },
  { re: /^i am (\d{1,3})(?: years old| yo)?$/, read: (m) => ({ subject: 'user', attribute: 'age', value: m[1], polarity: 'positive' }) },
  { re: /^(?:please )?call me (.+)$/, read: (m) => ({ subject: 'user', attribute: 'name', value: m[1], polarity: 'positive' }) },
];

function readClause(raw: string): Reading | null {
  let c = raw.toLowerCase().replace(/^(?:(?:so|and|but|well|actually|also|just so you know|fyi|update|note|remember)\s*[,:]?\s+)+/, '');
  c = c.replace(/^(?:please\s+)?(?:remember|note)\s+that\s+/, '');
  let negative = false;
  // "I no longer Z", "I do not Z (anymore)", "I never Z", "I am not Z", "I now Z", "Now I Z"
  const neg = /^i (?:no longer|do not|did not|never|am not|am no longer|have not)\s+(.+)$/.exec(c);
  if (neg) {
    negative = true;
    c = `i ${neg[1]}`.replace(/^i (living|working|based)\b/, 'i am $1');
  }
  c = c.replace(/^now,?\s+i\s+/, 'i ').replace(/^i (?:now|currently|actually)\s+/, 'i ').replace(/^i am (?:now|currently|actually)\s+/, 'i am ');
  const flip = (r: Reading): Reading => (negative ? { ...r, polarity: r.polarity === 'positive' ? 'negative' : 'positive' } : r);
  for (const p of FIRST_PERSON) {
    const m = p.re.exec(c);
    if (m) return flip(p.read(m));
  }
  // my X('s Y) is|are Z  /  my X is no longer Z
  const my = /^my (?:(new|current|old|previous|former) )?([a-z][a-z -]{0,40}?)(?:'s ([a-z][a-z -]{0,30}?))? (?:is|are)( not| no longer)? (.+)$/.exec(c);
  if (my) {
    const [, , head, tail, not, value] = my;
    const subject = tail ? canonicalSubject(head) : 'user';
    const attribute = canonicalAttribute(tail ?? head);
    return flip({ subject, attribute, value, polarity: not ? 'negative' : 'positive' });
  }
  // third person: "my sister lives in Rome", "Anna moved to Oslo"
  const third = /^(?:my )?([a-z][a-z]{1,30}) (?:now )?(?:lives|is living|moved|has moved|relocated) (?:in|at|to) (.+)$/.exec(c);
  if (third && !isSelf(third[1])) return flip({ subject: third[1], attribute: 'residence', value: third[2], polarity: 'positive' });
  return null;
}

/** The facts stated in `text` (first person mostly), in order. */
export function extractFacts(text: string): Fact[] {
  const out: Fact[] = [];
  for (const clause of clauses(text)) {
    const r = readClause(clause);
    if (!r) continue;
    const value = normalizeValue(r.value);
    if (value === '') continue;
    out.push({ ...r, value, single_valued: !MULTI_VALUED.has(r.attribute), text: clause });
  }
  return out;
}

/** Do two normalized values name the same thing ("berlin" vs "berlin, germany": yes)? */
export function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const ta = a.split(/[\s,]+/).filter(Boolean).map(stem);
  const tb = b.split(/[\s,]+/).filter(Boolean).map(stem);
  if (ta.length === 0 || tb.length === 0) return false;
  const [short, long] = ta.length <= tb.length ? [ta, new Set(tb)] : [tb, new Set(ta)];
  return short.every((t) => long.has(t));
}
