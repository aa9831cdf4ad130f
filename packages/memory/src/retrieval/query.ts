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
 * Dates: a question that names a calendar date or month ("What did Maria donate in December 2023?",
 * "… as mentioned on 3 June, 2023?") asks about what was said or happened around then; memories from
 * other times are scaled down (fusion.ts `timeFocus`). A bare year is too broad to steer anything.
 *
 * Pure functions over plain data.
 */
import { isEventRole } from '@strata/store';


/** The normalized form speakers are compared in. */
export function normalizeSpeaker(name: string): string {
  return name.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, ' ');
}

/** Is this speaker a person (or agent) a query could name, rather than a role? */
export function isNamedSpeaker(speaker: string | null | undefined): speaker is string {
  return !!speaker && speaker.trim() !== '' && !isEventRole(normalizeSpeaker(speaker));
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

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\\.?`;
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';
const YEAR = '(\\d{4})';
const DAY_MONTH_YEAR = new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'giu');
const MONTH_DAY_YEAR = new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'giu');
const MONTH_YEAR = new RegExp(`\\b${MONTH},?\\s+${YEAR}\\b`, 'giu');
const ISO_DATE = /\b(\d{4})-(\d{2})-(\d{2})\b/gu;

const DAY_MS = 86_400_000;
/** How far before a named date its window opens: "the week before", "two weeks before" a date, or a
 * past event told on that day ("last weekend"), still belong to it. */
export const DATE_LOOKBACK_DAYS = 14;

export interface TimeRange {
  /** ms since the epoch, inclusive */
  start: number;
  /** ms since the epoch, exclusive */
  end: number;
}

function monthIndex(name: string): number {
  const n = name.toLowerCase().replace(/\.$/, '');
  return MONTHS.findIndex((m) => m === n || m.slice(0, 3) === n || (n === 'sept' && m === 'september'));
}

/**
 * The time windows of the calendar dates and months a query names (UTC): a day D gives
 * [D − DATE_LOOKBACK_DAYS, D + 1 day); a month gives [its first day − DATE_LOOKBACK_DAYS, its end).
 */
export function queryTimeRanges(query: string): TimeRange[] {
  const out: TimeRange[] = [];
  const text = query.normalize('NFKC');
  const taken: Array<[number, number]> = [];
  const day = (y: number, m: number, d: number, at: number, len: number) => {
    if (m < 0 || d < 1 || d > 31) return;
    const t = Date.UTC(y, m, d);
    out.push({ start: t - DATE_LOOKBACK_DAYS * DAY_MS, end: t + DAY_MS });
    taken.push([at, at + len]);
  };
  for (const m of text.matchAll(DAY_MONTH_YEAR)) day(Number(m[3]), monthIndex(m[2]), Number(m[1]), m.index!, m[0].length);
  for (const m of text.matchAll(MONTH_DAY_YEAR)) day(Number(m[3]), monthIndex(m[1]), Number(m[2]), m.index!, m[0].length);
  for (const m of text.matchAll(ISO_DATE)) day(Number(m[1]), Number(m[2]) - 1, Number(m[3]), m.index!, m[0].length);
  for (const m of text.matchAll(MONTH_YEAR)) {
    const at = m.index!;
    if (taken.some(([a, b]) => at < b && at + m[0].length > a)) continue; // part of a full date
    const month = monthIndex(m[1]);
    if (month < 0) continue;
    const y = Number(m[2]);
    out.push({ start: Date.UTC(y, month, 1) - DATE_LOOKBACK_DAYS * DAY_MS, end: Date.UTC(y, month + 1, 1) });
  }
  return out;
}
