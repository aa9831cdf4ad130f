/**
 * Step 7: valid time. Relative expressions ("yesterday", "last Friday", "two days ago", "next month") are
 * resolved against the event's valid time (in UTC), explicit dates ("on May 7", "7 May 2023",
 * "2023-05-07") are read as they are. The first expression in the text sets the statement's valid time;
 * every relative one gets its absolute date appended in parentheses ("yesterday (2023-05-07)") so that
 * text retrieval of dates works and a reader of the memory need not know when it was said.
 *
 * Granularity: a resolved day is that day at 00:00Z; a week is its Monday, a month its first day, a year
 * its 1 January, a weekend its Saturday. "today"/"tonight"/"this morning" keep the event's own instant.
 */

export interface TemporalResolution {
  /** RFC 3339 valid time of the statement (the anchor when no expression was found). */
  validTime: string;
  /** The text with absolute dates appended after relative expressions. */
  text: string;
  /** Expressions found, in text order, with what they resolved to. */
  expressions: { expression: string; resolved: string; relative: boolean }[];
}

type Granularity = 'instant' | 'day' | 'week' | 'weekend' | 'month' | 'year';
interface Hit { index: number; end: number; expression: string; date: Date; granularity: Granularity; relative: boolean; }

const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH_RE = '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?';
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const NUMBER_WORDS: Record<string, number> = {
  a: 1, an: 1, one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10,
  eleven: 11, twelve: 12, couple: 2, 'a couple of': 2, 'a couple': 2,
};
const NUM = '(\\d{1,3}|a couple of|a couple|an|a|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)';

const DAY_MS = 86_400_000;
const utcDay = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
const addDays = (d: Date, n: number): Date => new Date(utcDay(d).getTime() + n * DAY_MS);
const addMonths = (d: Date, n: number): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1));
/** Monday of the ISO week holding `d`. */
const weekStart = (d: Date): Date => addDays(d, -((d.getUTCDay() + 6) % 7));
const monthIndex = (name: string): number => MONTH_NAMES.findIndex((m) => m.startsWith(name.toLowerCase().replace(/\.$/, '').slice(0, 3)));
const num = (s: string): number => NUMBER_WORDS[s.toLowerCase()] ?? Number.parseInt(s, 10);

