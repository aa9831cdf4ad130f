/**
 * Memory's stop words, in two layers of one list:
 * - `FUNCTION_WORDS`: articles, pronouns, auxiliaries, prepositions. What an instruction's target is
 *   stripped of ("forget my old address" → "address"): content verbs like "like" or "want" must survive
 *   there, because they are what the instruction is about ("forget that I like sushi").
 * - `STOPWORDS`: the function words plus conversational filler and very common verbs ("gonna", "think",
 *   "went"), for keyword extraction, summaries and the duplicate check over chat turns.
 * The store's text index keeps its own list beside its tokenizer (store sits below memory).
 */

export const FUNCTION_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'the', 'and', 'or', 'but', 'of', 'to', 'in', 'on', 'at', 'for', 'from', 'with', 'by', 'as',
  'is', 'am', 'are', 'was', 'were', 'be', 'been', 'being', 'do', 'does', 'did', 'have', 'has', 'had',
  'i', 'me', 'my', 'mine', 'myself', 'we', 'us', 'our', 'you', 'your', 'he', 'she', 'it', 'they', 'them',
  'his', 'her', 'its', 'their', 'this', 'that', 'these', 'those', 'there', 'here', 'what', 'which',
  'who', 'whom', 'when', 'where', 'why', 'how', 'all', 'any', 'some', 'so', 'just', 'please', 'also',
  'about', 'into', 'up', 'out', 'then', 'than', 'too', 'very', 'can', 'could', 'would', 'should', 'will',
  'shall', 'may', 'might', 'must', 'not', 'no', 'yes', 'if', 'it\'s', 'i\'m', 'im', 'i\'ve', 'ive',
]);

/** Conversational filler and common verbs: not topics in a chat turn. */
const CONVERSATIONAL = `
above after again against almost although always among another anybody anyone anything anyway anywhere aren't
around became because become before below between both can't cannot couldn't didn't doesn't doing don't done
down during each either else enough even ever every everybody everyone everything few further get gets getting
got gotten hadn't hasn't haven't having he'd he'll he's here's hers herself him himself how's however i'd i'll
isn't itself let let's like lot lots made make makes many more most much mustn't near need needs neither never
nor nothing now off often oh ok okay once one only other others otherwise ought ours ourselves over own per
perhaps quite rather really said same say says see seem seemed seems shan't she'd she'll she's shouldn't since
somebody someone something sometimes somewhat still such sure that's theirs themselves there's they'd they'll
they're they've thing things though through thus toward towards under until upon use used using via wasn't way
we'd we'll we're we've well weren't what's whatever when's where's whether while who's whose why's within
without won't wouldn't yeah yet you'd you'll you're you've yours yourself yourselves gonna wanna gotta kinda
sorta dont cant wont thats youre hey hi hello thanks thank wow cool great awesome good nice pretty super
totally definitely actually basically literally stuff lol haha go goes going went come comes coming came take
takes took taking know knows knew think thinks thought feel feels felt yesterday today tomorrow tonight last
next ago shared image recently lately soon unfortunately fortunately want wants wanted tell told ask asked try
tried look looks looked keep kept give gave given put puts
`.trim().split(/\s+/);

/**
 * "mine" stays a keyword in chat turns ("a dream of mine"): the conversational list never had it, and
 * keywords feed retrieval, so adding it would move the LoCoMo figures (measured: 4 turns change keywords).
 */
export const STOPWORDS: ReadonlySet<string> = new Set([...FUNCTION_WORDS, ...CONVERSATIONAL].filter((w) => w !== 'mine'));
