/**
 * Step 2: denoising. A statement made only of greetings, fillers, acknowledgements and small talk
 * carries nothing worth remembering. Anything with a number, or any content word outside those lists,
 * is kept ("ok, my flight is at 9" stays), except four kinds of turn that carry words but state
 * nothing about anyone:
 *  - a bare question ("how did it go?", "what's your current pace?"): it asks, it does not tell. A
 *    request ("can you move my flight to May 5?") and "guess what, I got the job?" are kept;
 *  - a reaction ("oh no :( at least she stays in the family", "so proud of you!!", "good luck with the
 *    move"): an interjection or a wish aimed at the listener, with no "I" and no name of its own;
 *  - a fragment of three words or fewer with no name, number or "I" ("Pictures please", "Respect.");
 *  - thanks for something, and nothing else ("thanks for all the help so far by the way").
 */

import { capitalizedWords } from '../text';

export type NoiseVerdict = { noise: false } | { noise: true; reason: string };

/** Multi-word small-talk formulas, removed before the word check (normalized: lowercase, straight quotes). */
export const FILLER_PHRASES: readonly string[] = [
  "how have you been", "how are you doing", "how are you", "how's it going", "how is it going", "how are things",
  "what's up with you", "what's up", "whats up", "what's new", "anything new", "long time no see",
  "good to see you", "great to see you", "nice to see you", "nice to meet you", "good to hear from you",
  "great to hear from you", "how about you", "what about you", "and you", "you too", "same here", "me too",
  "sounds good", "sounds great", "sounds fun", "sounds awesome", "sounds like fun", "that's great", "that's cool",
  "that's awesome", "that's amazing", "that's nice", "that's so cool", "that's really cool", "that's wonderful",
  "that is great", "that is cool", "good for you", "good job", "well done", "thank you so much", "thanks so much",
  "thank you", "thanks a lot", "no problem", "no worries", "you're welcome", "got it", "see you later", "see you soon",
  "see you", "see ya", "talk to you later", "take care", "have a good day", "have a great day", "have a nice day",
  "good morning", "good afternoon", "good evening", "good night", "oh my god", "oh my", "i see", "makes sense",
  "i agree", "talk to you soon", "talk soon", "catch you later", "bye for now", "for sure", "of course", "all good", "all right", "never mind",
  // agreeing to what was proposed: "That works for me.", "works for us", "will do", "count me in"
  "that works for me", "that works for us", "works for me", "works for us", "that works", "will do", "count me in",
  "sounds like a plan", "no thanks",
];

/** The phrases as `fillerVerdict` looks for them (a space either side), made once. */
const FILLER_NEEDLES = FILLER_PHRASES.map((p) => ` ${p} `);
/** Every word of a filler phrase: a word outside these, FILLER_WORDS and the names is never removed. */
const FILLER_PHRASE_WORDS: ReadonlySet<string> = new Set(FILLER_PHRASES.flatMap((p) => p.split(' ')));

export const FILLER_WORDS: ReadonlySet<string> = new Set([
  'hi', 'hello', 'hey', 'heya', 'hiya', 'yo', 'howdy', 'greetings', 'bye', 'goodbye', 'cya', 'cheers',
  'ok', 'okay', 'k', 'kk', 'okey', 'sure', 'yes', 'yeah', 'yep', 'yup', 'ya', 'no', 'nope', 'nah',
  'thanks', 'thx', 'ty', 'tnx', 'thank', 'welcome', 'np',
  'lol', 'lmao', 'rofl', 'haha', 'hahaha', 'hehe', 'heh', 'omg', 'wow', 'woah', 'whoa', 'woohoo', 'yay', 'oh', 'ah', 'aw', 'aww',
  'hmm', 'hm', 'um', 'uh', 'umm', 'mhm', 'uhm', 'huh',
  'cool', 'great', 'nice', 'awesome', 'amazing', 'perfect', 'fine', 'good', 'alright', 'right', 'wonderful', 'fantastic',
  'excellent', 'agree', 'sweet', 'neat', 'indeed', 'totally', 'absolutely', 'definitely', 'exactly', 'agreed', 'true', 'correct',
  'so', 'really', 'very', 'too', 'just', 'well', 'and', 'that', "that's", 'is', 'it', "it's", 'you', 'all', 'man', 'dude',
  'again', 'much', 'lot', 'a', 'the', 'there', 'guys', 'everyone', 'buddy', 'friend',
  'congrats', 'congratulations', 'respect', 'jealous', 'ugh', 'yikes', 'oops', 'damn', 'gosh', 'jeez', 'wtf', 'what', 'whoa',
  'coach', 'doc', 'mate', 'bro', 'sis', 'babe', 'folks', 'team', 'pal', 'fam', 'haha', 'ha', 'xd', 'xoxo', 'love', 'hugs', 'please', 'pls',
  'morning', 'evening', 'afternoon', 'night', 'noted', 'understood', 'brilliant', 'lovely', 'cute', 'adorable', 'proud', 'yess', 'yesss', 'wooo', 'ooh', 'oooh', 'hahah', 'ahh', 'aha',
  // the same in the other languages chats mix in ("Servus!", "¡Hola Lucía!", "Genau.", "merci!!")
  'hola', 'hallo', 'servus', 'moin', 'ciao', 'salut', 'bonjour', 'bonsoir', 'coucou', 'gracias', 'danke', 'merci', 'obrigado', 'obrigada',
  'grazie', 'adios', 'adiós', 'tschüss', 'tschüs', 'saludos', 'bises', 'namaste', 'hej', 'olá', 'genau', 'vale', 'claro', 'perfecto',
  'super', 'oui', 'sí', 'ja', 'nein', 'bitte', 'schön', 'beaucoup', 'muchas', 'vielen', 'dank', 'nada',
]);