function iso(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function display(h: Hit): string {
  switch (h.granularity) {
    case 'week': return `week of ${iso(h.date)}`;
    case 'weekend': return `weekend of ${iso(h.date)}`;
    case 'month': return iso(h.date).slice(0, 7);
    case 'year': return iso(h.date).slice(0, 4);
    default: return iso(h.date);
  }
}

/** The date of `month`/`day` in the year that puts it nearest the anchor ("December 20" said in January is last year's). */
function nearestYear(anchor: Date, month: number, day: number): Date {
  const y = anchor.getUTCFullYear();
  const candidates = [y - 1, y, y + 1].map((yy) => new Date(Date.UTC(yy, month, day)));
  candidates.sort((a, b) => Math.abs(a.getTime() - anchor.getTime()) - Math.abs(b.getTime() - anchor.getTime()));
  return candidates[0];
}

function validDate(y: number, m: number, d: number): Date | null {
  const date = new Date(Date.UTC(y, m, d));
  return date.getUTCMonth() === m && date.getUTCDate() === d && m >= 0 ? date : null;
}

/** The next `month`/`day` on or after the anchor's day: a plan's date ("moved the wedding to March 14" said in June is next March's). */
function upcomingYear(anchor: Date, month: number, day: number): Date {
  const today = Date.UTC(anchor.getUTCFullYear(), anchor.getUTCMonth(), anchor.getUTCDate());
  const date = new Date(Date.UTC(anchor.getUTCFullYear(), month, day));
  return date.getTime() >= today ? date : new Date(Date.UTC(anchor.getUTCFullYear() + 1, month, day));
}

/**
 * Words that put a statement's dates ahead of it: a plan, a move of a plan, a deadline, an event said to
 * be on a day ("wedding is 6 September" said in March is this September's, not last year's, nearer by
 * eleven days). A month and day said with them is the next such day, not the nearest (which may be behind).
 */
const FUTURE_CUE = /\b(?:will|going to|gonna|moved (?:[\p{L}']+ ){0,3}to|pushed (?:back )?to|postponed|rescheduled|brought forward|booked|scheduled|planned|upcoming|due|deadline|has to be done|starts on|starting on|flying|fly out|leaving on|(?:wedding|party|appointment|exam|interview|flight|trip|surgery|operation|op|concert|match|meeting|launch|ceremony|graduation|conference|inspection|hearing|move|gig|race|show)(?: date)? (?:is|'s)(?: on| set for)?)\b|'ll\b/iu;

type Rule = { re: RegExp; resolve: (m: RegExpExecArray, anchor: Date, ahead: boolean) => Omit<Hit, 'index' | 'end' | 'expression'> | null };

const RULES: Rule[] = [
  { re: /\b(\d{4})-(\d{2})-(\d{2})\b/g, resolve: (m) => {
    const d = validDate(+m[1], +m[2] - 1, +m[3]);
    return d && { date: d, granularity: 'day', relative: false };
  } },
  { re: new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH_RE}(?:,?\\s+(\\d{4}))?\\b`, 'gi'), resolve: (m, a, ahead) => {
    if (m[2] === 'may' || m[2] === 'mar') return null; // lowercase "may"/"mar" are words, not months
    const month = monthIndex(m[2]);
    if (m[3]) { const d = validDate(+m[3], month, +m[1]); return d && { date: d, granularity: 'day', relative: false }; }
    if (!validDate(a.getUTCFullYear(), month, +m[1]) && !(month === 1 && +m[1] === 29)) return null;
    return { date: (ahead ? upcomingYear : nearestYear)(a, month, +m[1]), granularity: 'day', relative: true };
  } },
  { re: new RegExp(`\\b${MONTH_RE}\\s+(\\d{1,2})(?:st|nd|rd|th)?\\b(?:,?\\s+(\\d{4})\\b)?`, 'gi'), resolve: (m, a, ahead) => {
    if (m[1] === 'may' || m[1] === 'mar') return null;
    const month = monthIndex(m[1]);
    if (m[3]) { const d = validDate(+m[3], month, +m[2]); return d && { date: d, granularity: 'day', relative: false }; }
    if (+m[2] < 1 || +m[2] > 31) return null;
    return { date: (ahead ? upcomingYear : nearestYear)(a, month, +m[2]), granularity: 'day', relative: true };
  } },
  { re: /\b(?:the\s+)?day\s+before\s+yesterday\b/gi, resolve: (_m, a) => ({ date: addDays(a, -2), granularity: 'day', relative: true }) },
  { re: /\b(?:the\s+)?day\s+after\s+tomorrow\b/gi, resolve: (_m, a) => ({ date: addDays(a, 2), granularity: 'day', relative: true }) },
  { re: /\b(?:yesterday|last\s+night)\b/gi, resolve: (_m, a) => ({ date: addDays(a, -1), granularity: 'day', relative: true }) },
  { re: /\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b/gi, resolve: (_m, a) => ({ date: a, granularity: 'instant', relative: true }) },
  { re: /\btomorrow\b/gi, resolve: (_m, a) => ({ date: addDays(a, 1), granularity: 'day', relative: true }) },
  { re: new RegExp(`\\b${NUM}\\s+(day|week|month|year)s?\\s+ago\\b`, 'gi'), resolve: (m, a) => shift(a, -num(m[1]), m[2]) },
  { re: new RegExp(`\\bin\\s+${NUM}\\s+(day|week|month|year)s?\\b`, 'gi'), resolve: (m, a) => shift(a, num(m[1]), m[2]) },
  { re: /\b(last|past|next|this|coming)\s+(week|month|year|weekend)\b/gi, resolve: (m, a) => {
    const dir = /last|past/i.test(m[1]) ? -1 : /next|coming/i.test(m[1]) ? 1 : 0;
    switch (m[2].toLowerCase()) {
      case 'week': return { date: addDays(weekStart(a), 7 * dir), granularity: 'week', relative: true };
      case 'month': return { date: addMonths(a, dir), granularity: 'month', relative: true };
      case 'year': return { date: new Date(Date.UTC(a.getUTCFullYear() + dir, 0, 1)), granularity: 'year', relative: true };
      default: return { date: addDays(weekStart(a), 7 * dir + 5), granularity: 'weekend', relative: true };
    }
  } },
  { re: /\b(last|past|next|this|coming)\s+(sunday|monday|tuesday|wednesday|thursday|friday|saturday)\b/gi, resolve: (m, a) => {
    const target = WEEKDAYS.indexOf(m[2].toLowerCase());
    const today = a.getUTCDay();
    const kind = m[1].toLowerCase();
    if (kind === 'last' || kind === 'past') return { date: addDays(a, -(((today - target + 7) % 7) || 7)), granularity: 'day', relative: true };
    if (kind === 'next' || kind === 'coming') return { date: addDays(a, ((target - today + 7) % 7) || 7), granularity: 'day', relative: true };
    return { date: addDays(weekStart(a), (target + 6) % 7), granularity: 'day', relative: true };
  } },
];

function shift(a: Date, n: number, unit: string): Omit<Hit, 'index' | 'end' | 'expression'> | null {
  if (!Number.isFinite(n) || n > 1000) return null;
  switch (unit.toLowerCase()) {
    case 'day': return { date: addDays(a, n), granularity: 'day', relative: true };
    case 'week': return { date: addDays(a, 7 * n), granularity: 'day', relative: true };
    case 'month': {
      const d = new Date(Date.UTC(a.getUTCFullYear(), a.getUTCMonth() + n, 1));
      return { date: new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), Math.min(a.getUTCDate(), daysIn(d)))), granularity: 'month', relative: true };
    }
    default: return { date: new Date(Date.UTC(a.getUTCFullYear() + n, 0, 1)), granularity: 'year', relative: true };
  }
}

const daysIn = (d: Date): number => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();

/** All date expressions of `text`, non-overlapping, in text order (the earlier and then longer match wins). */
export function findTemporalExpressions(text: string, anchorIso: string): Hit[] {
  const anchor = new Date(anchorIso);
  if (Number.isNaN(anchor.getTime())) throw new Error(`invalid anchor time: ${anchorIso}`);
  const hits: Hit[] = [];
  const ahead = FUTURE_CUE.test(text);
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    for (const m of text.matchAll(rule.re)) {
      const r = rule.resolve(m as RegExpExecArray, anchor, ahead);
      if (r) hits.push({ ...r, index: m.index ?? 0, end: (m.index ?? 0) + m[0].length, expression: m[0] });
    }
  }
  hits.sort((x, y) => x.index - y.index || (y.end - y.index) - (x.end - x.index));
  const out: Hit[] = [];
  for (const h of hits) if (!out.some((o) => h.index < o.end && o.index < h.end)) out.push(h);
  return out;
}

export function resolveTemporal(text: string, anchorIso: string): TemporalResolution {
  const hits = findTemporalExpressions(text, anchorIso);
  let out = '';
  let pos = 0;
  for (const h of hits) {
    out += text.slice(pos, h.end);
    // Skip when the text already says the date right after the expression.
    if (h.relative && !text.slice(h.end).trimStart().startsWith(`(${display(h)}`)) out += ` (${display(h)})`;
    pos = h.end;
  }
  out += text.slice(pos);
  const first = hits[0];
  const validTime = !first ? new Date(anchorIso).toISOString()
    : first.granularity === 'instant' ? new Date(anchorIso).toISOString() : first.date.toISOString();
  return { validTime, text: out, expressions: hits.map((h) => ({ expression: h.expression, resolved: display(h), relative: h.relative })) };
}
