/**
 * Offline front half of consolidation: events → statement drafts (steps 1-5), or a drop with a reason.
 * A draft is one atomic statement with everything the back half (plan.ts) needs.
 */
import type { AssetRef, EventRecord, MemoryType } from '@strata/store';
import { eventText, mediaDescription, DEFAULT_TEXT_OPTIONS, type TextOptions } from './text';
import { classifyNoise } from './noise';
import { splitStatements } from './split';
import { resolveSpeaker } from './speaker';
import { classifyMemoryType, hasStepMarkers, isHowTo } from './classify';
import { assistantChatter, continuesTurn, introducedName, isFragment, joinFragments, listsValues, namesUsedIn, openingName, resolvePronoun, stripLeadIn, withQuestion, withStatementBefore } from './discourse';

export interface StatementDraft {
  event: EventRecord;
  /** The statement without attribution. */
  text: string;
  speaker: string | null;
  /** Attribution prefix for the unit content ("Caroline: "), "" for the owner. */
  prefix: string;
  memoryType: MemoryType;
  assets: AssetRef[];
  /** Keywords proposed by an LLM (the offline path computes them later). */
  keywords?: string[];
  /** Subject/attribute/value proposed by an LLM. */
  fact?: { subject: string; attribute: string; value: string } | null;
}

export interface DraftResult {
  drafts: StatementDraft[];
  dropped: { event_id: string; reason: string }[];
}

/** Statements longer than this are cut (memory is a summary of events, not an archive of them). */
const MAX_STATEMENT_CHARS = 2000;

/** Participants named in the batch, so "Hey Mel!" is recognized as a greeting. */
export function participantNames(events: EventRecord[]): Set<string> {
  const names = new Set<string>();
  for (const e of events) {
    const s = resolveSpeaker(e, e.content_type === 'text' ? e.content : '').speaker;
    if (s && !['user', 'assistant', 'tool', 'system'].includes(s)) {
      names.add(s);
      for (const part of s.split(/\s+/)) names.add(part);
      // Nicknames are often a prefix of the name ("Mel" for "Melanie").
      if (s.length > 4) names.add(s.slice(0, 3));
    }
  }
  return names;
}

/**
 * What a turn's statements need from earlier turns: the names the conversation uses, and per stream the
 * person the last statement was about (for "she"/"he" opening the next one).
 */
export interface DiscourseState {
  names: ReadonlySet<string>;
  lastSubject: Map<string, string | null>;
  /** per stream, the question the previous turn ended with, and who asked it */
  lastQuestion: Map<string, { speaker: string | null; text: string } | null>;
  /** per stream, the statement the previous turn ended with, who said it and when (ms) */
  lastStatement: Map<string, { speaker: string | null; text: string; at: number } | null>;
}

/** How soon a speaker's next turn may go on with their last one ("we release on sundays now" / "sunday 8pm KST"). */
const CONTINUATION_MS = 15 * 60_000;

export function newDiscourseState(events: EventRecord[]): DiscourseState {
  return { names: namesUsedIn(events.filter((e) => e.content_type === 'text').map((e) => e.content)), lastSubject: new Map(), lastQuestion: new Map(), lastStatement: new Map() };
}

function isAssistantTurn(event: EventRecord, speaker: string | null): boolean {
  return speaker === 'assistant' || (event.role === 'assistant' && (speaker === null || speaker === event.agent_id));
}

