/**
 * Who holds a role: "Marcus from platform takes over as our manager", "the new landlord is a company
 * called Northgate Lettings", "Priya runs the team now", "Mathieu will be the only admin from now". A role
 * has one holder at a time (a team's manager, a flat's landlord, a band's drummer), so a statement that
 * gives a new holder ends what earlier statements said of another holder in that role ("Helen is the most
 * process-heavy manager I've ever had", "landlord is still Gary"). No facet says this: the holder is
 * a third person, and the statement is about the role, not about them.
 *
 * The roles are nouns of the kind a group or an account has one of; "friend", "colleague" or
 * "flatmate" are not (a person has several).
 */
import { STOPWORDS, stemPlural, withoutSpeakerPrefix } from '../text';

/** Roles held by one person at a time in a team, a home, an account or a band. */
const ROLES = ['manager', 'boss', 'landlord', 'landlady', 'coach', 'captain', 'lead', 'admin', 'administrator', 'owner', 'teacher',
  'tutor', 'instructor', 'trainer', 'gp', 'doctor', 'dentist', 'vet', 'therapist', 'physio', 'consultant', 'supervisor', 'advisor', 'adviser',
  'mentor', 'editor', 'chair', 'chairman', 'chairwoman', 'president', 'treasurer', 'secretary', 'organiser', 'organizer', 'director', 'head',
  'principal', 'headteacher', 'caretaker', 'handyman', 'drummer', 'bassist', 'guitarist', 'singer', 'keyboardist', 'goalkeeper', 'keeper',
  'agent', 'handler', 'caseworker', 'contact', 'point of contact', 'account manager', 'project manager', 'team lead', 'tech lead'];

// longest first, so "account manager" is read before "manager"
const ROLE = `(?:${[...ROLES].sort((a, b) => b.length - a.length).join('|')})`;
const NAME = String.raw`(\p{Lu}[\p{L}'-]+(?:\s+\p{Lu}[\p{L}'-]+)?)`;
const OUR = String.raw`(?:our|the|my|your|their|his|her|a)`;

/** "Marcus takes over as our manager", "Bea is our new drummer", "Mathieu will be the only admin". */
const HOLDER_FIRST = new RegExp(String.raw`${NAME}(?:\s+from\s+[\p{L}-]+)?\s+(?:takes over as|took over as|is taking over as|will take over as|is now|'s now|is|'s|will be|becomes|became|has become|stepped in as|steps in as)\s+(?:${OUR}\s+)?(?:new\s+|only\s+|acting\s+|interim\s+)?(${ROLE})\b(?!\s+(?:of|for)\s+(?:the\s+)?(?:year|month|day))`, 'u');
/** "the new landlord is a company called Northgate Lettings", "our manager now is Marcus", "new GP: Dr. Kaya". */
const ROLE_FIRST = new RegExp(String.raw`\b(?:${OUR}\s+)?(?:new|current|acting|interim)\s+(${ROLE})\s*(?:is|will be|'s|:|=|now is|is now)\s+(?:(?:a|an|the)\s+(?:company|firm|agency|guy|woman|man|lady)\s+(?:called|named)\s+)?(?:Dr\.?\s+|Mr\.?\s+|Mrs\.?\s+|Ms\.?\s+)?${NAME}`, 'u');
/** "Priya runs the team now", "Emeka will handle repairs from now on": a holder by what the role does. */
const RUNS = new RegExp(String.raw`${NAME}\s+(?:runs|is running|will run|manages|is managing|will manage|leads|is leading|will lead|handles|will handle|is handling|coaches|will coach|looks after|will look after|takes care of|will take care of)\s+(?:the\s+|our\s+)?(?:[\p{L}-]+\s+){0,2}?([\p{L}-]+)\s+(?:now|from now on|going forward|from (?:today|monday|next week))\b`, 'u');

export interface RoleHolder {
  /** the role as written in the role list ("manager"), or, for RUNS, what is run ("team", "repairs") */
  role: string;
  /** the new holder's name as written */
  holder: string;
  /** the role is what the holder runs ("Priya runs the team now"): only a statement of another running it is ended */
  byWhatIsRun?: boolean;
}

/** Someone running, managing or handling a thing, whenever: what an earlier holder of a RUNS role said or was said to do. */
const RUNS_ANY = new RegExp(String.raw`${NAME}\s+(?:runs|ran|is running|was running|will run|manages|managed|is managing|leads|led|is leading|handles|handled|is handling|will handle|coaches|coached|looks after|looked after|takes care of|took care of)\s+(?:the\s+|our\s+)?((?:[\p{L}-]+\s+){0,2}[\p{L}-]+)`, 'gu');

/** The role a statement gives a new holder of, or null. A question gives none. */
export function newRoleHolder(text: string): RoleHolder | null {
  if (/\?\s*$/.test(text)) return null;
  const a = HOLDER_FIRST.exec(text);
  // "Helen is the most process-heavy manager I've ever had" is no new holder: only "new", "now", a
  // taking-over verb or "will be" make one
  if (a && /\b(?:takes over|took over|taking over|take over|now|new|will be|becomes|became|become|stepped in|steps in|only|acting|interim)\b/i.test(a[0])) return { role: a[2].toLowerCase(), holder: a[1] };
  const b = ROLE_FIRST.exec(text);
  if (b) return { role: b[1].toLowerCase(), holder: b[2] };
  const c = RUNS.exec(text);
  if (c) return { role: c[2].toLowerCase(), holder: c[1], byWhatIsRun: true };
  return null;
}

/**
 * Does an earlier statement say that someone other than `next.holder` holds `next.role`? It names the
 * role (any spelling of its stem) and a person by name who is not the new holder: "Helen is the most
 * process-heavy manager I've ever had", "my boss is Mr. Pinas", "yep the landlord is still Gary".
 */
export function namesOtherHolder(old: string, next: RoleHolder): boolean {
  const body = withoutSpeakerPrefix(old);
  const holder = next.holder.split(/\s+/)[0].toLowerCase();
  if (next.byWhatIsRun) {
    // "Ben runs the team" is ended by "Priya runs the team now"; "Marcus is buying pizza for the team" is not
    return [...body.matchAll(RUNS_ANY)].some((m) => m[2].toLowerCase().split(/\s+/).includes(next.role) && m[1].split(/\s+/)[0].toLowerCase() !== holder);
  }
  const roleStem = stemPlural(next.role.split(' ').pop() as string);
  const words = body.toLowerCase().split(/[^\p{L}'-]+/u).map((w) => stemPlural(w.replace(/'s$/, '')));
  if (!words.includes(roleStem)) return false;
  return namesOf(body).some((n) => n !== holder && n !== roleStem);
}

/** Capitalized words that are names, the first word too ("Helen is …"), lowercased. */
function namesOf(text: string): string[] {
  return text.split(/\s+/).map((t) => t.replace(/^[^\p{L}]+|(?:['’]s)?[^\p{L}]*$/gu, ''))
    .filter((t) => /^\p{Lu}\p{Ll}+$/u.test(t) && !STOPWORDS.has(t.toLowerCase())).map((t) => t.toLowerCase());
}
