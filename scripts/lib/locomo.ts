/**
 * LoCoMo conversations (Maharana et al., ACL 2024): loading, and the recall measures of the evaluation.
 * Only the fields a memory service may see are read: speakers, sessions with their dates, turns.
 * `qa` is read for the questions and their evidence; the authors' observations, summaries and event
 * annotations are never touched (they would leak the answers).
 */
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export interface LocomoTurn {
  dia_id: string;
  speaker: string;
  text: string;
  /** caption of a photo the speaker shared, when there is one */
  blip_caption: string | null;
  session: number;
}

export interface LocomoSession {
  index: number;
  /** the dataset's date text, e.g. "1:56 pm on 8 May, 2023" */
  date_text: string;
  /** the same as RFC 3339 UTC (the dataset has no time zone: taken as UTC) */
  date: string;
  turns: LocomoTurn[];
}

export type LocomoCategory = 1 | 2 | 3 | 4 | 5;

export const CATEGORY_NAMES: Record<LocomoCategory, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

export interface LocomoQuestion {
  question: string;
  answer: string | null;
  category: LocomoCategory;
  /** dia_ids of the turns holding the answer (the dataset's "D8:6; D9:17" lists are split) */
  evidence: string[];
}

export interface LocomoConversation {
  /** file name without extension, e.g. conv-26 */
  id: string;
  speaker_a: string;
  speaker_b: string;
  sessions: LocomoSession[];
  qa: LocomoQuestion[];
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00.000Z". */
export function parseLocomoDate(text: string): string {
  const m = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$/i.exec(text);
  if (!m) throw new Error(`unrecognized LoCoMo date: ${JSON.stringify(text)}`);
  let hour = Number(m[1]) % 12;
  if (m[3].toLowerCase() === 'pm') hour += 12;
  const month = MONTHS.indexOf(m[5].toLowerCase());
  if (month < 0) throw new Error(`unrecognized month in LoCoMo date: ${JSON.stringify(text)}`);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))).toISOString();
}

/** Parse one conversation object as found in the dataset's files. */
export function parseConversation(id: string, raw: Record<string, unknown>): LocomoConversation {
  const sessions: LocomoSession[] = [];
  for (const key of Object.keys(raw)) {
    const m = /^session_(\d+)$/.exec(key);
    if (!m) continue;
    const index = Number(m[1]);
    const turnsRaw = raw[key];
    const dateText = raw[`session_${index}_date_time`];
    if (!Array.isArray(turnsRaw) || typeof dateText !== 'string') continue;
    const turns = (turnsRaw as Array<Record<string, unknown>>).map((t) => ({
      dia_id: String(t.dia_id),
      speaker: String(t.speaker),
      text: String(t.text ?? ''),
      blip_caption: typeof t.blip_caption === 'string' ? t.blip_caption : null,
      session: index,
    }));
    sessions.push({ index, date_text: dateText, date: parseLocomoDate(dateText), turns });
  }
  sessions.sort((a, b) => a.index - b.index);
  const qa = ((raw.qa as Array<Record<string, unknown>>) ?? []).map((q) => ({
    question: String(q.question),
    answer: q.answer === undefined || q.answer === null ? null : String(q.answer),
    category: Number(q.category) as LocomoCategory,
    evidence: ((q.evidence as string[]) ?? [])
      .flatMap((e) => String(e).split(/[;,\s]+/))
      .map((e) => e.trim())
      .filter((e) => /^D\d+:\d+$/.test(e)),
  }));
  return { id, speaker_a: String(raw.speaker_a), speaker_b: String(raw.speaker_b), sessions, qa };
}

/** Every conv-*.json of a directory, sorted by name; `only` keeps those ids (e.g. ["conv-26"]). */
export function loadLocomo(dir: string, only?: string[]): LocomoConversation[] {
  const files = readdirSync(dir).filter((f) => /\.json$/.test(f)).sort();
  const out: LocomoConversation[] = [];
  for (const file of files) {
    const id = file.replace(/\.json$/, '');
    if (only && only.length > 0 && !only.includes(id)) continue;
    out.push(parseConversation(id, JSON.parse(readFileSync(join(dir, file), 'utf8'))));
  }
  return out;
}

/** The event text of a turn: "<speaker>: <text>", plus the shared photo's caption when there is one. */
export function turnContent(turn: LocomoTurn, withCaption = true): string {
  const caption = withCaption && turn.blip_caption ? ` [shares a photo: ${turn.blip_caption}]` : '';
  return `${turn.speaker}: ${turn.text}${caption}`;
}

/** A deterministic UUID (v5 layout, SHA-1 of a name) so re-runs address the same streams. */
export function deterministicUuid(name: string): string {
  const h = createHash('sha1').update(`strata-locomo:${name}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** One ranked result, reduced to what recall needs: the evidence it points to and its token count. */
export interface RankedEvidence {
  dia_ids: string[];
  tokens: number;
}

/** Fraction of `evidence` covered by the first k results. */
export function recallAtK(evidence: string[], results: RankedEvidence[], k: number): number {
  if (evidence.length === 0) return 0;
  const covered = new Set<string>();
  for (const r of results.slice(0, k)) for (const d of r.dia_ids) covered.add(d);
  return evidence.filter((e) => covered.has(e)).length / evidence.length;
}

/** Fraction of `evidence` covered by the leading results whose cumulative token count fits `budget`. */
export function recallAtTokens(evidence: string[], results: RankedEvidence[], budget: number): number {
  if (evidence.length === 0) return 0;
  const covered = new Set<string>();
  let used = 0;
  for (const r of results) {
    if (used + r.tokens > budget) break;
    used += r.tokens;
    for (const d of r.dia_ids) covered.add(d);
  }
  return evidence.filter((e) => covered.has(e)).length / evidence.length;
}

export const K_VALUES = [5, 10, 25] as const;
export const TOKEN_BUDGETS = [500, 1000, 2000] as const;

export interface RecallFigures {
  questions: number;
  recall_at: Record<string, number>;
  recall_within_tokens: Record<string, number>;
}

/** Accumulates per-question recalls into averages, overall and by category. */
export class RecallAccumulator {
  private readonly sums = new Map<string, { n: number; at: number[]; tok: number[] }>();

  add(category: LocomoCategory, evidence: string[], results: RankedEvidence[]): void {
    const at = K_VALUES.map((k) => recallAtK(evidence, results, k));
    const tok = TOKEN_BUDGETS.map((b) => recallAtTokens(evidence, results, b));
    for (const key of ['all', CATEGORY_NAMES[category]]) {
      const s = this.sums.get(key) ?? { n: 0, at: K_VALUES.map(() => 0), tok: TOKEN_BUDGETS.map(() => 0) };
      s.n += 1;
      at.forEach((v, i) => (s.at[i] += v));
      tok.forEach((v, i) => (s.tok[i] += v));
      this.sums.set(key, s);
    }
  }

  figures(): Record<string, RecallFigures> {
    const out: Record<string, RecallFigures> = {};
    for (const [key, s] of this.sums) {
      out[key] = {
        questions: s.n,
        recall_at: Object.fromEntries(K_VALUES.map((k, i) => [String(k), round(s.at[i] / s.n)])),
        recall_within_tokens: Object.fromEntries(TOKEN_BUDGETS.map((b, i) => [String(b), round(s.tok[i] / s.n)])),
      };
    }
    return out;
  }
}

function round(x: number): number {
  return Math.round(x * 10000) / 10000;
}
