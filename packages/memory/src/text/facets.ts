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
import { memoByText } from './memo';
import { stem } from './stem';
import { words } from './words';

export type Facet = 'residence' | 'occupation' | 'employer' | 'allergy' | 'birthday' | 'pet' | 'family' | 'hobby' | 'preference' | 'age'
  | 'diet' | 'drink' | 'commute' | 'schedule' | 'relationship' | 'education' | 'health' | 'travel' | 'contact' | 'weight';

/**
 * Facets a person holds one value of at a time: a new value replaces the old one (consolidation's
 * updates). Pets, family, hobbies, allergies and likes accumulate instead.
 */
export const SINGLE_VALUED_FACETS: ReadonlySet<Facet> = new Set<Facet>(['residence', 'occupation', 'employer', 'diet', 'drink', 'commute', 'schedule', 'relationship', 'education', 'travel', 'contact', 'age', 'weight']);

/**
 * Facets that are a state a person is in (where they live, their work, diet, drink, commute, partner,
 * contact details, age, body weight), as opposed to things they do or plan (a trip, a class, a schedule), which
 * accumulate in a life's story: a change cue retires the old state (consolidation/updates.ts); a new
 * trip or class does not retire the last one unless it gives a new date or value for the same thing.
 */
export const STATE_FACETS: ReadonlySet<Facet> = new Set<Facet>(['residence', 'occupation', 'employer', 'diet', 'drink', 'commute', 'relationship', 'contact', 'age', 'weight']);

/** Facets that are one fact for updates: a new job at a new employer replaces both the old job and the old employer. */
export function facetGroup(f: Facet): Facet[] {
  return f === 'occupation' || f === 'employer' ? ['occupation', 'employer'] : [f];
}

/** Is this name one of the facets (a unit's attribute may be any name a model or a pattern gave)? */
export function isFacet(name: string): name is Facet {
  return Object.prototype.hasOwnProperty.call(WORDS, name);
}

/**
 * Job titles that no suffix gives away (a nurse, a chef, a vet, a pilot) or that are said without an
 * article by many writers ("I am nurse", "I'm ward supervisor now"). Read only where a person is said to
 * be one (ROLE_IS below): "my doctor said" and "Nurses usually need B1" speak of no one's job.
 */
const JOB_TITLES = ['nurse', 'chef', 'cook', 'coach', 'vet', 'pilot', 'physio', 'doctor', 'surgeon', 'dentist', 'midwife', 'paramedic',
  'pharmacist', 'therapist', 'psychologist', 'teacher', 'tutor', 'lecturer', 'professor', 'librarian', 'lawyer', 'solicitor', 'barrister',
  'judge', 'accountant', 'architect', 'engineer', 'developer', 'programmer', 'designer', 'analyst', 'consultant', 'scientist', 'researcher',
  'journalist', 'editor', 'writer', 'translator', 'interpreter', 'photographer', 'artist', 'musician', 'actor', 'actress', 'barista',
  'bartender', 'waiter', 'waitress', 'baker', 'butcher', 'cashier', 'clerk', 'receptionist', 'secretary', 'assistant', 'nanny', 'carer',
  'caregiver', 'cleaner', 'courier', 'driver', 'mechanic', 'electrician', 'plumber', 'carpenter', 'builder', 'gardener', 'farmer',
  'firefighter', 'soldier', 'officer', 'detective', 'postman', 'technician', 'supervisor', 'manager', 'director', 'intern', 'apprentice',
  'trainee', 'founder', 'cofounder', 'ceo', 'cto', 'cfo', 'lead', 'chief', 'principal', 'headteacher', 'registrar', 'resident',
  'administrator', 'coordinator', 'planner', 'dispatcher', 'recruiter', 'salesman', 'saleswoman', 'realtor', 'agent', 'banker', 'broker',
  'hairdresser', 'barber', 'stylist', 'optician', 'caretaker', 'janitor', 'guard', 'paralegal', 'sommelier', 'veterinarian', 'pediatrician',
  'paediatrician', 'radiographer', 'sonographer', 'welder', 'machinist', 'foreman', 'freelancer', 'contractor', 'tester',
  'curator', 'archivist', 'installer', 'fitter', 'surveyor', 'auditor', 'actuary', 'economist', 'dietitian', 'dietician', 'nutritionist',
  'counsellor', 'counselor', 'instructor', 'trainer', 'illustrator', 'animator', 'copywriter', 'producer', 'presenter', 'chemist',
  'biologist', 'physicist', 'geologist', 'historian', 'florist', 'tailor', 'roofer', 'decorator', 'locksmith', 'porter', 'steward',
  'stewardess', 'ranger', 'warden', 'constable', 'sergeant', 'vicar', 'priest', 'pastor', 'rabbi', 'imam', 'chaplain', 'optometrist',
  'physiotherapist', 'osteopath', 'chiropractor', 'doula', 'handyman', 'underwriter', 'trader', 'entrepreneur'];
