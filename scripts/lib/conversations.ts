/**
 * The conversation suite (`npm run eval:conversations`): realistic chats whose facts change over months,
 * ingested as an agent would send them, then asked what a user would ask. Scores what a user sees:
 * whether the top retrieval result answers, whether old values are still current, how much of memory is
 * small talk, and whether the context an LLM reads says when things happened and which value holds now.
 *
 * File format (test/conversations/*.json): `{conversations: [{id, style, turns: [[valid_time, speaker,
 * content]], questions: [{q, answer, stale?, kind}]}]}`. A speaker is a name (a group chat export: sent
 * as "Name: content" with `metadata.speaker`), `user`/`assistant` (the role), or `tool` (JSON output).
 */
import { readFileSync } from 'node:fs';
import type { EventInput, StrataClient } from '@strata/client';

export type QuestionKind = 'current' | 'earlier' | 'third_person' | 'two_facts' | 'when' | 'stable';

export interface Question {
  q: string;
  answer: string;
  stale?: string;
  kind: QuestionKind;
}

export interface Conversation {
  id: string;
  style?: string;
  turns: [string, string, string][];
  questions: Question[];
}

export interface Suite {
  conversations: Conversation[];
}

export function loadSuite(file: string): Suite {
  const suite = JSON.parse(readFileSync(file, 'utf8')) as Suite;
  for (const c of suite.conversations) {
    for (const q of c.questions) {
      new RegExp(q.answer, 'i');
      if (q.stale) new RegExp(q.stale, 'i');
    }
  }
  return suite;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** One turn as the event an agent would send. */
export function turnEvent([validTime, speaker, content]: [string, string, string]): EventInput {
  // a tool's output is JSON when it parses as JSON, else text as a tool prints it (log lines, a table)
  if (speaker === 'tool') return isJson(content) ? { content, content_type: 'json', role: 'tool', valid_time: validTime } : { content, role: 'tool', valid_time: validTime };
  if (speaker === 'user' || speaker === 'assistant' || speaker === 'system') return { content, role: speaker, valid_time: validTime };
  return { content: `${speaker}: ${content}`, role: 'user', valid_time: validTime, metadata: { speaker } };
}

/** Turns cut into sessions where more than `gapMs` passes between two turns. */
export function sessions<T extends [string, string, string]>(turns: T[], gapMs = 3 * 3600_000): T[][] {
  const out: T[][] = [];
  let last = -Infinity;
  for (const t of turns) {
    const at = Date.parse(t[0]);
    if (out.length === 0 || at - last > gapMs) out.push([]);
    out[out.length - 1].push(t);
    last = at;
  }
  return out;
}

/**
 * An independent judge of small talk, for scoring only (not the consolidation's rules): a unit is filler
 * when, without its speaker prefix, it is a question, or holds no word of four letters or more that is
 * not a reaction, greeting, thanks or politeness word, and no digit.
 */
const SMALL_TALK = new Set(('hello hey thanks thank welcome congrats congratulations awesome amazing great lovely perfect sounds '
  + 'cool nice wow haha hahaha lol omg yeah yess yesss yep nope okay alright sure good morning night evening afternoon '
  + 'bye goodbye cheers happy help glad anytime anything else pleasure sorry hear that\'s that this really totally '
  + 'exactly absolutely definitely proud jealous respect pictures please welcome noted course problem worries love '
  + 'with your you\'re youre what when will would could should have just about from they them their there were been '
  + 'dude bro mate guys everyone aww oops yay woohoo damn gosh jeez super fantastic wonderful brilliant incredible '
  + 'crazy insane funny hilarious classic typical same here also too very much well done miss missed talk soon later').split(/\s+/));

export function isFillerText(content: string): boolean {
  // a reply's "(asked: …?)" is the question it answers, kept beside it by consolidation: the reply is judged
  const body = content.replace(/^[\p{Lu}][\p{L}'.-]*(?:\s[\p{Lu}][\p{L}'.-]*)?:\s+/u, '').replace(/\s*\(asked: [^()]*\)\s*$/u, '').trim();
  if (/\?\s*["')\]]*\s*$/.test(body) && !/\b(?:is|am|are|was|'s|'m)\b.*\b(?:now|moved|work|live)\b/i.test(body.slice(0, -1))) return true;
  if (/\d/.test(body)) return false;
  const words = body.toLowerCase().replace(/[^\p{L}'\s]/gu, ' ').split(/\s+/).filter((w) => w.length >= 4);
  return words.every((w) => SMALL_TALK.has(w));
}

export interface QuestionResult {
  conversation: string;
  kind: QuestionKind;
  q: string;
  answer: string;
  stale?: string;
  top: string[];
  rank: number | null;
  staleAbove: boolean;
  /** why the context of a time question failed: the answer missing or marked earlier, or a stale line unmarked */
  contextWhy?: string;
  contextDated: boolean | null;
  contextCurrent: boolean | null;
}

export interface SuiteScore {
  questions: number;
  top1: number;
  top3: number;
  by_kind: Record<string, { questions: number; top1: number; top3: number }>;
  stale_questions: number;
  /** questions with a `stale` value whose old value is still a current unit */
  stale_left_current: number;
  /** ... or ranks above the answer */
  stale_above_answer: number;
  /**
   * questions about what holds (every kind but `earlier`) whose answer some L1 unit states, all of them
   * retired: an update that took a value still true (the cost of retiring too much, which top-1 shows
   * only where the retired answer also lost its rank)
   */
  answers_retired: number;
  answers_retired_units: string[];
  l1_units: number;
  filler_units: number;
  filler_share: number;
  /** time questions (kind `when` and `current`) whose context dates every line and carries the current value */
  time_contexts: number;
  time_contexts_ok: number;
  results: QuestionResult[];
  stale_units: string[];
  filler: string[];
  /** every current L1 unit, "conversation: content" */
  units: string[];
  /** the same units with the subject and attribute consolidation gave them: "id: [subject|attribute] content" */
  described: string[];
  /** every retired L1 unit with what retired it, "conversation: old ⇒ successor" (to read what an update took) */
  retired: string[];
}

const DATE_MARK = /\b(?:\d{4}-\d{2}-\d{2}|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2},? \d{4}|\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{4})\b/;

/** Every memory line of a text context carries a date. */
export function contextLinesDated(context: string): boolean {
  const lines = context.split('\n').filter((l) => /^- \[L[12]/.test(l));
  return lines.length > 0 && lines.every((l) => DATE_MARK.test(l));
}

export interface RunOptions {
  /** wait for consolidation after each session (as a live agent's memory forms), default true */
  perSession?: boolean;
  timeoutMs?: number;
  userPrefix?: string;
  /** print the ranking signals of the top results of each question missed at rank 1 */
  explain?: boolean;
  /** given each question's top 30 candidates with their ranking signals (`explain`), for offline analysis */
  candidates?: (c: { conversation: string; q: string; kind: string; answer: string; stale?: string; results: unknown[] }) => void;
  progress?: (msg: string) => void;
}

function streamOf(i: number): string {
  return `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;
}

/**
 * Consolidation writes the date a relative or partial time names after it ("March 14 (2025-03-14) last
 * working day") and whom an opening "she" or "he" is ("she's (Sara) my wife"). A set's patterns are
 * written against what was said, so a unit counts as stating the answer when the pattern matches its
 * text with or without those insertions.
 */
const INSERTED_DATE = / \((?:(?:week|weekend) of )?\d{4}(?:-\d{2}){0,2}\)/g;
const INSERTED_NAME = /\b([Ss]he|[Hh]e)((?:'s|'d|'ll)?) \(\p{Lu}[\p{L}'’-]*\)/gu;
function asSaid(pattern: RegExp): { test(text: string): boolean } {
  return { test: (text) => pattern.test(text) || pattern.test(text.replace(INSERTED_DATE, '').replace(INSERTED_NAME, '$1$2')) };
}

/** Ingests every conversation (one user each), then asks its questions. */
export async function runSuite(client: StrataClient, suite: Suite, options: RunOptions = {}): Promise<SuiteScore> {
  const prefix = options.userPrefix ?? `conv-${Date.now().toString(36)}`;
  const users = suite.conversations.map((c) => `${prefix}-${c.id}`.slice(0, 120));
  const bySession = suite.conversations.map((c) => (options.perSession === false ? [c.turns] : sessions(c.turns)));
  const rounds = Math.max(...bySession.map((s) => s.length));
  for (let r = 0; r < rounds; r++) {
    for (const [i, ss] of bySession.entries()) {
      if (ss[r]) await client.ingestBatch(users[i], streamOf(i), ss[r].map(turnEvent));
    }
    const ready = await client.waitUntilReady(options.timeoutMs ?? 180_000, 50);
    if (!ready.ready) throw new Error(`consolidation did not finish: ${JSON.stringify(ready)}`);
    options.progress?.(`session round ${r + 1}/${rounds} consolidated`);
  }

  const results: QuestionResult[] = [];
  const staleUnits: string[] = [];
  const filler: string[] = [];
  const all: string[] = [];
  const described: string[] = [];
  const retired: string[] = [];
  let l1 = 0;
  let staleCurrent = 0;
  const answersRetired: string[] = [];
  for (const [i, c] of suite.conversations.entries()) {
    const everyUnit = (await listAll(client, users[i], true)).filter((u) => u.level === 1);
    const units = everyUnit.filter((u) => !u.retired_at);
    const byId = new Map(everyUnit.map((u) => [u.id, u.content]));
    for (const u of everyUnit) {
      if (u.retired_at) retired.push(`${c.id}: ${u.content} ⇒ ${u.superseded_by ? byId.get(u.superseded_by) ?? u.superseded_by : '(no successor)'}`);
    }
    l1 += units.length;
    for (const u of units) {
      all.push(`${c.id}: ${u.content}`);
      described.push(`${c.id}: [${u.subject ?? ''}|${u.attribute ?? ''}] ${u.content}`);
      if (isFillerText(u.content)) filler.push(`${c.id}: ${u.content}`);
    }
    for (const q of c.questions) {
      const answer = asSaid(new RegExp(q.answer, 'i'));
      const stale = q.stale ? asSaid(new RegExp(q.stale, 'i')) : null;
      const res = await client.retrieve(users[i], streamOf(i), { query: q.q, limit: 10 });
      const top = res.results.map((r) => r.unit.content);
      const rank = top.findIndex((t) => answer.test(t));
      if (options.candidates) {
        const ex = await client.retrieve(users[i], streamOf(i), { query: q.q, limit: 30, explain: true } as Parameters<StrataClient['retrieve']>[2]);
        options.candidates({ conversation: c.id, q: q.q, kind: q.kind, answer: q.answer, stale: q.stale, results: ex.results });
      }
      if (options.explain && rank !== 0) {
        const ex = await client.retrieve(users[i], streamOf(i), { query: q.q, limit: 10, explain: true } as Parameters<StrataClient['retrieve']>[2]);
        console.log(`? ${q.q}  /${q.answer}/ rank ${rank + 1}`);
        for (const r of ex.results) console.log(`   ${r.score.toFixed(3)} ${JSON.stringify((r as { why?: unknown }).why)}\n      ${r.unit.content.slice(0, 140)}`);
      }
      const staleRank = stale ? top.findIndex((t) => stale.test(t) && !answer.test(t)) : -1;
      let contextDated: boolean | null = null;
      let contextCurrent: boolean | null = null;
      let contextWhy: string | undefined;
      if (q.kind === 'when' || q.kind === 'current') {
        const ctx = await client.context({ user_id: users[i], stream_id: streamOf(i), query: q.q, format: 'text' });
        contextDated = contextLinesDated(ctx.context);
        const lines = ctx.context.split('\n');
        // a line's status is the last word of its bracket: "- [L1 factual user 2025-06-14 current] …"
        const marked = (l: string) => /^- \[[^\]]* (?:superseded|earlier)\]/.test(l);
        const currentLine = lines.some((l) => answer.test(l) && !marked(l));
        const staleUnmarked = stale ? lines.some((l) => stale.test(l) && !answer.test(l) && !marked(l)) : false;
        contextCurrent = currentLine && !staleUnmarked;
        if (!contextCurrent) {
          contextWhy = !currentLine ? (lines.some((l) => answer.test(l)) ? 'answer marked earlier' : 'answer missing') : 'stale unmarked';
          if (staleUnmarked) contextWhy += `: ${lines.find((l) => stale!.test(l) && !answer.test(l) && !marked(l))!.slice(0, 160)} | answer: ${(lines.find((l) => answer.test(l)) ?? '').slice(0, 160)}`;
        }
      }
      if (q.kind !== 'earlier') {
        const stating = everyUnit.filter((u) => answer.test(u.content));
        if (stating.length > 0 && stating.every((u) => u.retired_at)) answersRetired.push(`${c.id} [${q.q}]: ${stating[0].content} ⇒ ${byId.get(stating[0].superseded_by ?? '') ?? '(no successor)'}`);
      }
      if (stale && q.kind === 'current') {
        const left = units.filter((u) => stale.test(u.content) && !answer.test(u.content));
        if (left.length > 0) {
          staleCurrent++;
          for (const u of left) staleUnits.push(`${c.id} [${q.q}]: ${u.content}`);
        }
      }
      results.push({
        conversation: c.id, kind: q.kind, q: q.q, answer: q.answer, stale: q.stale, top: top.slice(0, 3),
        rank: rank >= 0 ? rank + 1 : null, staleAbove: staleRank >= 0 && (rank < 0 || staleRank < rank), contextDated, contextCurrent, contextWhy,
      });
    }
  }
  const byKind: SuiteScore['by_kind'] = {};
  for (const r of results) {
    const k = (byKind[r.kind] ??= { questions: 0, top1: 0, top3: 0 });
    k.questions++;
    if (r.rank === 1) k.top1++;
    if (r.rank !== null && r.rank <= 3) k.top3++;
  }
  for (const k of Object.values(byKind)) {
    k.top1 = round3(k.top1 / k.questions);
    k.top3 = round3(k.top3 / k.questions);
  }
  const n = results.length;
  const time = results.filter((r) => r.contextDated !== null);
  return {
    questions: n,
    top1: round3(results.filter((r) => r.rank === 1).length / n),
    top3: round3(results.filter((r) => r.rank !== null && r.rank <= 3).length / n),
    by_kind: byKind,
    stale_questions: results.filter((r) => r.stale && r.kind === 'current').length,
    stale_left_current: staleCurrent,
    stale_above_answer: results.filter((r) => r.staleAbove && r.kind === 'current').length,
    answers_retired: answersRetired.length,
    answers_retired_units: answersRetired,
    l1_units: l1,
    filler_units: filler.length,
    filler_share: round3(l1 === 0 ? 0 : filler.length / l1),
    time_contexts: time.length,
    time_contexts_ok: time.filter((r) => r.contextDated && r.contextCurrent).length,
    results,
    stale_units: staleUnits,
    filler,
    units: all,
    described,
    retired,
  };
}

type ListedUnit = { id: string; level: number; content: string; retired_at: string | null; superseded_by: string | null; subject?: string | null; attribute?: string | null };

async function listAll(client: StrataClient, userId: string, includeRetired = false): Promise<ListedUnit[]> {
  const out: ListedUnit[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await client.listMemories(userId, { limit: 500, after, includeRetired });
    out.push(...page.memories);
    if (!page.next_cursor) return out;
    after = page.next_cursor;
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
