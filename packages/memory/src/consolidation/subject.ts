/**
 * Step 8: subject and attribute of a fact, so that a later statement with a new value for the same pair is
 * recognized as a correction. Patterns are first person ("my X is Y", "I live in Y", "I work at Y",
 * "I'm N years old"), third person for birthdays ("X's birthday is Y"), and "actually, it's Y" which
 * refers to the speaker's previous subject/attribute (passed in as `previous`).
 */
import { attributeLabel } from '../text';

export interface SubjectAttribute {
  /** Normalized: the speaker's lowercased name, `user` for the memory owner, or the named person. */
  subject: string;
  /** Normalized attribute: `residence`, `employer`, `occupation`, `age`, `birthday`, `name`, or the X of "my X". */
  attribute: string;
  /** Normalized value (lowercase, trimmed of punctuation and trailing filler). */
  value: string;
}

const VALUE = "([^.!?;,]{1,80}?)";
const END = '\\s*(?:[.!?;,]|\\s+(?:now|these days|since\\b.*|for\\s+(?:a|\\d+)\\b.*|and\\b.*|but\\b.*|because\\b.*)|$)';
const FIRST_PERSON: { re: RegExp; attribute: string | ((m: RegExpExecArray) => string) }[] = [
  { re: new RegExp(`\\bI(?:'m| am)\\s+(\\d{1,3})(?:\\s+years?\\s+old)?(?=\\s*(?:[.!?;,]|$|\\s+(?:now|today|and)\\b))`, 'i'), attribute: 'age' },
  { re: new RegExp(`\\bI(?:'ve| have)?\\s*(?:just\\s+|recently\\s+|finally\\s+)?(?:moved|relocated)\\s+(?:to|into)\\s+${VALUE}${END}`, 'i'), attribute: 'residence' },
  { re: new RegExp(`\\bI(?:'m| am)?\\s*(?:now\\s+|currently\\s+|still\\s+)?(?:live|living|reside|residing|based)\\s+(?:in|at)\\s+${VALUE}${END}`, 'i'), attribute: 'residence' },
  { re: new RegExp(`\\bI(?:'m| am)?\\s*(?:now\\s+|currently\\s+|still\\s+)?(?:work|working)\\s+as\\s+(?:an?\\s+)?${VALUE}${END}`, 'i'), attribute: 'occupation' },
  { re: new RegExp(`\\bI(?:'m| am)?\\s*(?:now\\s+|currently\\s+|still\\s+)?(?:work|working)\\s+(?:at|for)\\s+${VALUE}${END}`, 'i'), attribute: 'employer' },
  { re: new RegExp(`\\bmy\\s+name\\s+is\\s+${VALUE}${END}`, 'i'), attribute: 'name' },
  { re: /\bcall\s+me\s+([\p{Lu}][\p{L}'-]+)/u, attribute: 'name' },
  { re: new RegExp(`\\bmy\\s+(?:birthday|date of birth)\\s+is\\s+(?:on\\s+)?${VALUE}${END}`, 'i'), attribute: 'birthday' },
  // "my X is Y" only when "my X" opens the clause: in "diversity in my art is important" the subject is not "my art".
  { re: new RegExp(`^(?:(?:and|so|but|well|oh|also|btw|by the way|ok|okay|yes|yeah|no|anyway)[,]?\\s+)*my\\s+((?:new\\s+|current\\s+|updated\\s+|latest\\s+)?[\\p{L}'-]+(?:\\s+[\\p{L}'-]+){0,3}?)\\s+(?:is|'s)\\s+(?!(?:a|an|the|so|very|really|too|not|also|just|still|great|good|bad|nice|fine|awesome|amazing|about|important|like|more|less|getting|going|pretty|quite|kind|sort|always|never|being|such|one|something|all|what|how|why|that|because)\\b)${VALUE}${END}`, 'iu'), attribute: (m) => normalizeAttribute(m[1]) },
];
const THIRD_PERSON_BIRTHDAY = new RegExp(`\\b([\\p{Lu}][\\p{L}'-]+(?:\\s+[\\p{Lu}][\\p{L}'-]+)?)'s\\s+birthday\\s+is\\s+(?:on\\s+)?${VALUE}${END}`, 'u');
/**
 * A named person's residence, occupation or employer, stated in the third person ("Dylan lives in
 * Lisbon", "Actually, Rosa now lives in Ghent", "Felix moved to Quito", "Ravi works as a vet"): the
 * subject is the person, so a later statement about them corrects it like a first-person one does. The
 * name opens the clause (after an opener such as "actually"), so "my friend Sam lives in …" is not read.
 */
const NAMED = "(?:^|[.!?;]\\s+)(?:(?:[Aa]ctually|[Cc]orrection|[Aa]lso|[Ss]o|[Aa]nd|[Nn]ow|[Bb]tw|[Oo]h)[,:]?\\s+)*([\\p{Lu}][\\p{L}'-]+)\\s+(?:(?:now|currently|still|just|recently|finally|has|has\\s+just)\\s+)*";
const THIRD_PERSON: { re: RegExp; attribute: string }[] = [
  { re: new RegExp(`${NAMED}(?:lives|resides|is\\s+based|is\\s+living)\\s+(?:in|at)\\s+${VALUE}${END}`, 'u'), attribute: 'residence' },
  { re: new RegExp(`${NAMED}(?:moved|relocated)\\s+(?:to|into)\\s+${VALUE}${END}`, 'u'), attribute: 'residence' },
  { re: new RegExp(`${NAMED}(?:an?\\s+)?(?:apartment|flat|house|home)\\s+in\\s+${VALUE}${END}`, 'u'), attribute: 'residence' },
  { re: new RegExp(`${NAMED}(?:works|is\\s+working)\\s+as\\s+(?:an?\\s+)?${VALUE}${END}`, 'u'), attribute: 'occupation' },
  { re: new RegExp(`${NAMED}(?:works|is\\s+working)\\s+(?:at|for)\\s+${VALUE}${END}`, 'u'), attribute: 'employer' },
];
/** Capitalized words that open a clause without naming a person. */
const NOT_A_NAME = /^(?:I|My|Your|His|Her|Our|Their|The|This|That|These|Those|It|He|She|We|They|You|There|Here|Everyone|Someone|Nobody|Everybody|Somebody|One|Who|What|Where|When|Why|How)$/;
const ACTUALLY = new RegExp(`^\\s*(?:actually|correction|sorry|oops|wait|no)[,:]?\\s*(?:I\\s+meant\\s+|it(?:'s| is)\\s+(?:actually\\s+)?|make\\s+that\\s+)?${VALUE}\\s*(?:[.!?]|$)`, 'i');
/** "Sorry, it's been a long day" is not a correction: the softer openers need "I meant"/"make that"/"it's actually". */
const ACTUALLY_STRICT = /^\s*(?:(?:actually|correction)[,:]?\s*(?:I\s+meant|it(?:'s| is)|make\s+that)|(?:sorry|oops|wait|no)[,:]?\s*(?:I\s+meant|make\s+that|it(?:'s| is)\s+actually))\b/i;

/** True when the statement is a bare back-reference correction ("Actually, it's Denver"): it names no attribute itself. */
export function isBackReference(text: string): boolean {
  return ACTUALLY_STRICT.test(text);
}

/** "… (residence: denver)": the annotation a back-reference correction gets, so its content says what changed. */
export const FACT_ANNOTATION = /\(([a-z][a-z '-]{0,40}): ([^()]{1,80})\)\s*$/;

/** The attribute a stored unit carries for "my X": the text toolkit's vocabulary (text/attributes.ts). */
export const normalizeAttribute = attributeLabel;

/** A time phrase at the end of a value is when, not what: "boston last month" → "boston". */
const TRAILING_TIME = /\s+(?:yesterday|today|tonight|tomorrow|recently|lately|(?:last|next|this)\s+\w+|(?:\w+|\d+)\s+(?:days?|weeks?|months?|years?)\s+ago|in\s+\d{4}|(?:on|in|since)\s+(?:\w+\s+\d{1,2}|\d{1,2}\s+\w+|\d{4}-\d{2}-\d{2})(?:,?\s+\d{4})?)$/;

export function normalizeValue(raw: string): string {
  let v = raw.toLowerCase().replace(/["'`]/g, '').replace(/\s*\([^)]*\)\s*$/, '').replace(/[.!?,;:]+$/, '').replace(/\s+/g, ' ').trim();
  for (let i = 0; i < 3 && TRAILING_TIME.test(v); i++) v = v.replace(TRAILING_TIME, '').trim();
  return v.replace(/^(?:the|a|an)\s+/, '').trim();
}

/**
 * `subject` is the normalized speaker (see speaker.normalizeSubject). `previous` is the same speaker's last
 * subject/attribute in this conversation, for "actually, it's Y". Returns null when no pattern applies.
 */
export function extractSubjectAttribute(text: string, subject: string, previous: SubjectAttribute | null = null): SubjectAttribute | null {
  if (/\?\s*$/.test(text)) return null; // a question states nothing
  const annotated = FACT_ANNOTATION.exec(text);
  if (annotated && ACTUALLY_STRICT.test(text)) return { subject: previous?.subject ?? subject, attribute: annotated[1], value: normalizeValue(annotated[2]) };
  if (previous && ACTUALLY_STRICT.test(text)) {
    const m = ACTUALLY.exec(text);
    if (m && m[1].trim().split(/\s+/).length <= 5) return { subject: previous.subject, attribute: previous.attribute, value: normalizeValue(m[1]) };
  }
  const b = THIRD_PERSON_BIRTHDAY.exec(text);
  if (b && !/^(?:My|Your|His|Her|Our|Their)$/.test(b[1])) {
    return { subject: b[1].toLowerCase(), attribute: 'birthday', value: normalizeValue(b[2]) };
  }
  for (const p of FIRST_PERSON) {
    const m = p.re.exec(text);
    if (!m) continue;
    const attribute = typeof p.attribute === 'string' ? p.attribute : p.attribute(m);
    const value = normalizeValue(m[m.length - 1]);
    if (value === '' || attribute === '') continue;
    if (/^(?:own|first|last|favorite|favourite|best|only|whole|old)$/.test(attribute)) continue;
    return { subject, attribute, value };
  }
  for (const p of THIRD_PERSON) {
    const m = p.re.exec(text);
    if (!m || NOT_A_NAME.test(m[1])) continue;
    const value = normalizeValue(m[2]);
    if (value !== '') return { subject: m[1].toLowerCase(), attribute: p.attribute, value };
  }
  return null;
}