/**
 * A title with its rank, at a place ("assistant curator at the M Shed", "senior analyst for Ofgem"): a job
 * even where no one is said to be one ("it's the museum one, assistant curator at the M Shed").
 */
const RANKED_TITLE_AT = new RegExp(String.raw`\b(?:assistant|senior|junior|head|chief|lead|trainee|deputy|associate|staff|principal)\s+(?:[\p{L}-]+\s+)?(?:${JOB_TITLES.join('|')})s?\s+(?:at|for|with)\b`, 'u');
/**
 * A person said to hold a job title: "I am nurse", "I'm ward supervisor now", "she's head of science at St
 * Peter's", "he is the new site manager", "works as sous-chef", or to have held or be about to hold one: "Used
 * to be a bus driver", "I will be QA tester", "Being a physio, she's relentless". Up to two words may stand before the title
 * ("ward", "junior ux"), none of them a preposition or an article: "I'm at the doctor" is no job.
 */
const ROLE_IS = new RegExp(String.raw`\b(?:is(?=\s+an?\s)|was(?=\s+an?\s)|i'm|i am|im|he's|she's|he is|she is|they're|they are|works as|working as|worked as|job as|hired as|now as|used to be|will be|'ll be|being|became|become|becomes|becoming|trained as|training as|retrained as|qualified as)\s+(?:(?:a|an|the|our|their|my)\s+)?(?:(?:new|senior|junior|head|chief|acting|assistant|trainee|qualified|full)\s+)?(?:(?!(?:at|to|in|on|off|from|with|by|for|the|a|an|my|his|her|their|our|going|seeing|see|visiting|calling|not|so|very|still|just|also)\b)[\p{L}-]+\s+){0,2}?(?:${JOB_TITLES.join('|')}|head of [\p{L}-]+)s?\b`, 'u');

