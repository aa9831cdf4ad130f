/**
 * Context rendering (CONTRACT.md section 4): retrieval results (and the user's goals and tasks) as a
 * block of text or XML for a prompt, within a token budget.
 *
 * Guarantees, whatever the input:
 *  - `used_token_estimate` is the BPE token count of the whole `context` string (wrapper included) and
 *    is ≤ `token_budget`;
 *  - XML output is well-formed: every element closed, text and attributes escaped, characters XML
 *    forbids (controls, lone surrogates) removed, also when items are cut or dropped;
 *  - text output has one line per item: `- [L1 factual user 2025-06-14 current] <content>`: the date the
 *    memory is about (its valid time: when it was said or happened, not when it was stored) and whether
 *    it still holds (`current`), a newer value replaced it (`superseded`), or it is an older version of
 *    what the question asks about that memory still holds (`earlier`). Retrieval returns superseded
 *    memories only for questions about before, so an LLM reading the context can tell which value holds
 *    and since when. XML carries the same as `date` and `status` attributes.
 *
 * Strategy by budget: `dense_l2_l3` (≤ 160: goals, tasks and insights first, short lines, no extras),
 * `adaptive_compact` (≤ 480: by score, medium lines), `detailed_l1_first` (> 480: facts first, whole
 * contents). Keywords and assets are appended (outside `dense_l2_l3`) only with budget left once every
 * item that fits is in.
 */
import type { AssetRef, Goal, L3Task, MemoryType } from '@strata/store';
import { getTokenCounter, type TokenCounter } from './tokenizer';

export type ContextFormat = 'text' | 'xml';
export type ContextStrategy = 'dense_l2_l3' | 'adaptive_compact' | 'detailed_l1_first';
export type ContextDomain = 'user' | 'org' | 'agent';

export const MIN_TOKEN_BUDGET = 64;
export const MAX_TOKEN_BUDGET = 8192;
export const DEFAULT_TOKEN_BUDGET = 800;

export interface ContextUnit {
  id: string;
  level: number;
  memory_type: MemoryType;
  content: string;
  keywords?: string[];
  assets?: Array<Pick<AssetRef, 'asset_id' | 'media_type' | 'url'>>;
  org_id?: string | null;
  agent_id?: string | null;
  /** when it was said or happened (RFC 3339); the line's date */
  valid_time?: string | null;
  transaction_time?: string;
  retired_at?: string | null;
  retired_reason?: string | null;
}

export interface ContextHitInput {
  unit: ContextUnit;
  score: number;
  /** retrieval's signals (fusion.ts): `earlier_version` / `ended` mark an older value of what was asked */
  signals?: { boosts?: readonly string[] };
}

export type ContextGoal = Pick<Goal, 'id' | 'content' | 'status' | 'progress'>;
export type ContextTask = Pick<L3Task, 'task_id' | 'title' | 'status' | 'progress'> & Partial<Pick<L3Task, 'parent_id'>>;

export interface RenderOptions {
  format?: ContextFormat;
  /** clamped to [64, 8192]; default 800 */
  token_budget?: number;
  goals?: ContextGoal[];
  tasks?: ContextTask[];
  /** default: cl100k_base */
  tokenizer?: TokenCounter;
}

export interface ContextHitView {
  id: string;
  level: number;
  memory_type: MemoryType;
  domain: ContextDomain;
  score: number;
}

export interface RenderedContext {
  format: ContextFormat;
  strategy: ContextStrategy;
  token_budget: number;
  context: string;
  used_token_estimate: number;
  matched_count: number;
  /** memory units included (goals and tasks are not counted) */
  included_count: number;
  /** something was left out or shortened to fit the budget */
  truncated: boolean;
  /** the included memory units, in the order rendered */
  hits: ContextHitView[];
}

export function clampBudget(budget: number | null | undefined): number {
  if (budget === null || budget === undefined || !Number.isFinite(budget)) return DEFAULT_TOKEN_BUDGET;
  return Math.min(MAX_TOKEN_BUDGET, Math.max(MIN_TOKEN_BUDGET, Math.floor(budget)));
}

export function strategyFor(budget: number): ContextStrategy {
  if (budget <= 160) return 'dense_l2_l3';
  if (budget <= 480) return 'adaptive_compact';
  return 'detailed_l1_first';
}

export function domainOf(unit: Pick<ContextUnit, 'org_id' | 'agent_id' | 'memory_type'>): ContextDomain {
  if (unit.agent_id && unit.memory_type === 'procedural') return 'agent';
  if (unit.org_id) return 'org';
  return 'user';
}