/** Words that open a reaction: an exclamation about what the other person said. */
const INTERJECTION = /^(?:oh+|ohh+|aw+|aww+|omg|wow|whoa|woah|yikes|ugh|oops|damn|gosh|jeez|lol|haha\w*|hehe|yay|woo+|ooh+|no way|oh no|oh wow|nooo+|what|wait|hmm+|ah+|ahh+|ha)\b/i;
/** A wish or praise aimed at the listener ("so proud of you", "good luck with the move", "hope you feel better"). */
const TO_LISTENER = /^(?:(?:i'?m |i am )?(?:so |really |very |super )?(?:proud|happy|glad|jealous|sorry) (?:of|for) (?:you|u)\b|good luck\b|best of luck\b|fingers crossed\b|hope (?:you|u|it|that)\b|you (?:deserve|got) (?:it|this)\b|you'?(?:ll| will) (?:do great|be fine|love it)\b|(?:that|this) (?:sounds|looks|is) (?:so |really )?(?:great|amazing|awesome|fun|nice|lovely|cool|hard|rough|tough)\b|sounds (?:like )?(?:a )?(?:great|amazing|awesome|fun|nice|lovely|cool|hard|rough|tough|plan)\b|enjoy\b|have fun\b|safe travels\b|get well soon\b|feel better\b|miss (?:you|u)\b|can'?t wait\b|tell me (?:more|everything)\b|keep (?:me|us) posted\b)/i;
/** "I", "my", "we": the speaker tells something of their own. */
const FIRST_PERSON = /\b(?:i|i'm|i've|i'll|i'd|me|my|mine|we|we're|we've|our|us)\b/i;
/** Questions that tell something ("guess what? I got the job", "did I tell you I moved?") or ask for something ("can you move my flight"). */
const TELLING_QUESTION = /^(?:(?:can|could|would|will) you\b|please\b|did i (?:tell|mention)\b|have i (?:told|mentioned)\b|guess what\b|you know what\b|remember (?:when|that)\b)/i;

/**
 * Thanks for something, and nothing else ("thanks for all the help so far by the way", "thank you for the
 * tips!"): the reply's one clause is gratitude. One that goes on to tell ("thanks, I start on Monday") or
 * names what was done ("thanks for booking Kinugawa") is read as any statement.
 */
const GRATITUDE = /^(?:many thanks|thanks|thank you|thank u|thx|ty|cheers)\b(?:\s+(?:so much|a lot|again|heaps|loads))?(?:\s+for\b[^,;:.!?]*)?[\s.!]*$/i;

/** A statement with a question tag ("Dr. Lindqvist does the root chemistry work, right?"): it tells. */
const TAG_QUESTION = /,\s*(?:right|no|yes|yeah|correct|isn't it|aren't they|don't you|didn't i|innit|na|eh|no\?)\s*\?\s*["')\]]*\s*$/i;
/**
 * A question that tells while it asks: a tag question, or a statement with a number before a short
 * question ("taking 5g a day, ok to keep on race week?", "Papa ka birthday 9 August ko hai, aa rahi ho
 * na?"). A question that only proposes or checks a value ("Could we do August 15?", "22C is an aisle?")
 * still only asks.
 */
function statesInAsking(lower: string): boolean {
  if (TAG_QUESTION.test(lower)) return true;
  const comma = lower.lastIndexOf(', ');
  if (comma < 0) return false;
  const told = lower.slice(0, comma);
  return /\d/.test(told) && told.split(/\s+/).length >= 3 && !/^(?:what|what's|whats|when|where|who|whose|how|how's|which|why|can|could|would|will|should|shall|is|are|do|does|did)\b/.test(told);
}

/** Emoji, symbols and punctuation do not count as content. */
const NON_WORD = /[^\p{L}\p{N}'\s]/gu;

/**
 * `names` are the conversation's known participants: "Hey Mel!" is a greeting even though "Mel" is not a filler.
 * Capitalized single words next to fillers are treated as vocatives only when they are in `names`.
 */
export function classifyNoise(statement: string, names: ReadonlySet<string> = new Set()): NoiseVerdict {
  const raw = statement.replace(/[\u2018\u2019]/g, "'").trim();
  if (raw === '') return { noise: true, reason: 'empty' };
  const words = fillerVerdict(raw, names);
  if (words.noise) return words;
  const shape = classifyShape(raw, names);
  return shape ? { noise: true, reason: shape } : { noise: false };
}

/** Made only of filler phrases and words (and names of participants)? Anything with a number is not. (Exported for its test.) */
export function fillerVerdict(raw: string, names: ReadonlySet<string>): NoiseVerdict {
  if (/\d/.test(raw)) return { noise: false };
  let norm = ` ${raw.toLowerCase().replace(NON_WORD, ' ').replace(/\s+/g, ' ').trim()} `;
  if (norm.trim() === '') return { noise: true, reason: 'only symbols or emoji' };
  const lowerNames = new Set([...names].map((n) => n.toLowerCase()));
  // A word no phrase holds, no filler and no name stays whatever the phrases remove: the statement is
  // kept, as the whole check below would decide (most statements: "pottery", "Lisbon", "budget").
  for (const w of norm.trim().split(' ')) if (!FILLER_WORDS.has(w) && !FILLER_PHRASE_WORDS.has(w) && !lowerNames.has(w)) return { noise: false };
  let phraseHit = false;
  for (const needle of FILLER_NEEDLES) {
    while (norm.includes(needle)) {
      norm = norm.replace(needle, ' ');
      phraseHit = true;
    }
  }
  const words = norm.trim() === '' ? [] : norm.trim().split(' ');
  const leftover = words.filter((w) => !FILLER_WORDS.has(w) && !lowerNames.has(w));
  if (leftover.length > 0) return { noise: false };
  const kind = phraseHit || words.some((w) => !['hi', 'hello', 'hey', 'heya', 'hiya', 'yo', 'howdy', 'bye', 'goodbye'].includes(w) && !lowerNames.has(w))
    ? 'acknowledgement or small talk'
    : 'greeting';
  return { noise: true, reason: `${kind} without information` };
}

/**
 * Questions, reactions and short fragments (see the header): the reason, or null for a statement. These
 * carry words outside the filler lists, so the word check below would keep them.
 */
function classifyShape(raw: string, names: ReadonlySet<string>): string | null {
  const text = raw.replace(/^(?:[^\p{L}\p{N}]+)/u, '');
  const lower = text.toLowerCase();
  const hasNumber = /\d/.test(text);
  const own = capitalizedWords(text, names);
  if (/\?\s*["')\]]*\s*$/.test(text) && !TELLING_QUESTION.test(lower) && !statesInAsking(lower)) return 'a question without information';
  if (!hasNumber && own.length === 0 && GRATITUDE.test(lower)) return 'thanks without information';
  if (!FIRST_PERSON.test(lower) && !hasNumber && own.length === 0) {
    if (INTERJECTION.test(lower) || TO_LISTENER.test(lower)) return 'a reaction without information';
    const words = lower.replace(/[^\p{L}\p{N}'\s]/gu, ' ').split(/\s+/).filter((w) => w !== '' && !names.has(w));
    // A short capitalized answer ("Berlin.", "Vegetarian.") may be all a reply says: only lowercase
    // fragments and ones made of filler words go.
    // (an acronym with words after it names something too: "KAIST in daejeon!!"; a shout does not: "OMG so
    // cool", "LU!!!")
    const first = (text.split(/\s+/)[0] ?? '').replace(/[^\p{L}']+$/u, '');
    const named = /^\p{Lu}\p{Ll}+(?:'s)?$/u.test(first) || (words.length >= 2 && /^\p{Lu}{2,6}$/u.test(first) && !FILLER_WORDS.has(first.toLowerCase()));
    if (words.length <= 3 && !named) return 'a fragment without information';
    if (words.length <= 3 && words.every((w) => FILLER_WORDS.has(w) || /^(?:so|too|pics?|pictures?|photos?|news|wait|nice|name|again)$/.test(w))) return 'a fragment without information';
  }
  return null;
}