/** Multi-word triggers, matched on the lowercased text before single words (they disambiguate "living"). */
const PHRASES: [RegExp, Facet][] = [
  [/\bfor a living\b/, 'occupation'],
  // the verb: "hire" alone is mostly a rental ("the school hire", "car hire")
  [/\b(?:hired|hiring)\b/, 'occupation'],
  [/\b(?:works?|working|worked)\s+as\b/, 'occupation'],
  [/\bby (?:profession|trade)\b/, 'occupation'],
  [/\b(?:works?|working|worked)\s+(?:at|for)\b/, 'employer'],
  [/\b(?:lives?|living|lived|based|resides?|residing|settled)\s+(?:in|at|near)\b/, 'residence'],
  // "the exam was moved to 27 September", "moving it to friday": a new date, not a new home
  [/\b(?:moved|moving|relocated|relocating)\s+(?:to|into)\b(?!\s+(?:the\s+)?(?:\d|next\b|later\b|tomorrow\b|today\b|tonight\b|another (?:day|date|time)\b|(?:mon|tues|wednes|thurs|fri|satur|sun)day|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.? \d|(?:january|february|march|april|june|july|august|september|october|november|december)\b))/, 'residence'],
  // a home by other words, with where it is: "found a place in medford", "my place in somerville", "moving
  // out", "moving in with Zoe", "move-in is sept 1", "moving march 9" ("the new place" says no where, and
  // "moving in September" is a date, not a move-in)
  [/\b(?:my|our|his|her|their|a|new|own) place (?:in|on|near|at|by)\b|\bmov(?:e|ed|es|ing)[- ]out\b|\bmov(?:e|ed|es|ing)[- ]in(?= with\b| together\b| (?:is|was|day|date)\b|\s*[.!,;]|\s*$)|\bmoving (?:day|date|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d)/, 'residence'],
  // a room or a flat found, rented or bought is a home: "I found room in Kralingen", "we rent a studio near the park"
  [/\b(?:found|find|got|rent|rents|renting|rented|bought|buying|share|sharing|sublet|subletting)\s+(?:a\s+|an\s+|my\s+|our\s+|the\s+)?(?:[\p{L}-]+\s+)?(?:room|studio|flat|apartment|house|condo|bedsit|place)\b(?!\s+(?:for (?:the|a|tonight|the night|the weekend)|at the hotel))/u, 'residence'],
  [/\bdate of birth\b/, 'birthday'],
  [/\bwas born\b|\bborn (?:on|in)\b/, 'birthday'],
  [/\bfree time\b|\bspare time\b|\bfor fun\b|\bon (?:the )?weekends?\b|\bthe weekends?\b/, 'hobby'],
  [/\byears? old\b|\bhow old\b/, 'age'],
  [/\b(?:get|gets|getting|got|go|goes|going|went)\s+to\s+(?:work|the office|school|uni|campus)\b|\bwalks? to work\b/, 'commute'],
  // a role by its name: "I start in June as a lighting designer", "I'm a data analyst at Carrefour"
  [/\b(?:start\w*|work\w*|hired|employed|job|role|position|joined|promoted|trained|qualified|back)\b[^.!?]{0,40}?\bas an? (?:[\p{L}-]+ )?[\p{L}-]+(?:er|or|ist|yst|ian|eer|ant|ician|ologist|man|woman|person)\b|\b(?:i'm|i am|he's|she's|he is|she is|they're|works as) an? (?:[\p{L}-]+ )?[\p{L}-]+(?:er|or|ist|yst|ian|eer|ant|ologist)\b(?= at | for | in |[.!,]|$)/u, 'occupation'],
  [ROLE_IS, 'occupation'],
  [RANKED_TITLE_AT, 'occupation'],
  // driving a tram, a bus or a cab is the job, not the way to it ("I drive the tram number 4 every day")
  [/\b(?:drive|drives|driving|drove)\s+(?:a|an|the|my)?\s*(?:tram|bus|buses|trams|taxi|taxis|cab|cabs|truck|trucks|lorry|lorries|ambulance|forklift|delivery van|van)s?\b(?!\s+to\s+(?:work|the office|school))/, 'occupation'],
  [/\b(?:handed in|gave|give) (?:my|his|her|their) notice\b|\blaid off\b|\bday job\b|\bnew job\b|\bfull[- ]time\b|\bpart[- ]time\b/, 'occupation'],
  [/\bdating\b|\bbroke up\b|\bsplit up\b|\bmoving in together\b|\bmoved in together\b|\bgot engaged\b|\bgot married\b|\bseeing someone\b/, 'relationship'],
  [/\b(?:my|his|her|your|their|our|new|old|the same|cell|home|work) number\b(?! of\b)|\bnumber is \+?\d|\bphone number\b|\be-?mail address\b|\bmobile number\b|\bnew number\b|[\w.+-]+@[\w-]+\.[\w.-]+|\baddress\b(?=[^!?\n]{0,60}@)|\b(?:my|your|his|her|their|the|account|work|new|old) e-?mail\b(?!ed)/, 'contact'],
  [/\bplant[- ]based\b|\bgluten[- ]free\b|\bdairy[- ]free\b|\bcut out (?:meat|sugar|dairy|carbs)\b/, 'diet'],
  [/\bwould (?:rather|choose)\b|\bgoes for\b|\bgo for\b|\balways (?:want|wants|get|gets|take|takes|ask for|asks for|book|books|choose|chooses|order|orders)\b/, 'preference'],
  // a question about the meal a person needs asks about their diet ("What meal does Rui need on the flight?")
  [/\b(?:what|which) (?:kind of )?(?:meal|meals|food)\b/, 'diet'],
  [/\b(?:which|what) days?\b|\bdays? of the week\b|\bon (?:which|what) days?\b/, 'schedule'],
  // a person's weight: "I'm down to 81 kg", "she's 62kg", "I weigh 84 kg", "weight is 79 now", "my weight",
  // "What does Kemal weigh?", "Kemal's weight"
  [/\b(?:i'm|i am|im|he's|she's|he is|she is|down to|up to|dropped to|back to)\s+\d+(?:[.,]\d+)?\s*(?:kg|kgs|kilos?|lbs?)\b|\b(?:i|he|she|we|they|you)\s+weigh(?:s|ed)?\b|\b(?:my|his|her|your|body)\s+weight\b|'s weight\b|^weight\b|\bweight\s+(?:is|was|now|down|up|went|has|at)\b|\bweighed in\b|\bdoes\s+[\p{L}'-]+\s+weigh\b/u, 'weight'],
];

/** Each phrase as a global expression (its own flags kept: the role phrase needs `u`), built once. */
const GLOBAL_PHRASES = new Map<RegExp, RegExp>(PHRASES.map(([re]) => [re, new RegExp(re.source, `${re.flags}g`)]));
function globalOf(re: RegExp): RegExp {
  const g = GLOBAL_PHRASES.get(re) as RegExp;
  g.lastIndex = 0;
  return g;
}

/** Single-word triggers, by stem. */
const WORDS: Record<Facet, string[]> = {
  residence: ['live', 'lives', 'home', 'hometown', 'apartment', 'flat', 'house', 'city', 'address', 'reside', 'neighborhood', 'neighbourhood'],
  occupation: ['job', 'profession', 'career', 'occupation', 'employed', 'profession', 'work', 'works', 'working', 'worked', 'shift', 'boss',
    'office', 'quit', 'resigned', 'promoted', 'promotion', 'colleague', 'colleagues', 'coworker', 'coworkers', 'salary', 'freelance', 'freelancer',
    'intern', 'internship', 'retired', 'unemployed', 'firm', 'startup', 'manager', 'position', 'role'],
  employer: ['employer', 'company'],
  allergy: ['allergic', 'allergy', 'allergies', 'allergen', 'intolerant', 'intolerance', 'anaphylaxis'],
  birthday: ['birthday', 'birthdate', 'born', 'birth'],
  pet: ['pet', 'pets', 'dog', 'dogs', 'cat', 'cats', 'puppy', 'kitten', 'parrot', 'rabbit', 'hamster', 'tortoise', 'turtle', 'goldfish'],
  family: ['sister', 'brother', 'sibling', 'siblings', 'mother', 'mom', 'mum', 'father', 'dad', 'parent', 'parents', 'wife', 'husband', 'son',
    'daughter', 'cousin', 'aunt', 'uncle', 'grandmother', 'grandfather', 'grandma', 'grandpa', 'niece', 'nephew'],
  // and the pastimes no other kind of fact shares a word with ("I do climbing at the Redpoint wall now" for "What
  // hobby does Liesl have now?"); running, cycling, swimming and baking are also a commute, a race or a job
  hobby: ['hobby', 'hobbies', 'pastime', 'weekend', 'weekends', 'pottery', 'ceramics', 'climbing', 'bouldering', 'yoga', 'pilates',
    'knitting', 'crochet', 'sewing', 'embroidery', 'photography', 'gardening', 'birdwatching', 'hiking', 'kayaking', 'canoeing', 'surfing',
    'skiing', 'snowboarding', 'skating', 'chess', 'choir', 'salsa', 'tango', 'ballet', 'woodworking', 'calligraphy', 'archery', 'fencing',
    'karate', 'judo', 'taekwondo', 'golf', 'tennis', 'badminton', 'volleyball', 'rowing', 'sailing', 'scuba', 'fishing', 'camping',
    'guitar', 'piano', 'violin', 'cello', 'ukulele', 'drums', 'painting', 'sketching', 'origami', 'quilting', 'gaming'],
  preference: ['prefer', 'prefers', 'preferred', 'preference', 'choose', 'choice'],
  age: ['age', 'aged'],
  diet: ['diet', 'vegetarian', 'vegan', 'keto', 'paleo', 'pescatarian', 'carnivore', 'fasting', 'calories', 'carbs', 'meat', 'macros'],
  drink: ['coffee', 'tea', 'decaf', 'espresso', 'latte', 'cappuccino', 'matcha', 'beer', 'wine', 'alcohol', 'sober', 'soda', 'juice', 'smoothie',
    'drink', 'drinks', 'drinking', 'caffeine', 'oat', 'chai', 'cocktail', 'whisky', 'whiskey'],
  commute: ['commute', 'commuting', 'bike', 'bicycle', 'car', 'train', 'bus', 'tram', 'subway', 'metro', 'scooter', 'motorbike', 'motorcycle',
    'carpool', 'drive', 'driving', 'ferry', 'cycle'],
  schedule: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'mondays', 'tuesdays', 'wednesdays', 'thursdays',
    'fridays', 'saturdays', 'sundays', 'weekdays', 'schedule', 'nights', 'mornings', 'evenings', 'routine'],
  // "dating" is read by PHRASES: its stem is the one of "date" ("my start date")
  relationship: ['girlfriend', 'boyfriend', 'partner', 'married', 'engaged', 'fiance', 'fiancee', 'divorced', 'single', 'relationship', 'ex'],
  education: ['school', 'university', 'college', 'course', 'degree', 'studying', 'student', 'graduated', 'graduate', 'academy', 'exam', 'bootcamp',
    'semester', 'class', 'classes', 'major', 'thesis', 'diploma', 'certificate', 'enrolled', 'studies'],
  health: ['injury', 'injured', 'sprained', 'doctor', 'medication', 'meds', 'sick', 'surgery', 'healed', 'pregnant', 'therapy', 'physio',
    'diagnosed', 'hospital', 'dose', 'symptoms', 'prescription', 'pills'],
  travel: ['flight', 'flights', 'fly', 'flying', 'trip', 'booking', 'hotel', 'seat', 'ticket', 'tickets', 'airport', 'layover', 'itinerary', 'departure',
    'return', 'reservation', 'check-in', 'boarding'],
  // "email" alone is often the verb ("the label I've emailed you"): the noun is read by PHRASES
  // "number" alone is any number ("the tram number 4", "a number of things"): a person's number is read by PHRASES
  contact: ['phone', 'mobile'],
  // a body's weight, one value at a time; the words alone weigh any thing ("my Fender weighs a ton", "2 kg of
  // flour"): a person's is read by PHRASES ("I weigh 84 kg", "I'm down to 81 kg", "weight is 79 now")
  weight: ['bmi'],
};

/**
 * Words of liking: a preference when the sentence speaks of no other kind of fact ("Omar likes quiet
 * restaurants"), and no facet of their own beside another ("Priya's favourite hobby is birdwatching"
 * is about a hobby; "I love my dog", about a pet).
 */
const LIKING = new Set(['favorite', 'favourite', 'like', 'likes', 'liked', 'love', 'loves', 'loved', 'dislike', 'dislikes', 'hate', 'hates', 'enjoy', 'enjoys'].map(stem));

const BY_STEM = new Map<string, Facet>();
for (const [facet, list] of Object.entries(WORDS) as [Facet, string[]][]) for (const w of list) BY_STEM.set(stem(w), facet);

/**
 * A thing's place is not a person's home: "it lives in the shed", "that stays at the office". Blanked
 * (same length, so positions hold) before the residence phrases read the text.
 */
const THING_PLACE = /\b(?:it|that|this|which)\s+(?:lives|stays|sits|goes)\b/g;

/**
 * Words of a kind used as idioms: "Thursdays at 7 work for me", "that works" agree to a time, they
 * speak of no job; "long live harbor" is no home; a "password manager" is software. Blanked like THING_PLACE.
 */
const IDIOMS = /\b(?:works?|worked|working) (?:for|with) (?:me|us|you)\b|\b(?:that|it|this|which) (?:works|worked)\b|\blong live\b|\bheads[ -]up\b|\b(?:password|package|task|file|window|download) managers?\b/g;

/** IDIOMS for text not lowercased first (objectStems reads names in their case), built once. */
const IDIOMS_ANY_CASE = new RegExp(IDIOMS.source, 'gi');

/** The text with idioms of a kind ("that works", "works for me") blanked, its case kept: no topic is in them. */
export function withoutIdioms(text: string): string {
  return text.replace(IDIOMS_ANY_CASE, (m) => ' '.repeat(m.length));
}

function readable(text: string): string {
  return text.toLowerCase().replace(RESOLVED, (m, pronoun: string) => pronoun + ' '.repeat(m.length - pronoun.length))
    .replace(THING_PLACE, (m) => ' '.repeat(m.length)).replace(IDIOMS, (m) => ' '.repeat(m.length));
}

/** The name consolidation writes after an opening pronoun ("she's (ana) a nurse"): read past it, keeping positions. */
const RESOLVED = /\b((?:she|he|they)(?:'s|'d|'ll|'re)?) \([\p{L}'’ -]+\)/gu;

/** The facets a sentence (a statement or a question) speaks of; empty when none (`stated`: see facetsStated). */
export function facetsOf(text: string, stated = false): Set<Facet> {
  const out = new Set<Facet>();
  const lower = readable(text);
  let rest = lower;
  for (const [re, facet] of PHRASES) {
    if (re.test(rest)) {
      out.add(facet);
      rest = rest.replace(globalOf(re), ' ');
    }
  }
  let liking = false;
  for (const w of words(rest)) {
    const s = stem(w);
    const facet = stated && CONTEXT_ONLY.has(s) ? undefined : BY_STEM.get(s);
    if (facet) out.add(facet);
    else if (LIKING.has(s)) liking = true;
  }
  // Liking is a preference unless the sentence is about a hobby, a pet or a person ("I love my dog"); a
  // liked drink or diet is both ("Sven really likes dark roast coffee").
  if (liking && !['hobby', 'pet', 'family', 'relationship', 'occupation', 'employer', 'residence'].some((f) => out.has(f as Facet))) out.add('preference');
  return out;
}

/**
 * Words that place a statement in someone's working life without saying what their work is: "the train
 * to work is easy", "with my colleague Sanne", "my boss is from Suriname". They file a statement under
 * work, but a change said beside them ("Now I rent a small apartment in Delft with my colleague") is no
 * new job: `facetsStated` leaves them out.
 */
const CONTEXT_ONLY = new Set(['colleague', 'colleagues', 'coworker', 'coworkers', 'boss', 'office', 'shift', 'salary', 'work', 'works',
  'working', 'worked', 'firm', 'manager'].map(stem));

/** The facets a statement gives a value of: `facetsOf` without the words that only speak around a job (CONTEXT_ONLY). */
export function facetsStated(text: string): Set<Facet> {
  return facetsOf(text, true);
}

/**
 * The facets of `text` in the order they first appear (the first is the one a statement is mostly about).
 * Remembered per text (memo.ts): consolidation asks it of a statement and of each of its clauses, once
 * per facet it finds (updates.ts `slotOf`, `othersClause`, `clauseSubject`, `valuedFacets`), and retrieval
 * of every stored statement it ranks; shared between callers, so read only.
 */
export const facetsInOrder: (text: string) => readonly Facet[] = memoByText(facetsInOrderOf);

function facetsInOrderOf(text: string): readonly Facet[] {
  let lower = readable(text);
  const at = new Map<Facet, number>();
  const note = (f: Facet, i: number) => { if (!at.has(f) || i < (at.get(f) as number)) at.set(f, i); };
  for (const [re, facet] of PHRASES) {
    const m = re.exec(lower); // not global: exec keeps no state between calls
    if (m) note(facet, m.index);
  }
  // as in facetsOf, a phrase's words are not read again one by one ("email address" is no home address)
  for (const [re] of PHRASES) lower = lower.replace(globalOf(re), (m) => ' '.repeat(m.length));
  let pos = 0;
  for (const w of words(lower)) {
    const i = lower.indexOf(w, pos);
    if (i >= 0) pos = i + w.length;
    const facet = BY_STEM.get(stem(w));
    if (facet) note(facet, Math.max(0, i));
  }
  return [...at.entries()].sort((a, b) => a[1] - b[1]).map(([f]) => f);
}

/**
 * Values written in more than one way, by stem: riding a bike is cycling, a car is driving. The key is
 * the one stem both readings compare by (`valueStem`), so "sold my bike" names what "I cycle to work"
 * said. Only values of the facets whose words are their values (commute, diet, drink).
 */
const VALUE_ALIASES: Record<string, string> = Object.fromEntries([
  ...['bike', 'bikes', 'bicycle', 'cycle', 'cycles', 'cycling', 'cycled', 'biking', 'ride'].map((w) => [w, 'bike']),
  ...['car', 'cars', 'drive', 'drives', 'driving', 'drove'].map((w) => [w, 'car']),
  ...['train', 'trains', 'rail'].map((w) => [w, 'train']),
  ...['metro', 'subway', 'tube', 'underground'].map((w) => [w, 'metro']),
].map(([w, k]) => [stem(w), k]));

/** The stem a value compares by (given a word or any stem of it): its alias key, else the stem itself. */
export function valueStem(s: string): string {
  return VALUE_ALIASES[s] ?? VALUE_ALIASES[stem(s)] ?? s;
}

/**
 * The words by which `text` speaks of `facet` (stems): for a commute, a diet or a drink these are the
 * value itself ("bike", "vegan", "decaf").
 */
export function facetWords(text: string, facet: Facet): Set<string> {
  const out = new Set<string>();
  for (const w of words(readable(text))) {
    const s = stem(w);
    if (BY_STEM.get(s) === facet) out.add(s);
  }
  return out;
}

