/**
 * Emoji as the words they stand for. Chats name things with emoji ("biscuit says hi btw 🐶", "meet Lola
 * 🐕", "VISA APPROVED 🇮🇹"): to the word indexes and the word-vector embedder an emoji is no word, so
 * "what's the name of Jules's dog?" found nothing. Each emoji's Unicode (CLDR) short name, from the
 * maintained `unicode-emoji-json` data, is read beside the text: "dog face", "dog", "Italy".
 *
 * Faces and hearts ("loudly crying face", "red heart") are left out: they say how someone feels about
 * what the words say, and as words ("face", "crying") they would match questions they do not answer.
 * The stored content never changes; only what is indexed and embedded has the words.
 */
type EmojiData = Record<string, { name: string; group: string }>;

/** Emoji (with their variation selectors, joiners and skin tones) and flag pairs. */
const EMOJI = /(?:\p{Regional_Indicator}{2})|(?:\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?(?:\u200D\p{Extended_Pictographic}(?:\uFE0F|\p{Emoji_Modifier})?)*)/gu;
const SKIN_TONE_OR_SELECTOR = /\uFE0F|[\u{1F3FB}-\u{1F3FF}]/gu;

let names: Map<string, string> | null = null;

/** emoji (without selectors or skin tones) → its words; loaded on the first emoji seen. */
function emojiNames(): Map<string, string> {
  if (names) return names;
  const data = require('unicode-emoji-json/data-by-emoji.json') as EmojiData;
  names = new Map();
  for (const [emoji, { name, group }] of Object.entries(data)) {
    if (group === 'Smileys & Emotion') continue;
    // "flag Italy": the country is what a flag says
    names.set(emoji.replace(SKIN_TONE_OR_SELECTOR, ''), group === 'Flags' ? name.replace(/^flag:?\s*/i, '') : name);
  }
  return names;
}

/** The words of a text's emoji, in order, once each (none for faces, hearts or a text without emoji). */
export function emojiWords(text: string): string[] {
  if (!/[\p{Extended_Pictographic}\p{Regional_Indicator}]/u.test(text)) return [];
  const table = emojiNames();
  const out: string[] = [];
  for (const m of text.matchAll(EMOJI)) {
    const words = table.get(m[0].replace(SKIN_TONE_OR_SELECTOR, ''));
    if (words && !out.includes(words)) out.push(words);
  }
  return out;
}

/** The text with its emoji's words after it, for embedding (unchanged without emoji). */
export function withEmojiWords(text: string): string {
  const words = emojiWords(text);
  return words.length === 0 ? text : `${text} (${words.join(', ')})`;
}
