/**
 * Step 6: keywords. RAKE (Rose et al., 2010): candidate phrases are the runs of words between stopwords and
 * punctuation; a word scores degree/frequency over those phrases; a phrase scores the sum of its words.
 * On top, named entities (capitalized runs and acronyms), numbers and dates are always kept first,
 * because those are what questions ask about. Light stemming (plural endings) makes "groups" match "group".
 * Deterministic: ties break by first position. Output is lowercase, at most `max` items.
 */
import { memoByText, stemPlural as stem, STOPWORDS } from '../text';

export interface KeywordOptions {
  max: number;
  /** Longest phrase kept whole (longer candidates contribute their best words instead). */
  maxPhraseWords: number;
}

export const DEFAULT_KEYWORD_OPTIONS: KeywordOptions = { max: 8, maxPhraseWords: 3 };

const MONTHS = 'january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec';
const DATE_PATTERNS = [
  /\b\d{4}-\d{2}-\d{2}\b/g,
  new RegExp(`\\b\\d{1,2}(?:st|nd|rd|th)?\\s+(?:${MONTHS})\\.?(?:,?\\s+\\d{4})?\\b`, 'gi'),
  new RegExp(`\\b(?:${MONTHS})\\.?\\s+\\d{1,2}(?:st|nd|rd|th)?(?:,?\\s+\\d{4})?\\b`, 'gi'),
];

interface Token { readonly text: string; readonly lower: string; readonly index: number; readonly sentenceStart: boolean; }

/**
 * A statement's tokens, kept per text (text/memo.ts): planning reads a statement's keywords and its named
 * entities (its importance) from the same text, each through these; shared, so read only.
 */
const tokenize: (text: string) => readonly Token[] = memoByText(tokenizeOf);

function tokenizeOf(text: string): readonly Token[] {
  const tokens: Token[] = [];
  const re = /[\p{L}\p{N}][\p{L}\p{N}'’\-_.]*[\p{L}\p{N}]|[\p{L}\p{N}]|([.!?;:,()"\n]+)/gu;
  let m: RegExpExecArray | null;
  let sentenceStart = true;
  while ((m = re.exec(text)) !== null) {
    if (m[1] !== undefined) {
      tokens.push({ text: m[0], lower: '|', index: m.index, sentenceStart: false });
      if (/[.!?:\n]/.test(m[1])) sentenceStart = true;
      continue;
    }
    const t = m[0].replace(/’/g, "'").replace(/\.+$/, '');
    tokens.push({ text: t, lower: t.toLowerCase(), index: m.index, sentenceStart });
    sentenceStart = false;
  }
  return tokens;
}

const isNumber = (t: string): boolean => /^\d[\d.,:]*$/.test(t);
const isAcronym = (t: string): boolean => /^\p{Lu}{2,}[\p{Lu}\d]*s?$/u.test(t);
const isCapitalized = (t: string): boolean => /^\p{Lu}\p{Ll}/u.test(t);

/** Capitalized runs not at a sentence start ("New York", "Door Dash"), and acronyms anywhere ("LGBTQ"). */
export function namedEntities(text: string): string[] {
  return entitiesOf(tokenize(text));
}

function entitiesOf(tokens: readonly Token[]): string[] {
  const out: string[] = [];
  let run: Token[] = [];
  const flush = (): void => {
    // A run that begins a sentence counts only if it is longer than one word or an acronym ("Paris is …" is lost; "I" never counts).
    if (run.length > 0) {
      const first = run[0];
      const words = run.map((t) => t.text);
      const keep = !first.sentenceStart || run.length > 1 || isAcronym(first.text);
      const trimmed = first.sentenceStart && run.length > 1 && STOPWORDS.has(first.lower) ? words.slice(1) : words;
      if (keep && !(trimmed.length === 1 && STOPWORDS.has(trimmed[0].toLowerCase()))) out.push(trimmed.join(' '));
    }
    run = [];
  };
  for (const t of tokens) {
    if (t.lower !== '|' && t.text !== 'I' && !/^I'/.test(t.text) && (isCapitalized(t.text) || isAcronym(t.text))) run.push(t);
    else flush();
  }
  flush();
  return dedupe(out.map((e) => e.toLowerCase()));
}

export function extractKeywords(input: string, options: KeywordOptions = DEFAULT_KEYWORD_OPTIONS, extra: string[] = []): string[] {
  // URLs and emails are references, not topics (their parts make junk keywords); the asset keeps them findable.
  const text = input.replace(/\bhttps?:\/\/\S+/g, ' ').replace(/\S+@\S+\.\w+/g, ' ');
  const picked: string[] = [];
  for (const e of extra) picked.push(e.toLowerCase());
  for (const p of DATE_PATTERNS) for (const m of text.matchAll(p)) picked.push(m[0].toLowerCase().replace(/\s+/g, ' '));
  // One tokenization serves the entities, the numbers and the phrases.
  const tokens = tokenize(text);
  const entities = entitiesOf(tokens);
  for (const e of entities) picked.push(e);
  for (const t of tokens) if (t.lower !== '|' && isNumber(t.text) && !picked.some((p) => p.includes(t.lower))) picked.push(t.lower);

  // RAKE over the remaining words; entity words delimit phrases too (they are already kept whole).
  const entityTokens = new Set(entities.flatMap((e) => e.split(' ')));
  const phrases: string[][] = [];
  let cur: string[] = [];
  for (const t of tokens) {
    const w = t.lower;
    if (w === '|' || STOPWORDS.has(w) || isNumber(w) || w.length < 2 || entityTokens.has(w)) {
      if (cur.length) phrases.push(cur);
      cur = [];
    } else cur.push(stem(w));
  }
  if (cur.length) phrases.push(cur);
  const freq = new Map<string, number>();
  const degree = new Map<string, number>();
  for (const ph of phrases) for (const w of ph) {
    freq.set(w, (freq.get(w) ?? 0) + 1);
    degree.set(w, (degree.get(w) ?? 0) + ph.length);
  }
  const wordScore = (w: string): number => (degree.get(w) ?? 0) / (freq.get(w) ?? 1);
  const candidates: { text: string; score: number; order: number }[] = [];
  phrases.forEach((ph, order) => {
    if (ph.length <= options.maxPhraseWords) {
      candidates.push({ text: ph.join(' '), score: ph.reduce((s, w) => s + wordScore(w), 0), order });
    } else {
      ph.forEach((w, i) => candidates.push({ text: w, score: wordScore(w), order: order + i / 100 }));
    }
  });
  candidates.sort((a, b) => b.score - a.score || a.order - b.order);
  const entityWords = new Set(picked.flatMap((p) => p.split(' ').map(stem)));
  for (const c of candidates) {
    // A phrase whose words are all already covered by an entity adds nothing ("caroline" after "caroline").
    if (c.text.split(' ').every((w) => entityWords.has(w))) continue;
    picked.push(c.text);
  }
  return dedupe(picked).slice(0, options.max);
}

function dedupe(xs: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const x of xs) {
    const k = x.trim();
    if (k === '' || seen.has(k)) continue;
    seen.add(k);
    out.push(k);
  }
  return out;
}
