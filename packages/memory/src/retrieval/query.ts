/**
 * Query analysis: what a query says about the memories that answer it, beyond its words.
 *
 * Speakers: a question that names a person ("What does Melanie do to destress?") is answered, nearly
 * always, by what that person said: on the LoCoMo development conversations, 449 of the 463 evidence
 * turns of questions naming one speaker were that speaker's own turns. Word matching alone cannot use
 * this (every turn of a two-person chat contains one of two names, in its prefix or its context), so
 * retrieval scales down units said by *other* people (fusion.ts `speakerFocus`).
 *
 * Questions: a memory that is itself a question ("Melanie: Do you like to paint too?") records that
 * something was asked, rarely a fact that answers anything; yet it shares the words of questions about
 * its topic and ranks high for them. Retrieval scales such units down (fusion.ts `questionFactor`).
 *
 * Pure functions over plain data.
 */

/** Speakers that are roles, not people: a query cannot name them, and they are never scaled down. */
const ROLES = new Set(['user', 'assistant', 'system', 'tool']);

/** The normalized form speakers are compared in. */
export function normalizeSpeaker(name: string): string {
  return name.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
}

/** Is this speaker a person (or agent) a query could name, rather than a role? */
export function isNamedSpeaker(speaker: string | null | undefined): speaker is string {
  return !!speaker && speaker.trim() !== '' && !ROLES.has(normalizeSpeaker(speaker));
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The speakers among `known` that the query names: the full name or, for a name of several words, its
 * first word (people are called by their first name), as whole words, any case, possessives included
 * ("Caroline's"). Returns normalized names.
 */
export function speakersNamedIn(query: string, known: Iterable<string>): Set<string> {
  const text = query.normalize('NFKC').toLowerCase();
  const named = new Set<string>();
  for (const speaker of known) {
    if (!isNamedSpeaker(speaker)) continue;
    const full = normalizeSpeaker(speaker);
    const forms = [full];
    const first = full.split(' ')[0];
    if (first !== full && first.length >= 3) forms.push(first);
    for (const form of forms) {
      // \p{L}\p{N} boundaries instead of \b, so names with accents or digits work too
      const re = new RegExp(`(?<![\\p{L}\\p{N}])${escape(form)}(?![\\p{L}\\p{N}])`, 'u');
      if (re.test(text)) {
        named.add(full);
        break;
      }
    }
  }
  return named;
}

/** Trailing bracketed or parenthesized notes (a shared photo's caption, an annotation) and spacing. */
const TRAILING_NOTES = /(?:\s*(?:\[[^\]]*\]|\([^)]*\)))+\s*$/u;

/** Is this memory's text a question (its last sentence ends with "?", trailing notes aside)? */
export function isQuestion(content: string): boolean {
  return /\?\s*$/u.test(content.replace(TRAILING_NOTES, ''));
}
