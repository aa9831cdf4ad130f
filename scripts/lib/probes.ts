/**
 * Stated-fact probes (issue 14, `npm run eval:probes`): synthetic users who state persona facts in
 * varied words and order among distractors (small talk, tool output, the other facts), then questions
 * about each fact in other words. A question is answered right when the top result was made from the
 * event that stated the fact (for a corrected fact: the correction). Everything comes from a seeded
 * generator with several phrasings per kind, so figures measure the kind of question, not one text.
 */
import { mulberry32 } from '@strata/memory/embedding';

export interface ProbeEvent {
  /** client-side key, mapped to the event id after ingest */
  key: string;
  content: string;
  content_type?: 'text' | 'json';
}

export interface ProbeQuestion {
  query: string;
  /** the key of the event whose units answer it */
  expected: string;
  kind: string;
}

export interface ProbeUser {
  user_id: string;
  events: ProbeEvent[];
  questions: ProbeQuestion[];
}

const NAMES = ['Dylan', 'Maya', 'Priya', 'Tomas', 'Aiko', 'Lena', 'Omar', 'Rosa', 'Felix', 'Nadia', 'Hugo', 'Ines', 'Kofi', 'Sven', 'Leila', 'Marco',
  'Yara', 'Jonas', 'Chloe', 'Ravi', 'Elena', 'Pavel', 'Amara', 'Diego'];
const CITIES = ['Lisbon', 'Porto', 'Ghent', 'Lyon', 'Kyoto', 'Austin', 'Nairobi', 'Oslo', 'Valencia', 'Krakow', 'Montreal', 'Hanoi', 'Dublin', 'Quito'];
const JOBS = ['data engineer', 'nurse', 'architect', 'pastry chef', 'schoolteacher', 'translator', 'electrician', 'veterinarian', 'pilot', 'accountant',
  'journalist', 'physiotherapist'];
const ALLERGENS = ['peanuts', 'shellfish', 'penicillin', 'cat dander', 'pollen', 'gluten', 'latex', 'bee stings', 'sesame', 'eggs'];
const PREFERENCES = ['concise summaries', 'morning meetings', 'dark roast coffee', 'window seats', 'handwritten notes', 'quiet restaurants',
  'audiobooks over podcasts', 'email over phone calls', 'vegetarian food', 'early flights'];
