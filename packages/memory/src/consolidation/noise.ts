/**
 * Step 2: denoising. A statement made only of greetings, fillers, acknowledgements and small talk
 * carries nothing worth remembering. Anything with a number, or any content word outside those lists,
 * is kept ("ok, my flight is at 9" stays).
 */

export type NoiseVerdict = { noise: false } | { noise: true; reason: string };

/** Multi-word small-talk formulas, removed before the word check (normalized: lowercase, straight quotes). */
const FILLER_PHRASES = [
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
];

const FILLER_WORDS = new Set([
  'hi', 'hello', 'hey', 'heya', 'hiya', 'yo', 'howdy', 'greetings', 'bye', 'goodbye', 'cya', 'cheers',
  'ok', 'okay', 'k', 'kk', 'okey', 'sure', 'yes', 'yeah', 'yep', 'yup', 'ya', 'no', 'nope', 'nah',
  'thanks', 'thx', 'ty', 'tnx', 'thank', 'welcome', 'np',
  'lol', 'lmao', 'rofl', 'haha', 'hahaha', 'hehe', 'heh', 'omg', 'wow', 'woah', 'whoa', 'woohoo', 'yay', 'oh', 'ah', 'aw', 'aww',
  'hmm', 'hm', 'um', 'uh', 'umm', 'mhm', 'uhm', 'huh',
  'cool', 'great', 'nice', 'awesome', 'amazing', 'perfect', 'fine', 'good', 'alright', 'right', 'wonderful', 'fantastic',
  'excellent', 'agree', 'sweet', 'neat', 'indeed', 'totally', 'absolutely', 'definitely', 'exactly', 'agreed', 'true', 'correct',
  'so', 'really', 'very', 'too', 'just', 'well', 'and', 'that', "that's", 'is', 'it', "it's", 'you', 'all', 'man', 'dude',
  'again', 'much', 'lot', 'a', 'the', 'there', 'guys', 'everyone', 'buddy', 'friend',
]);

/** Emoji, symbols and punctuation do not count as content. */
const NON_WORD = /[^\p{L}\p{N}'\s]/gu;

/**
 * `names` are the conversation's known participants: "Hey Mel!" is a greeting even though "Mel" is not a filler.
 * Capitalized single words next to fillers are treated as vocatives only when they are in `names`.
 */
export function classifyNoise(statement: string, names: ReadonlySet<string> = new Set()): NoiseVerdict {
  const raw = statement.replace(/[\u2018\u2019]/g, "'").trim();
  if (raw === '') return { noise: true, reason: 'empty' };
  if (/\d/.test(raw)) return { noise: false };
  let norm = ` ${raw.toLowerCase().replace(NON_WORD, ' ').replace(/\s+/g, ' ').trim()} `;
  if (norm.trim() === '') return { noise: true, reason: 'only symbols or emoji' };
  let phraseHit = false;
  for (const p of FILLER_PHRASES) {
    const needle = ` ${p} `;
    while (norm.includes(needle)) {
      norm = norm.replace(needle, ' ');
      phraseHit = true;
    }
  }
  const words = norm.trim() === '' ? [] : norm.trim().split(' ');
  const lowerNames = new Set([...names].map((n) => n.toLowerCase()));
  const leftover = words.filter((w) => !FILLER_WORDS.has(w) && !lowerNames.has(w));
  if (leftover.length > 0) return { noise: false };
  const kind = phraseHit || words.some((w) => !['hi', 'hello', 'hey', 'heya', 'hiya', 'yo', 'howdy', 'bye', 'goodbye'].includes(w) && !lowerNames.has(w))
    ? 'acknowledgement or small talk'
    : 'greeting';
  return { noise: true, reason: `${kind} without information` };
}