/** Characters XML 1.0 forbids (controls other than tab/LF/CR, lone surrogates, U+FFFE/FFFF). */
const XML_INVALID = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlEscape(text: string): string {
  return text
    .replace(XML_INVALID, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

/** One line of text: whitespace runs (newlines included) become single spaces, controls are dropped. */
function oneLine(text: string): string {
  return text.replace(XML_INVALID, '').replace(/[\s\u0085\u2028\u2029]+/gu, ' ').trim();
}

/** Per-strategy cap on one item's content, in tokens (the budget still rules). */
const CONTENT_CAP: Record<ContextStrategy, number> = { dense_l2_l3: 40, adaptive_compact: 90, detailed_l1_first: 400 };
/** Below this many tokens of room, an item is not worth starting. */
const MIN_ITEM_TOKENS = 8;

interface Item {
  kind: 'memory' | 'goal' | 'task';
  /** rendered with the given content (already cut) and with/without extras */
  render(content: string, extras: boolean): string;
  content: string;
  hasExtras: boolean;
  hit?: ContextHitView;
}

export function renderContext(hits: ContextHitInput[], options: RenderOptions = {}): RenderedContext {
  const format: ContextFormat = options.format ?? 'text';
  if (format !== 'text' && format !== 'xml') throw new RangeError(`unknown context format "${String(format)}"`);
  const budget = clampBudget(options.token_budget);
  const strategy = strategyFor(budget);
  const tok = options.tokenizer ?? getTokenCounter();
  const items = orderItems(hits, options.goals ?? [], options.tasks ?? [], strategy, format);

  const open = format === 'xml' ? `<memory_context strategy="${strategy}">` : '';
  const close = format === 'xml' ? '</memory_context>' : '';
  const join = (pieces: string[]) => (format === 'xml' ? [open, ...pieces, close].join('\n') : pieces.join('\n'));
  const total = (pieces: string[]) => tok.count(join(pieces));

  // Pass 1: items in order, each cut to the strategy's cap and to the room left.
  const chosen: Array<{ item: Item; content: string; extras: boolean }> = [];
  let truncated = false;
  let used = total([]);
  for (const item of items) {
    const room = budget - used - 1; // the newline joining it
    if (room < MIN_ITEM_TOKENS) {
      truncated = true;
      break;
    }
    const content = fitContent(item, tok, Math.min(CONTENT_CAP[strategy], room), room);
    if (content === null) {
      truncated = true;
      break;
    }
    if (content !== item.content) truncated = true;
    chosen.push({ item, content, extras: false });
    used += tok.count(item.render(content, false)) + 1;
  }

  // Pass 2: keywords and assets where the budget allows.
  if (strategy !== 'dense_l2_l3') {
    for (const c of chosen) {
      if (!c.item.hasExtras) continue;
      const extra = tok.count(c.item.render(c.content, true)) - tok.count(c.item.render(c.content, false));
      if (used + extra <= budget) {
        c.extras = true;
        used += extra;
      }
    }
  }

  // Token counts of pieces do not add up exactly (BPE merges across joins): check the real string and
  // drop from the end until it fits. Dropping whole items keeps XML well-formed by construction.
  let pieces = chosen.map((c) => c.item.render(c.content, c.extras));
  let exact = total(pieces);
  while (exact > budget && pieces.length > 0) {
    chosen.pop();
    pieces = pieces.slice(0, -1);
    truncated = true;
    exact = total(pieces);
  }
  if (chosen.length < items.length) truncated = true;
  const context = join(pieces);
  const included = chosen.filter((c) => c.item.hit).map((c) => c.item.hit!);
  return {
    format,
    strategy,
    token_budget: budget,
    context,
    used_token_estimate: exact,
    matched_count: hits.length,
    included_count: included.length,
    truncated,
    hits: included,
  };
}

/** The item's content cut so that the rendered item (without extras) is ≤ `room` tokens; null if hopeless. */
function fitContent(item: Item, tok: TokenCounter, cap: number, room: number): string | null {
  let content = tok.count(item.content) > cap ? tok.truncate(item.content, cap) : item.content;
  // Escaping and markup cost tokens too: shrink by the overflow until it fits (a few rounds at most).
  for (let round = 0; round < 6; round++) {
    const over = tok.count(item.render(content, false)) - room;
    if (over <= 0) return content;
    const current = tok.count(content);
    if (current === 0) return null;
    content = tok.truncate(content, Math.max(0, current - over - round));
    if (!content) return null;
  }
  return tok.count(item.render(content, false)) <= room ? content : null;
}

function orderItems(hits: ContextHitInput[], goals: ContextGoal[], tasks: ContextTask[], strategy: ContextStrategy, format: ContextFormat): Item[] {
  const memories = [...hits]
    .filter((h) => h && h.unit)
    .sort((a, b) => b.score - a.score)
    .map((h) => memoryItem(h, strategy, format));
  const l3 = [
    ...goals.map((g) => l3Item('goal', g.content, g.status, g.progress, format)),
    ...tasks.map((t) => l3Item('task', t.title, t.status, t.progress, format)),
  ];
  const byLevel = (level: number) => memories.filter((m) => m.hit!.level === level);
  const rest = (levels: number[]) => memories.filter((m) => !levels.includes(m.hit!.level));
  switch (strategy) {
    case 'dense_l2_l3':
      return [...l3, ...byLevel(2), ...rest([2])];
    case 'adaptive_compact':
      return [...memories, ...l3];
    case 'detailed_l1_first':
      return [...byLevel(1), ...byLevel(2), ...rest([1, 2]), ...l3];
  }
}

/** The day a memory is about: its valid time, else the time it was stored; null when neither parses. */
export function memoryDate(u: Pick<ContextUnit, 'valid_time' | 'transaction_time'>): string | null {
  for (const t of [u.valid_time, u.transaction_time]) {
    if (!t) continue;
    const ms = Date.parse(t);
    if (!Number.isNaN(ms)) return new Date(ms).toISOString().slice(0, 10);
  }
  return null;
}

/**
 * `superseded` when a newer value replaced it in memory (a forgotten memory is never rendered); `earlier`
 * when memory still holds it but retrieval found a later version of what the question asks about among
 * the results, or it says the value ended ("I quit the cafe" for "where does she work now?"), or it is an
 * insight summarizing a memory replaced since (`outdated_insight`, until the insight is planned again); else
 * `current`. So a model reading the context for a question about now knows which line is the old value.
 */
export function memoryStatus(u: Pick<ContextUnit, 'retired_at' | 'retired_reason'>, boosts: readonly string[] = []): 'current' | 'earlier' | 'superseded' {
  if (u.retired_at && u.retired_reason !== 'forgotten') return 'superseded';
  return boosts.includes('earlier_version') || boosts.includes('ended') || boosts.includes('outdated_insight') ? 'earlier' : 'current';
}

function memoryItem(h: ContextHitInput, strategy: ContextStrategy, format: ContextFormat): Item {
  const u = h.unit;
  const date = memoryDate(u);
  const status = memoryStatus(u, h.signals?.boosts);
  const domain = domainOf(u);
  const score = Math.round(Math.min(1, Math.max(0, Number.isFinite(h.score) ? h.score : 0)) * 1000) / 1000;
  const keywords = (u.keywords ?? []).map(oneLine).filter(Boolean);
  const assets = (u.assets ?? []).map((a) => `${a.media_type}:${a.url ?? a.asset_id.slice(0, 12)}`).map(oneLine);
  const hit: ContextHitView = { id: u.id, level: u.level, memory_type: u.memory_type, domain, score };
  const content = format === 'xml' ? u.content.replace(XML_INVALID, '') : oneLine(u.content);
  if (format === 'text') {
    return {
      kind: 'memory',
      content,
      hasExtras: keywords.length > 0 || assets.length > 0,
      hit,
      render: (c, extras) => {
        let line = `- [L${u.level} ${u.memory_type} ${domain}${date ? ` ${date}` : ''} ${status}] ${c}`;
        if (extras && keywords.length) line += ` (keywords: ${keywords.join(', ')})`;
        if (extras && assets.length) line += ` (assets: ${assets.join(', ')})`;
        return line;
      },
    };
  }
  // Ids cost ~20 tokens each: the dense strategy leaves them out, the others keep them.
  const idAttr = strategy === 'dense_l2_l3' ? '' : ` id="${xmlEscape(u.id)}"`;
  const scoreAttr = strategy === 'detailed_l1_first' ? ` score="${score}"` : '';
  return {
    kind: 'memory',
    content,
    hasExtras: keywords.length > 0 || assets.length > 0,
    hit,
    render: (c, extras) => {
      let attrs = `${idAttr} level="${u.level}" type="${u.memory_type}" domain="${domain}"${date ? ` date="${date}"` : ''} status="${status}"${scoreAttr}`;
      if (extras && keywords.length) attrs += ` keywords="${xmlEscape(keywords.join(', '))}"`;
      if (extras && assets.length) attrs += ` assets="${xmlEscape(assets.join(', '))}"`;
      return `<memory${attrs}>${xmlEscape(c)}</memory>`;
    },
  };
}

const percent = (p: number) => `${Math.round(Math.min(1, Math.max(0, Number.isFinite(p) ? p : 0)) * 100)}%`;

/** A goal or task line: `- [L3 goal pending 50%] …` or `<goal status=… progress=…>…</goal>`. */
function l3Item(kind: 'goal' | 'task', text: string, status: string, progress: number, format: ContextFormat): Item {
  const content = format === 'xml' ? text.replace(XML_INVALID, '') : oneLine(text);
  return {
    kind,
    content,
    hasExtras: false,
    render: (c) =>
      format === 'text'
        ? `- [L3 ${kind} ${oneLine(status)} ${percent(progress)}] ${c}`
        : `<${kind} status="${xmlEscape(status)}" progress="${percent(progress)}">${xmlEscape(c)}</${kind}>`,
  };
}
