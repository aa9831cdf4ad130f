/**
 * The tokenizer behind the text index: Unicode words and numbers, lowercased, English stopwords removed,
 * light suffix stemming. CJK scripts have no spaces between words, so their characters become
 * single-character tokens (a unigram index still finds them; a whole run would only match itself).
 *
 * Pure functions, no state: the same text always gives the same tokens, on every replica.
 */

/** Common English function words. They carry little evidence and dominate postings lists. */
const STOPWORDS = new Set(
  (
    'a about above after again against all am an and any are aren\'t as at be because been before being below ' +
    'between both but by can can\'t cannot could couldn\'t did didn\'t do does doesn\'t doing don\'t down during ' +
    'each few for from further had hadn\'t has hasn\'t have haven\'t having he he\'d he\'ll he\'s her here here\'s ' +
    'hers herself him himself his how how\'s i i\'d i\'ll i\'m i\'ve if in into is isn\'t it it\'s its itself let\'s ' +
    'me more most mustn\'t my myself no nor not of off on once only or other ought our ours ourselves out over own ' +
    'same shan\'t she she\'d she\'ll she\'s should shouldn\'t so some such than that that\'s the their theirs them ' +
    'themselves then there there\'s these they they\'d they\'ll they\'re they\'ve this those through to too under ' +
    'until up very was wasn\'t we we\'d we\'ll we\'re we\'ve were weren\'t what what\'s when when\'s where where\'s ' +
    'which while who who\'s whom why why\'s will with won\'t would wouldn\'t you you\'d you\'ll you\'re you\'ve your ' +
    'yours yourself yourselves also just yeah yes oh hey hi really got get gets getting'
  ).split(' '),
);

/** Letters/marks/digits runs, with inner apostrophes (don't, Caroline's) and inner decimal points (3.5). */
const WORD_RE = /[\p{L}\p{M}\p{N}]+(?:['.,][\p{L}\p{M}\p{N}]+)*/gu;
/** Scripts written without spaces between words. */
const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;
const VOWEL_RE = /[aeiouy]/;

export interface TokenizerOptions {
  /** Remove English stopwords (default true). */
  stopwords?: boolean;
  /** Apply the light English stemmer (default true). */
  stem?: boolean;
}

/**
 * Irregular past tenses and participles, by their base form: a question asks "Where did Jamal grow up?" or
 * "When did they meet?" and a chat tells "I grew up in Bristol", "we met at uni"; no suffix rule joins them.
 * Forms that are also common words of their own are left out: left (a direction), rose, sat (Saturday),
 * bit (a bit), lay, fell, wound, saw, shot, lit, felt, found (to found), ground, bore; so are did and done,
 * whose base is a stopword.
 */
export const IRREGULAR_PAST: ReadonlyMap<string, string> = new Map<string, string>(Object.entries({
  ate: 'eat', eaten: 'eat', began: 'begin', begun: 'begin', bought: 'buy', brought: 'bring', built: 'build',
  broke: 'break', broken: 'break', came: 'come', caught: 'catch', chose: 'choose', chosen: 'choose', drank: 'drink', drunk: 'drink', drove: 'drive', driven: 'drive', flew: 'fly', flown: 'fly',
  forgot: 'forget', forgotten: 'forget', froze: 'freeze', frozen: 'freeze', gave: 'give', given: 'give',
  went: 'go', gone: 'go', grew: 'grow', grown: 'grow', heard: 'hear', held: 'hold', hid: 'hide', hidden: 'hide',
  kept: 'keep', knew: 'know', known: 'know', led: 'lead', lent: 'lend', lost: 'lose', made: 'make', meant: 'mean',
  met: 'meet', paid: 'pay', ran: 'run', rang: 'ring', rung: 'ring', rode: 'ride', ridden: 'ride', said: 'say',
  sang: 'sing', sung: 'sing', seen: 'see', sold: 'sell', sent: 'send', slept: 'sleep', spoke: 'speak',
  spoken: 'speak', spent: 'spend', stole: 'steal', stolen: 'steal', stood: 'stand', swam: 'swim', swum: 'swim',
  taught: 'teach', took: 'take', taken: 'take', thought: 'think', threw: 'throw', thrown: 'throw', told: 'tell',
  understood: 'understand', woke: 'wake', woken: 'wake', won: 'win', wore: 'wear', worn: 'wear', wrote: 'write',
  written: 'write', fed: 'feed', fought: 'fight', sought: 'seek', dealt: 'deal', struck: 'strike', became: 'become',
  forgave: 'forgive', forgiven: 'forgive', mistook: 'mistake', mistaken: 'mistake', shook: 'shake', shaken: 'shake',
}));

/**
 * A light English stemmer: plurals, -ing, -ed, -ly, -ness, and a final silent "e". Deliberately
 * conservative: it only has to map the forms of one word to one key consistently (paint, paints,
 * painted, painting → paint; move, moves, moved, moving → move), not to produce dictionary words, and an
 * over-eager stemmer merges unrelated words (care and car, plane and plan stay apart).
 *
 * The "e" rules are Porter's (steps 1b and 5a): a question asks in the base form ("Where did Sam
 * propose?") and a chat says the inflected one ("Sam proposed!"); stripping -ed alone left "propos"
 * beside "propose", and such a question never matched its answer.
 */
export function stem(word: string): string {
  if (!/^[a-z]+$/.test(word)) return word;
  const base = IRREGULAR_PAST.get(word);
  if (base !== undefined) return stem(base);
  if (word.length <= 3) return word.length === 3 ? dropSilentE(word) : word; // use, used → us
  let w = word;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('ied') && w.length > 4) w = w.slice(0, -3) + 'y'; // studied → study
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (/(xes|ches|shes|zes)$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is|ous)$/.test(w)) w = w.slice(0, -1);

  if (w.endsWith('ness') && w.length > 6) w = w.slice(0, -4);
  else if (w.endsWith('ly') && w.length > 5) w = w.slice(0, -2);

  // agreed → agree, but speed and need are no past tenses (Porter: -eed only after a vowel-consonant)
  if (w.endsWith('eed')) return measure(w.slice(0, -3)) > 0 ? dropSilentE(w.slice(0, -1)) : w;
  for (const suffix of ['ing', 'ed']) {
    if (w.endsWith(suffix)) {
      const base = w.slice(0, -suffix.length);
      if (base.length >= 2 && VOWEL_RE.test(base)) {
        // running → runn → run; but keep ll/ss/zz (falling → fall, missed → miss)
        if (/([^aeiouylsz])\1$/.test(base)) return base.slice(0, -1);
        // the "e" the ending replaced: moving → mov → move, related → relat → relate, hoping → hope
        if (/(?:at|bl|iz)$/.test(base) || (measure(base) === 1 && endsConsonantVowelConsonant(base))) return dropSilentE(`${base}e`);
        return dropSilentE(base);
      }
      return w;
    }
  }
  return dropSilentE(w);
}