const PETS = [['dog', 'Biscuit'], ['cat', 'Miso'], ['parrot', 'Kiwi'], ['rabbit', 'Clover'], ['dog', 'Pepper'], ['cat', 'Luna'], ['tortoise', 'Sheldon']];
const SIBLINGS = ['sister', 'brother'];
const SIBLING_NAMES = ['Clara', 'Mateo', 'Sofia', 'Lucas', 'Hana', 'Ben', 'Zoe', 'Arjun'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const HOBBIES = ['rock climbing', 'playing the cello', 'woodworking', 'birdwatching', 'salsa dancing', 'chess', 'pottery', 'sailing'];

const SMALL_TALK = ['Thanks, that helps a lot!', 'Can you remind me later?', 'Hmm, let me think about it.', 'Ok sounds good.', 'Haha, fair enough.',
  'What a week it has been.', 'I will get back to you on that.', 'Sure, go ahead.', 'Good morning!', 'Right, makes sense.'];

type Pick = <T>(xs: readonly T[]) => T;

interface Fact {
  kind: string;
  statements: string[];
  questions: string[];
  /** a correction: said later, it replaces the first statement as the answer */
  correction?: string[];
}

function factsFor(name: string, pick: Pick, r: () => number): Fact[] {
  const city = pick(CITIES);
  const newCity = pick(CITIES.filter((c) => c !== city));
  const job = pick(JOBS);
  const allergen = pick(ALLERGENS);
  const pref = pick(PREFERENCES);
  const [pet, petName] = pick(PETS);
  const sib = pick(SIBLINGS);
  const sibName = pick(SIBLING_NAMES);
  const month = pick(MONTHS);
  const day = 1 + Math.floor(r() * 28);
  const hobby = pick(HOBBIES);
  const facts: Fact[] = [
    {
      kind: 'preference',
      statements: [`${name} prefers ${pref}.`, `${name} really likes ${pref}.`, `When it comes to that, ${name} always goes for ${pref}.`],
      questions: [`What does ${name} prefer?`, `What does ${name} like?`, `Which option would ${name} choose?`],
    },
    {
      kind: 'allergy',
      statements: [`${name} is allergic to ${allergen}.`, `${name} has a severe allergy to ${allergen}.`, `Keep ${allergen} away from ${name}, it causes an allergic reaction.`],
      questions: [`What is ${name} allergic to?`, `Does ${name} have any allergies?`, `Which allergy does ${name} have?`],
    },
    {
      kind: 'job',
      statements: [`${name} works as a ${job}.`, `${name} is a ${job} by profession.`, `${name}'s job: ${job}.`],
      questions: [`What does ${name} do for a living?`, `What is ${name}'s job?`, `What is ${name}'s profession?`],
    },
    {
      kind: 'pet',
      statements: [`${name} has a ${pet} named ${petName}.`, `${name}'s ${pet} is called ${petName}.`],
      questions: [`What is the name of ${name}'s ${pet}?`, `What pet does ${name} have?`, `What is ${name}'s ${pet} called?`],
    },
    {
      kind: 'relation',
      statements: [`${name}'s ${sib} is called ${sibName}.`, `${name} has a ${sib} named ${sibName}.`],
      questions: [`What is the name of ${name}'s ${sib}?`, `Who is ${name}'s ${sib}?`],
    },
    {
      kind: 'date',
      statements: [`${name}'s birthday is on ${month} ${day}.`, `${name} was born on ${month} ${day}.`],
      questions: [`When is ${name}'s birthday?`, `When was ${name} born?`, `What is ${name}'s date of birth?`],
    },
    {
      kind: 'hobby',
      statements: [`${name} spends the weekends ${hobby}.`, `${name}'s favourite hobby is ${hobby}.`],
      questions: [`What does ${name} do on weekends?`, `What is ${name}'s hobby?`, `How does ${name} spend free time?`],
    },
    {
      kind: 'place',
      statements: [`${name} lives in ${city}.`, `${name} is based in ${city}.`, `${name} has an apartment in ${city}.`],
      questions: [`Where does ${name} live?`, `Which city is ${name} based in?`, `Where is ${name}'s home?`],
      correction: r() < 0.5 ? [`${name} moved to ${newCity}.`, `Actually, ${name} now lives in ${newCity}.`, `${name} relocated to ${newCity} last month.`] : undefined,
    },
  ];
  return facts;
}

function toolOutput(name: string, pick: Pick): string {
  return JSON.stringify({ tool: pick(['calendar', 'weather', 'search', 'crm']), status: 'ok', result: { owner: name.toLowerCase(), items: [pick(['standup', 'sunny', '3 results', 'ticket #4411'])], count: 1 } });
}

/** `users` synthetic users, each with 8 facts (some corrected) among distractors, and one question per fact. */
export function generateProbes(seed: number, users: number): ProbeUser[] {
  const r = mulberry32(seed); // the probes are the same for a seed on every machine
  const pick: Pick = (xs) => xs[Math.floor(r() * xs.length)];
  const out: ProbeUser[] = [];
  const names = [...NAMES];
  for (let u = 0; u < users; u++) {
    const name = names.length > 0 ? names.splice(Math.floor(r() * names.length), 1)[0] : `${pick(NAMES)}${u}`;
    const facts = factsFor(name, pick, r);
    const events: ProbeEvent[] = [];
    const questions: ProbeQuestion[] = [];
    // statements, small talk and tool output, shuffled; corrections come after what they correct
    const items: ProbeEvent[] = [];
    facts.forEach((f, i) => items.push({ key: `f${i}`, content: pick(f.statements) }));
    for (let d = 0; d < 5; d++) items.push({ key: `d${d}`, content: pick(SMALL_TALK) });
    for (let t = 0; t < 2; t++) items.push({ key: `t${t}`, content: toolOutput(name, pick), content_type: 'json' });
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(r() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    events.push(...items);
    facts.forEach((f, i) => {
      if (f.correction) events.push({ key: `c${i}`, content: pick(f.correction) });
      questions.push({ query: pick(f.questions), expected: f.correction ? `c${i}` : `f${i}`, kind: f.correction ? `${f.kind}-corrected` : f.kind });
    });
    out.push({ user_id: `probe-${seed}-${u}-${name.toLowerCase()}`, events, questions });
  }
  return out;
}

export interface ProbeScore {
  questions: number;
  precision_at_1: number;
  mrr: number;
  by_kind: Record<string, { questions: number; precision_at_1: number }>;
  misses: { query: string; kind: string; top: string | null; expected: string }[];
}

/** Scores ranked answers: `ranked[i]` lists, best first, the source event keys of each result of question i. */
export function scoreProbes(questions: (ProbeQuestion & { expected_content: string })[], ranked: { keys: string[][]; top: string | null }[]): ProbeScore {
  let hits = 0;
  let rr = 0;
  const byKind: Record<string, { questions: number; hits: number }> = {};
  const misses: ProbeScore['misses'] = [];
  questions.forEach((q, i) => {
    const rank = ranked[i].keys.findIndex((keys) => keys.includes(q.expected));
    const k = (byKind[q.kind] ??= { questions: 0, hits: 0 });
    k.questions++;
    if (rank === 0) {
      hits++;
      k.hits++;
    } else {
      misses.push({ query: q.query, kind: q.kind, top: ranked[i].top, expected: q.expected_content });
    }
    if (rank >= 0) rr += 1 / (rank + 1);
  });
  const n = questions.length;
  return {
    questions: n,
    precision_at_1: n === 0 ? 0 : hits / n,
    mrr: n === 0 ? 0 : rr / n,
    by_kind: Object.fromEntries(Object.entries(byKind).map(([kind, v]) => [kind, { questions: v.questions, precision_at_1: v.hits / v.questions }])),
    misses,
  };
}
