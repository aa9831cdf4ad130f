/**
 * Facets: which kind of personal fact a sentence speaks of (where someone lives, their job, an allergy,
 * a birthday, a pet, a relative, a hobby, a preference, their age). A statement and a question about
 * the same fact often share no content word ("What does Kofi do for a living?" / "Kofi is a translator
 * by profession."; "What is Tomas's hobby?" / "Tomas spends the weekends sailing."): the facet is the
 * bridge. Retrieval ranks units whose facets meet the query's as a list of its own (retrieval
 * pipeline), so a statement of the asked kind wins over one that only shares the person's name.
 *
 * Triggers are word stems or short phrases of the kind, never names or values: the lexicon is about
 * the kind of question, not about any data set.
 */
import { stem } from './stem';
import { words } from './words';

export type Facet = 'residence' | 'occupation' | 'employer' | 'allergy' | 'birthday' | 'pet' | 'family' | 'hobby' | 'preference' | 'age';

/** Multi-word triggers, matched on the lowercased text before single words (they disambiguate "living"). */
const PHRASES: [RegExp, Facet][] = [
  [/\bfor a living\b/, 'occupation'],
  [/\b(?:works?|working|worked)\s+as\b/, 'occupation'],
  [/\bby (?:profession|trade)\b/, 'occupation'],
  [/\b(?:works?|working|worked)\s+(?:at|for)\b/, 'employer'],
  [/\b(?:lives?|living|lived|based|resides?|residing|settled)\s+(?:in|at|near)\b/, 'residence'],
  [/\b(?:moved|moving|relocated|relocating)\s+(?:to|into)\b/, 'residence'],
  [/\bdate of birth\b/, 'birthday'],
  [/\bwas born\b|\bborn (?:on|in)\b/, 'birthday'],
  [/\bfree time\b|\bspare time\b|\bfor fun\b|\bon (?:the )?weekends?\b|\bthe weekends?\b/, 'hobby'],
  [/\byears? old\b|\bhow old\b/, 'age'],
  [/\bwould (?:rather|choose)\b|\bgoes for\b|\bgo for\b/, 'preference'],
];

/** Single-word triggers, by stem. */
const WORDS: Record<Facet, string[]> = {
  residence: ['live', 'lives', 'home', 'hometown', 'apartment', 'flat', 'house', 'city', 'address', 'reside', 'neighborhood', 'neighbourhood'],
  occupation: ['job', 'profession', 'career', 'occupation', 'employed', 'profession'],
  employer: ['employer', 'company', 'firm'],
  allergy: ['allergic', 'allergy', 'allergies', 'allergen', 'intolerant', 'intolerance', 'anaphylaxis'],
  birthday: ['birthday', 'birthdate', 'born', 'birth'],
  pet: ['pet', 'pets', 'dog', 'dogs', 'cat', 'cats', 'puppy', 'kitten', 'parrot', 'rabbit', 'hamster', 'tortoise', 'turtle', 'goldfish'],
  family: ['sister', 'brother', 'sibling', 'siblings', 'mother', 'mom', 'mum', 'father', 'dad', 'parent', 'parents', 'wife', 'husband', 'son',
    'daughter', 'cousin', 'aunt', 'uncle', 'grandmother', 'grandfather', 'grandma', 'grandpa', 'niece', 'nephew'],
  hobby: ['hobby', 'hobbies', 'pastime', 'weekend', 'weekends'],
  preference: ['prefer', 'prefers', 'preferred', 'preference', 'choose', 'choice'],
  age: ['age', 'aged'],
};

/**
 * Words of liking: a preference when the sentence speaks of no other kind of fact ("Omar likes quiet
 * restaurants"), and no facet of their own beside another ("Priya's favourite hobby is birdwatching"
 * is about a hobby; "I love my dog", about a pet).
 */
const LIKING = new Set(['favorite', 'favourite', 'like', 'likes', 'liked', 'love', 'loves', 'loved', 'dislike', 'dislikes', 'hate', 'hates', 'enjoy', 'enjoys'].map(stem));

const BY_STEM = new Map<string, Facet>();
for (const [facet, list] of Object.entries(WORDS) as [Facet, string[]][]) for (const w of list) BY_STEM.set(stem(w), facet);

/** The facets a sentence (a statement or a question) speaks of; empty when none. */
export function facetsOf(text: string): Set<Facet> {
  const out = new Set<Facet>();
  const lower = text.toLowerCase();
  let rest = lower;
  for (const [re, facet] of PHRASES) {
    if (re.test(rest)) {
      out.add(facet);
      rest = rest.replace(new RegExp(re.source, 'g'), ' ');
    }
  }
  let liking = false;
  for (const w of words(rest)) {
    const s = stem(w);
    const facet = BY_STEM.get(s);
    if (facet) out.add(facet);
    else if (LIKING.has(s)) liking = true;
  }
  if (liking && out.size === 0) out.add('preference');
  return out;
}
