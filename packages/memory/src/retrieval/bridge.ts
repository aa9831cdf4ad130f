/**
 * Questions asked through a relation: "Which neighbourhood did Siddharth's wife find a flat in?" The
 * answer ("Meera found us a flat in Coyoacán") names the person, not the relation; another statement
 * says who the relation is ("my wife Meera wants to join the lessons"). Retrieval reads, among its best
 * candidates, the names statements give for the relations the question names, and searches again with
 * them (pipeline.ts: the `bridge` list), so the statement about that person can reach the top.
 *
 * Relations are words of kinship and of people around someone (a wife, a son, a flatmate, a boss),
 * never names: the lexicon is about the kind of question.
 */

/** Words that name a person by their relation to someone. */
const RELATIONS = [
  'wife', 'husband', 'partner', 'spouse', 'girlfriend', 'boyfriend', 'fiance', 'fiancé', 'fiancee', 'fiancée', 'ex',
  'son', 'daughter', 'kid', 'child', 'baby', 'sister', 'brother', 'sibling', 'mother', 'mom', 'mum', 'father', 'dad',
  'grandmother', 'grandfather', 'grandma', 'grandpa', 'aunt', 'uncle', 'cousin', 'niece', 'nephew', 'stepson', 'stepdaughter',
  'friend', 'mate', 'buddy', 'flatmate', 'roommate', 'housemate', 'neighbour', 'neighbor', 'colleague', 'coworker', 'co-worker',
  'boss', 'manager', 'landlord', 'landlady', 'doctor', 'gp', 'dentist', 'therapist', 'coach', 'tutor', 'teacher', 'lawyer',
];
const RELATION_SET = new Set(RELATIONS);

/** The relations a question asks through ("Siddharth's wife", "her son", "the landlord"). */
export function relationsAsked(query: string): string[] {
  const out = new Set<string>();
  for (const w of query.toLowerCase().normalize('NFKC').split(/[^\p{L}'-]+/u)) {
    const bare = w.replace(/'s$/, '');
    if (RELATION_SET.has(bare)) out.add(bare);
  }
  return [...out];
}

const NAME = "(\\p{Lu}[\\p{L}'-]+)";
const OWNER = "(?:my|his|her|our|their|\\p{Lu}[\\p{L}'-]+'s)";

/** "my wife Meera", "her brother, Tom", "Meera, my wife", "Meera is my wife", "Bea is my mate". */
function patternsFor(relation: string): RegExp[] {
  const rel = `(?:${relation.replace(/[-]/g, '\\-')})`;
  return [
    new RegExp(`\\b${OWNER}\\s+(?:new\\s+|old\\s+|little\\s+|big\\s+|younger\\s+|older\\s+|best\\s+)?${rel},?\\s+${NAME}`, 'gu'),
    new RegExp(`${NAME},\\s+${OWNER}\\s+(?:new\\s+|old\\s+|best\\s+)?${rel}\\b`, 'gu'),
    new RegExp(`${NAME}\\s+(?:is|was)\\s+${OWNER}\\s+(?:new\\s+|old\\s+|best\\s+)?${rel}\\b`, 'gu'),
  ];
}

/** Words that open a sentence capitalized and name no one. */
const NOT_NAMES = new Set(['I', 'The', 'A', 'An', 'And', 'But', 'So', 'Also', 'He', 'She', 'They', 'We', 'It', 'This', 'That', 'My', 'His', 'Her', 'Our', 'Their']);

/** The names `content` gives for `relations` ("my wife Meera" → Meera for `wife`). */
export function namesForRelations(content: string, relations: readonly string[]): string[] {
  const out = new Set<string>();
  for (const relation of relations) {
    if (!content.toLowerCase().includes(relation)) continue;
    for (const re of patternsFor(relation)) {
      for (const m of content.matchAll(re)) if (!NOT_NAMES.has(m[1])) out.add(m[1]);
    }
  }
  return [...out];
}