/** Porter's m: the number of vowel-consonant sequences in a stem ("tr"=0, "mov"=1, "promot"=2). */
function measure(stemmed: string): number {
  let m = 0;
  let prevVowel = false;
  for (let i = 0; i < stemmed.length; i++) {
    const v = isVowelAt(stemmed, i);
    if (!v && prevVowel) m++;
    prevVowel = v;
  }
  return m;
}

function isVowelAt(w: string, i: number): boolean {
  const c = w[i];
  if ('aeiou'.includes(c)) return true;
  // "y" is a vowel after a consonant (happy, sky), a consonant at the start or after a vowel (yes, play)
  return c === 'y' && i > 0 && !isVowelAt(w, i - 1);
}

/** Consonant-vowel-consonant at the end, the last not w, x or y: a short syllable ("hop", "mov", "car"). */
function endsConsonantVowelConsonant(w: string): boolean {
  const n = w.length;
  if (n < 3) return false;
  return !isVowelAt(w, n - 3) && isVowelAt(w, n - 2) && !isVowelAt(w, n - 1) && !'wxy'.includes(w[n - 1]);
}

/** A final silent "e" goes unless the word is a short syllable that needs it (dance → danc; move, care stay). */
function dropSilentE(w: string): string {
  if (!w.endsWith('e') || w.length < 3) return w;
  const base = w.slice(0, -1);
  const m = measure(base);
  if (m > 1 || (m === 1 && !endsConsonantVowelConsonant(base))) return base;
  return w;
}

/** Tokens of a text, in order (duplicates kept: callers count term frequencies). */
export function tokenize(text: string, options: TokenizerOptions = {}): string[] {
  const useStop = options.stopwords !== false;
  const useStem = options.stem !== false;
  const out: string[] = [];
  const normalized = text.normalize('NFKC').toLowerCase().replace(/[’‘`]/g, "'");
  for (const match of normalized.matchAll(WORD_RE)) {
    let token = match[0];
    if (CJK_RE.test(token)) {
      // Emit each CJK character alone, and the non-CJK runs inside the token as words.
      let run = '';
      for (const ch of token) {
        if (CJK_RE.test(ch)) {
          if (run) pushWord(run, out, useStop, useStem);
          run = '';
          out.push(ch);
        } else run += ch;
      }
      if (run) pushWord(run, out, useStop, useStem);
      continue;
    }
    // 3.5 and 1,000 stay numbers; "end.start" (a missing space) becomes two words.
    if (/[.,]/.test(token) && !/^\p{N}+(?:[.,]\p{N}+)*$/u.test(token)) {
      for (const part of token.split(/[.,]/)) if (part) pushWord(part, out, useStop, useStem);
      continue;
    }
    token = token.replace(/,/g, '');
    pushWord(token, out, useStop, useStem);
  }
  return out;
}

function pushWord(token: string, out: string[], useStop: boolean, useStem: boolean): void {
  if (useStop && STOPWORDS.has(token)) return;
  // possessives and contractions: caroline's → caroline, we've → we (a stopword, dropped above)
  const apostrophe = token.indexOf("'");
  if (apostrophe > 0) {
    token = token.slice(0, apostrophe);
    if (useStop && STOPWORDS.has(token)) return;
  } else if (apostrophe === 0) token = token.slice(1);
  if (!token) return;
  out.push(useStem ? stem(token) : token);
}
