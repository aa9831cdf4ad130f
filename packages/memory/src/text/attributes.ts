/**
 * The fact vocabulary: one table of attribute names, used both when consolidation tags a stored statement
 * (`MemoryUnit.attribute`) and when a semantic update or forget reads an instruction, so that "my address
 * is 5 Pine Road" and "I moved to Paris" are the same attribute (`residence`) for both, and a correction
 * counts for both.
 *
 * Conventions: attributes are canonical keys (`residence`, `employer`, `phone`, …); `attributeLabel` is the
 * name a stored unit carries, equal to the key except where a longer name reads better on a memory
 * (`phone` → "phone number", `email` → "email address"); `canonicalAttribute` maps either back to the key.
 * Subject `user` is the speaker ("I", "my").
 */
import { stem } from './stem';
import { squash } from './words';

/** Alias -> canonical attribute. Multi-word aliases are matched as whole phrases. */
const ATTRIBUTE_ALIASES: Record<string, string> = {
  'address': 'residence', 'home address': 'residence', 'street address': 'residence', 'home': 'residence',
  'residence': 'residence', 'city': 'residence', 'place': 'residence', 'location': 'residence',
  'apartment': 'residence', 'flat': 'residence', 'house': 'residence', 'where i live': 'residence',
  'employer': 'employer', 'company': 'employer', 'workplace': 'employer', 'work': 'employer',
  'job': 'occupation', 'occupation': 'occupation', 'profession': 'occupation', 'role': 'occupation', 'position': 'occupation',
  'phone': 'phone', 'phone number': 'phone', 'number': 'phone', 'mobile': 'phone', 'cell': 'phone', 'telephone': 'phone',
  'email': 'email', 'e-mail': 'email', 'e mail': 'email', 'email address': 'email', 'e-mail address': 'email', 'mail': 'email',
  'name': 'name', 'age': 'age', 'birthday': 'birthday', 'date of birth': 'birthday', 'birth date': 'birthday', 'bday': 'birthday',
  'partner': 'partner', 'girlfriend': 'partner', 'boyfriend': 'partner', 'wife': 'partner', 'husband': 'partner', 'spouse': 'partner',
  'likes': 'likes', 'like': 'likes', 'preference': 'likes', 'preferences': 'likes',
  'fave color': 'favorite color', 'favorite colour': 'favorite color',
};

/** The name a stored unit carries for a canonical attribute, where it differs from the key. */
const LABELS: Record<string, string> = { phone: 'phone number', email: 'email address' };

const MULTI_VALUED = new Set(['likes']);

/** Does a person hold one value of this attribute at a time (so a new value replaces the old)? */
export function isSingleValued(attribute: string): boolean {
  return !MULTI_VALUED.has(attribute);
}

/** The canonical attribute for a name ("home address" -> residence, "phone number" -> phone), or the cleaned name. */
export function canonicalAttribute(name: string): string {
  const key = squash(name.toLowerCase().replace(/favourite/g, 'favorite').replace(/[_-]+/g, ' '));
  if (Object.prototype.hasOwnProperty.call(ATTRIBUTE_ALIASES, key)) return ATTRIBUTE_ALIASES[key];
  const stemmed = key.split(' ').map(stem).join(' ');
  for (const [alias, canonical] of Object.entries(ATTRIBUTE_ALIASES)) {
    if (alias.split(' ').map(stem).join(' ') === stemmed) return canonical;
  }
  return key;
}

/** The canonical attribute for a word or phrase when it is a known alias, else null. */
export function knownAttribute(name: string): string | null {
  const c = canonicalAttribute(name);
  return Object.values(ATTRIBUTE_ALIASES).includes(c) ? c : null;
}

/** The attribute name a stored unit carries: "my new phone" -> "phone number", "my address" -> "residence". */
export function attributeLabel(name: string): string {
  const c = canonicalAttribute(name.toLowerCase().replace(/^(?:new|current|updated|latest)\s+/, ''));
  return LABELS[c] ?? c;
}

const SELF = new Set(['user', 'i', 'me', 'my', 'myself', 'self', 'speaker']);

/** Is this subject word the speaker? */
export function isSelf(subject: string): boolean {
  return SELF.has(subject);
}

/** Normalized subject: the speaker is `user`. */
export function canonicalSubject(subject: string | null | undefined): string {
  if (!subject) return 'user';
  const s = squash(subject.toLowerCase());
  return SELF.has(s) ? 'user' : s;
}
