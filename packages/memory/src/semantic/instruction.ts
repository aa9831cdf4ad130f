/**
 * Reading a semantic maintenance instruction (CONTRACT §7): is it a forget or an update, and what
 * should be forgotten.
 *
 * Decisions:
 * - `auto` means forget when the instruction uses the imperative verbs forget/delete/remove/erase
 *   (base form only: "I deleted my old account" is news, not a request), except "don't forget" /
 *   "never forget" / "do not forget" (a request to remember, so an update).
 * - The forget target is what follows the verb, without filler ("everything about", "anything
 *   related to", "the fact that", "all memories of"). "my" makes the subject the user; "my sister's
 *   address" makes it `sister`. Qualifiers old/previous/former/past/earlier/outdated and
 *   current/new/latest/present are read but never filter: they order the matches (see forget.ts).
 * - When the target is a statement ("forget that I like pizza"), its facts are extracted too.
 */
import { extractFacts, type Fact } from './facts';
import { SemanticError } from './errors';
import { canonicalSubject, FUNCTION_WORDS, isSingleValued, knownAttribute, squash, stem, words } from '../text';

export type InstructionKind = 'forget' | 'update';
export type InstructionMode = 'forget' | 'update' | 'auto';

const FORGET_VERB = /\b(?:forget|delete|remove|erase)\b/i;
const NOT_FORGET = /\b(?:do not|don't|dont|never|not)\s+(?:ever\s+)?(?:forget|delete|remove|erase)\b/i;

/** forget or update; `mode` may be omitted/null (auto). Throws `SemanticError` for another mode. */
export function classifyInstruction(instruction: string, mode?: string | null): InstructionKind {
  const m = mode === undefined || mode === null ? 'auto' : String(mode).toLowerCase();
  if (m === 'forget' || m === 'update') return m;
  if (m !== 'auto') {
    const message = `mode must be forget, update or auto, not "${String(mode)}".`;
    throw new SemanticError('validation_failed', message, [{ path: '/mode', message }]);
  }
  const text = instruction.replace(/[’‘]/g, '\'');
  return FORGET_VERB.test(text.replace(new RegExp(NOT_FORGET.source, 'gi'), ' ')) ? 'forget' : 'update';
}

export type Qualifier = 'old' | 'current';

export interface ForgetTarget {
  /** The target as written, filler removed ("my old address"). */
  phrase: string;
  /** Content words of the target (no stop words, qualifiers or filler). */
  words: string[];
  /** Their stems, for matching. */
  stems: string[];
  /** Canonical attributes the target names ("address" -> residence). */
  attributes: string[];
  /** `user` for "my …", another subject for "my sister's …", null when unsaid. */
  subject: string | null;
  qualifier: Qualifier | null;
  /** Facts stated in the target ("forget that I like pizza"). */
  facts: Fact[];
}

const OLD = new Set(['old', 'previous', 'former', 'past', 'earlier', 'outdated', 'prior']);
const CURRENT = new Set(['current', 'new', 'latest', 'present', 'newest']);
const FILLER = new Set([
  'everything', 'anything', 'something', 'every', 'memory', 'memories', 'info', 'information', 'stuff', 'thing',
  'things', 'detail', 'details', 'data', 'mention', 'mentions', 'fact', 'facts', 'related', 'regarding',
  'concerning', 'whatever', 'know', 'remember', 'said', 'told', 'record', 'records', 'entry', 'entries',
  'forget', 'delete', 'remove', 'erase', 'please', 'entirely', 'completely', 'permanently',
]);

/** What an instruction asks to forget. */
export function extractForgetTarget(instruction: string): ForgetTarget {
  let text = squash(instruction.replace(/[’‘]/g, '\''));
  const verb = FORGET_VERB.exec(text);
  if (verb) text = text.slice(verb.index + verb[0].length);
  text = text
    .replace(/^[\s,:]*(?:it\s+)?(?:(?:all|every|any)\s+(?:of\s+)?(?:the\s+)?(?:memories|memory|facts?|info(?:rmation)?|things?|details?)|everything|anything|whatever you know|what you know|all)?\s*(?:(?:you\s+)?(?:know|have|remember|stored|store)\s+)?(?:about|regarding|concerning|related to|on|of|with)?\s*/i, '')
    .replace(/^(?:the fact\s+)?that\s+/i, '')
    .replace(/\s+(?:from (?:your |the )?memory|please|for me|for good|entirely|completely|permanently|now)\s*$/i, '')
    .replace(/[.!?]+$/, '')
    .trim();
  const phrase = text;
  const facts = /^(?:i|my)\b/i.test(phrase) ? extractFacts(phrase) : [];

  let subject: string | null = null;
  const possessive = /\bmy\s+([a-z]+)'s\s+/i.exec(phrase);
  if (possessive) subject = canonicalSubject(possessive[1]);
  else if (/\b(?:my|i|me|mine)\b/i.test(phrase)) subject = 'user';

  let qualifier: Qualifier | null = null;
  const kept: string[] = [];
  for (const w of words(phrase)) {
    if (OLD.has(w)) {
      qualifier = 'old';
      continue;
    }
    if (CURRENT.has(w)) {
      qualifier = qualifier ?? 'current';
      continue;
    }
    const bare = w.replace(/'s$/, '');
    if (FUNCTION_WORDS.has(bare) || FILLER.has(bare)) continue;
    if (possessive && bare === possessive[1].toLowerCase()) continue;
    kept.push(bare);
  }
  const attributes: string[] = [];
  const add = (a: string | null): void => {
    if (a && !attributes.includes(a)) attributes.push(a);
  };
  // "phone number" names one attribute; a word not part of a known pair may name one by itself.
  // Multi-valued attributes (likes) are not targets by name: "forget that I like pizza" is about
  // pizza, not about every like (its fact carries the value).
  for (let i = 0; i < kept.length;) {
    const pair = i + 1 < kept.length ? knownAttribute(`${kept[i]} ${kept[i + 1]}`) : null;
    const found = pair ?? knownAttribute(kept[i]);
    if (found && isSingleValued(found)) add(found);
    i += pair ? 2 : 1;
  }
  for (const f of facts) if (f.single_valued) add(f.attribute);
  return { phrase, words: kept, stems: kept.map(stem), attributes, subject, qualifier, facts };
}
