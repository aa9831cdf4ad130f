/** English stopwords (function words and very common verbs) shared by keyword extraction and summaries. */
export const STOPWORDS: ReadonlySet<string> = new Set(`
a about above after again against all almost also although always am among an and another any anybody anyone
anything anyway anywhere are aren't around as at be became because become been before being below between both
but by can can't cannot could couldn't did didn't do does doesn't doing don't done down during each either else
enough even ever every everybody everyone everything few for from further get gets getting got gotten had hadn't has
hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how how's however i i'd
i'll i'm i've if in into is isn't it it's its itself just let let's like lot lots made make makes many may me might
more most much must mustn't my myself near need needs neither never no nor not nothing now of off often oh ok okay
on once one only or other others otherwise ought our ours ourselves out over own per perhaps please quite rather
really said same say says see seem seemed seems shall shan't she she'd she'll she's should shouldn't since so some
somebody someone something sometimes somewhat still such sure than that that's the their theirs them themselves then
there there's these they they'd they'll they're they've thing things this those though through thus to too toward
towards under until up upon us use used using very via was wasn't way we we'd we'll we're we've well were weren't
what what's whatever when when's where where's whether which while who who's whom whose why why's will with within
without won't would wouldn't yeah yes yet you you'd you'll you're you've your yours yourself yourselves
gonna wanna gotta kinda sorta im ive dont cant wont thats youre hey hi hello thanks thank wow cool great awesome
good nice really pretty super totally definitely actually basically literally anyway stuff also lol haha
go goes going went come comes coming came take takes took taking know knows knew think thinks thought feel feels felt
yesterday today tomorrow tonight last next ago shared image recently lately soon unfortunately fortunately ago
want wants wanted tell told ask asked try tried look looks looked keep kept give gave given put puts
`.trim().split(/\s+/));