export function draftEvent(event: EventRecord, names: ReadonlySet<string>, textOptions: TextOptions = DEFAULT_TEXT_OPTIONS, discourse?: DiscourseState): DraftResult {
  const et = eventText(event, textOptions);
  const said = resolveSpeaker(event, et.text);
  // an email's quoted lines ("> the fete is the 19th of July") are the other side's words: no statement
  // of the one replying, but what a short reply answers ("Noted, 19th.")
  const { own, quote } = withoutQuotedLines(said.text);
  const who = { ...said, text: own };
  const drafts: StatementDraft[] = [];
  const base = { event, speaker: who.speaker, prefix: who.prefix, assets: et.assets };
  if (!et.prose) {
    // JSON and media stay one unit each: splitting "key: value" lists or a caption gains nothing.
    drafts.push({ ...base, text: cut(who.text), memoryType: classifyMemoryType(event, '') });
    return { drafts, dropped: [] };
  }
  // A how-to with steps is one procedure: its steps mean something only together and in order; a list of
  // values is one statement. A list of statements (minutes, a recap) is split like any text.
  const statements = hasStepMarkers(who.text) && (isHowTo(who.text) || listsValues(who.text)) ? [who.text] : splitStatements(who.text);
  const reasons: string[] = [];
  const assistant = isAssistantTurn(event, who.speaker);
  const kept: string[] = [];
  for (const raw of statements) {
    const s = stripLeadIn(raw);
    const verdict = classifyNoise(s, names);
    if (verdict.noise) {
      reasons.push(verdict.reason);
      continue;
    }
    const chatter = assistant && !isHowTo(s) && !hasStepMarkers(s) ? assistantChatter(s, discourse?.names ?? names) : null;
    if (chatter) {
      reasons.push(chatter);
      continue;
    }
    kept.push(s);
  }
  const known = discourse?.names ?? names;
  let about = discourse?.lastSubject.get(event.stream_id) ?? null;
  const asked = quote !== null ? { speaker: null, text: quote } : discourse?.lastQuestion.get(event.stream_id) ?? null;
  const before = discourse?.lastStatement.get(event.stream_id) ?? null;
  const at = Date.parse(event.valid_time);
  // no one calls themselves "she" or "he": Hamish's "She says Thursdays are free" after a turn about Hamish
  // speaks of someone else
  const speaking = who.speaker?.toLowerCase() ?? null;
  for (const [i, joined] of joinFragments(kept).entries()) {
    let s = resolvePronoun(joined, about !== null && about.toLowerCase() === speaking ? null : about);
    // A short reply to the question before it ("8.1%" after "What was your HbA1c at diagnosis?") says
    // nothing alone: the question it answers goes with it.
    if (i === 0 && asked && asked.speaker !== who.speaker && leansOnQuestion(s)) s = withQuestion(s, asked.text);
    // and a short turn that goes on with its speaker's turn just before ("sunday 8pm KST" after "we release
    // on sundays now") has that statement beside it
    else if (i === 0 && !asked && before && before.speaker === who.speaker && at - before.at <= CONTINUATION_MS && continuesTurn(s)) s = withStatementBefore(s, before.text);
    about = openingName(joined, known) ?? introducedName(joined, known) ?? (s === joined ? null : about);
    drafts.push({ ...base, text: cut(s), memoryType: classifyMemoryType(event, s), assets: et.assets });
  }
  discourse?.lastSubject.set(event.stream_id, about);
  const last = statements[statements.length - 1]?.trim() ?? '';
  const endsAsking = /\?$/.test(last) && last.split(/\s+/).length >= 2;
  discourse?.lastQuestion.set(event.stream_id, endsAsking ? { speaker: who.speaker, text: last } : null);
  const lastKept = kept[kept.length - 1];
  discourse?.lastStatement.set(event.stream_id, !endsAsking && lastKept !== undefined && Number.isFinite(at) ? { speaker: who.speaker, text: lastKept, at } : null);
  // A photo shared with a text turn (LoCoMo's `blip_caption`, a client's `caption`) is memory of its own.
  const caption = mediaDescription(event.metadata);
  if (caption) {
    const url = et.assets.find((a) => a.url)?.url ?? firstUrl(event.metadata?.img_url ?? event.metadata?.image_url);
    const kind = et.assets[0]?.media_type ?? 'image';
    drafts.push({ ...base, text: `shared ${url ? `[${kind} ${url}]` : `[${kind}]`} ${caption}`, memoryType: 'factual' });
  }
  if (drafts.length === 0) {
    const reason = reasons.length === 0 ? 'empty' : [...new Set(reasons)].join('; ');
    return { drafts, dropped: [{ event_id: event.event_id, reason: `noise: ${reason}` }] };
  }
  return { drafts, dropped: [] };
}

/** A line quoted from the message replied to, as mail clients write it. */
const QUOTED_LINE = /^\s*>+\s?/;

/**
 * A text without its quoted lines, and the first quoted passage (its lines joined), or null when it quotes
 * nothing or is all quote (then it is kept whole: a forwarded passage is what was sent).
 */
function withoutQuotedLines(text: string): { own: string; quote: string | null } {
  const lines = text.split('\n');
  if (!lines.some((l) => QUOTED_LINE.test(l))) return { own: text, quote: null };
  const own = lines.filter((l) => !QUOTED_LINE.test(l)).join('\n');
  if (own.trim() === '') return { own: text, quote: null };
  const first = lines.findIndex((l) => QUOTED_LINE.test(l));
  const passage: string[] = [];
  for (let i = first; i < lines.length && QUOTED_LINE.test(lines[i]); i++) passage.push(lines[i].replace(QUOTED_LINE, '').trim());
  const quote = passage.filter((l) => l !== '').join(' ');
  return { own, quote: quote === '' ? null : quote };
}

/**
 * A reply that does not stand alone: at most six words, and a fragment ("8.1%", "Penicillin") or opening
 * with one ("Penicillin, I get hives", "Yes, twice"). "I'm swamped with work" answers "How have you
 * been?" and says so itself.
 */
function isShortAnswer(statement: string): boolean {
  if (wordCount(statement) > 6) return false;
  const head = statement.split(',')[0];
  return isFragment(statement) || (head !== statement && head.split(/\s+/).length <= 3 && isFragment(head));
}

/**
 * A reply whose topic is in the question it answers: a short answer, or a short sentence giving a
 * number ("We try to keep it around €80 a week" after "Roughly how much do you spend on groceries?",
 * "staying at 10:15" after "standup time?"). Without the question neither says what the value is of.
 */
function leansOnQuestion(statement: string): boolean {
  return isShortAnswer(statement) || (wordCount(statement) <= 10 && /\d/.test(statement));
}

/** Words with a letter or digit in them (a dash or an emoji alone is none). */
function wordCount(statement: string): number {
  return statement.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

function firstUrl(v: unknown): string | null {
  const x = Array.isArray(v) ? v[0] : v;
  return typeof x === 'string' && /^https?:\/\/\S+$/.test(x) ? x : null;
}

function cut(s: string): string {
  return s.length <= MAX_STATEMENT_CHARS ? s : `${s.slice(0, MAX_STATEMENT_CHARS - 1)}…`;
}

/** Events in the order their statements are considered: valid time, then stream position, then id. */
export function orderEvents(events: EventRecord[]): EventRecord[] {
  return [...events].sort((a, b) => (Date.parse(a.valid_time) - Date.parse(b.valid_time)) || cmp(a.stream_id, b.stream_id) || cmp(a.seq, b.seq) || cmp(a.event_id, b.event_id));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function draftEvents(events: EventRecord[], textOptions: TextOptions = DEFAULT_TEXT_OPTIONS, discourse: DiscourseState = newDiscourseState(events)): DraftResult {
  const names = participantNames(events);
  const out: DraftResult = { drafts: [], dropped: [] };
  for (const e of orderEvents(events)) {
    const r = draftEvent(e, names, textOptions, discourse);
    out.drafts.push(...r.drafts);
    out.dropped.push(...r.dropped);
  }
  return out;
}
