import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { clampBudget, domainOf, renderContext, strategyFor, type ContextHitInput, type ContextUnit } from '../../src/context/render';
import { getTokenCounter } from '../../src/context/tokenizer';

const tok = getTokenCounter();

let n = 0;
function hit(over: Partial<ContextUnit> = {}, score = 0.5): ContextHitInput {
  n++;
  return {
    unit: { id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, level: 1, memory_type: 'factual', content: `fact number ${n}`, keywords: [], assets: [], org_id: null, agent_id: null, ...over },
    score,
  };
}

const parse = (xml: string) => new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml);

describe('budget and strategy', () => {
  it('clamps the budget to [64, 8192], default 800', () => {
    expect(clampBudget(undefined)).toBe(800);
    expect(clampBudget(null)).toBe(800);
    expect(clampBudget(1)).toBe(64);
    expect(clampBudget(1e9)).toBe(8192);
    expect(clampBudget(300.7)).toBe(300);
  });
  it('picks the strategy by budget', () => {
    expect(strategyFor(64)).toBe('dense_l2_l3');
    expect(strategyFor(160)).toBe('dense_l2_l3');
    expect(strategyFor(161)).toBe('adaptive_compact');
    expect(strategyFor(480)).toBe('adaptive_compact');
    expect(strategyFor(481)).toBe('detailed_l1_first');
  });
  it('names domains', () => {
    expect(domainOf({ org_id: null, agent_id: null, memory_type: 'factual' })).toBe('user');
    expect(domainOf({ org_id: 'acme', agent_id: null, memory_type: 'factual' })).toBe('org');
    expect(domainOf({ org_id: null, agent_id: 'bot', memory_type: 'procedural' })).toBe('agent');
  });
});

describe('text rendering', () => {
  it('renders one line per memory, keywords and assets when the budget allows', () => {
    const h = hit({ content: 'Alice likes\ngreen tea', keywords: ['tea', 'drinks'], assets: [{ asset_id: 'ab'.repeat(32), media_type: 'image', url: null }] }, 0.9);
    const r = renderContext([h], { token_budget: 800 });
    expect(r.strategy).toBe('detailed_l1_first');
    expect(r.context).toBe(`- [L1 factual user current] Alice likes green tea (keywords: tea, drinks) (assets: image:${'ab'.repeat(6)})`);
    expect(r.used_token_estimate).toBe(tok.count(r.context));
    expect(r).toMatchObject({ format: 'text', matched_count: 1, included_count: 1, truncated: false, token_budget: 800 });
    expect(r.hits).toEqual([{ id: h.unit.id, level: 1, memory_type: 'factual', domain: 'user', score: 0.9 }]);
  });

  it('renders goals and tasks as L3 lines, first in the dense strategy', () => {
    const r = renderContext([hit({ content: 'a fact' }, 0.9), hit({ level: 2, content: 'an insight' }, 0.3)], {
      token_budget: 150,
      goals: [{ id: 'g', content: 'Run a marathon', status: 'in_progress', progress: 0.4 }],
      tasks: [{ task_id: 't', title: 'Buy shoes', status: 'pending', progress: 0 }],
    });
    expect(r.strategy).toBe('dense_l2_l3');
    expect(r.context.split('\n')).toEqual([
      '- [L3 goal in_progress 40%] Run a marathon',
      '- [L3 task pending 0%] Buy shoes',
      '- [L2 factual user current] an insight',
      '- [L1 factual user current] a fact',
    ]);
  });

  it('dates each memory by when it happened and says whether it still holds', () => {
    const now = hit({ content: 'Lena lives in Vienna', valid_time: '2025-06-14T19:00:00Z', transaction_time: '2026-01-01T00:00:00.000Z', retired_at: null }, 0.9);
    const before = hit({ content: 'Lena lives in Hamburg', valid_time: '2025-03-01T10:00:00Z', transaction_time: '2026-01-01T00:00:00.000Z', retired_at: '2026-01-01T00:00:00.000Z', retired_reason: 'superseded' }, 0.8);
    const stored = hit({ content: 'no valid time', valid_time: null, transaction_time: '2026-02-03T04:05:06.000Z' }, 0.7);
    expect(renderContext([now, before, stored], { token_budget: 800 }).context.split('\n')).toEqual([
      '- [L1 factual user 2025-06-14 current] Lena lives in Vienna',
      '- [L1 factual user 2025-03-01 superseded] Lena lives in Hamburg',
      '- [L1 factual user 2026-02-03 current] no valid time',
    ]);
    const xml = parse(renderContext([now, before], { token_budget: 800, format: 'xml' }).context);
    expect(xml.memory_context.memory.map((m: Record<string, string>) => [m.date, m.status])).toEqual([['2025-06-14', 'current'], ['2025-03-01', 'superseded']]);
  });

  it('marks an older version retrieval found of what was asked as earlier, though memory still holds it', () => {
    const now = hit({ content: 'Omar: Station 7, starting Monday', valid_time: '2025-10-02T10:00:00Z' }, 0.9);
    const ended = { ...hit({ content: 'Omar: I quit the cafe', valid_time: '2025-06-02T10:00:00Z' }, 0.8), signals: { boosts: ['ended'] } };
    const older = { ...hit({ content: 'Omar: I work at the cafe', valid_time: '2025-01-02T10:00:00Z' }, 0.7), signals: { boosts: ['stream', 'earlier_version'] } };
    expect(renderContext([now, ended, older], { token_budget: 800 }).context.split('\n')).toEqual([
      '- [L1 factual user 2025-10-02 current] Omar: Station 7, starting Monday',
      '- [L1 factual user 2025-06-02 earlier] Omar: I quit the cafe',
      '- [L1 factual user 2025-01-02 earlier] Omar: I work at the cafe',
    ]);
    const xml = parse(renderContext([now, older], { token_budget: 800, format: 'xml' }).context);
    expect(xml.memory_context.memory.map((m: Record<string, string>) => m.status)).toEqual(['current', 'earlier']);
  });

  it('marks an insight that summarizes a memory replaced since as earlier', () => {
    const insight = { ...hit({ level: 2, content: 'Recurring topic: home. Key points: I live in Leeds.', valid_time: '2025-01-02T10:00:00Z' }, 0.6), signals: { boosts: ['outdated_insight'] } };
    expect(renderContext([insight], { token_budget: 800 }).context).toBe('- [L2 factual user 2025-01-02 earlier] Recurring topic: home. Key points: I live in Leeds.');
  });

  it('puts facts first in the detailed strategy and orders by score', () => {
    const r = renderContext([hit({ level: 2, content: 'insight' }, 0.99), hit({ content: 'low' }, 0.1), hit({ content: 'high' }, 0.8)], { token_budget: 1000 });
    expect(r.context.split('\n').map((l) => l.split('] ')[1])).toEqual(['high', 'low', 'insight']);
  });

  it('never exceeds the budget and reports what it left out', () => {
    const hits = Array.from({ length: 50 }, (_, i) => hit({ content: `memory ${i} `.repeat(30), keywords: ['k'] }, 1 - i / 100));
    for (const budget of [64, 100, 160, 200, 480, 600, 2000]) {
      const r = renderContext(hits, { token_budget: budget });
      expect(r.used_token_estimate).toBe(tok.count(r.context));
      expect(r.used_token_estimate).toBeLessThanOrEqual(budget);
      expect(r.truncated).toBe(true);
      expect(r.included_count).toBe(r.hits.length);
      expect(r.included_count).toBeGreaterThan(0);
      expect(r.included_count).toBeLessThan(50);
    }
  });

  it('cuts a single long memory to fit instead of dropping it', () => {
    const r = renderContext([hit({ content: 'word '.repeat(5000) })], { token_budget: 64 });
    expect(r.included_count).toBe(1);
    expect(r.truncated).toBe(true);
    expect(r.context.endsWith('…')).toBe(true);
    expect(r.used_token_estimate).toBeLessThanOrEqual(64);
  });

  it('renders nothing for nothing', () => {
    const r = renderContext([], {});
    expect(r).toMatchObject({ context: '', used_token_estimate: 0, included_count: 0, matched_count: 0, truncated: false });
  });

  it('rejects an unknown format and encoding', () => {
    expect(() => renderContext([], { format: 'html' as never })).toThrow(RangeError);
    expect(() => getTokenCounter('nope')).toThrow(RangeError);
  });

  it('honours another encoding', () => {
    const o200k = getTokenCounter('o200k_base');
    const r = renderContext([hit({ content: 'naïve café 東京 '.repeat(100) })], { token_budget: 100, tokenizer: o200k });
    expect(o200k.count(r.context)).toBe(r.used_token_estimate);
    expect(r.used_token_estimate).toBeLessThanOrEqual(100);
  });
});

describe('XML rendering', () => {
  it('is well-formed, escaped, with attributes', () => {
    const h = hit({ content: 'Tom & Jerry <b>"quoted"</b> \'single\' ]]> \u0000\u0008 end', keywords: ['a&b', '<k>'], org_id: 'acme' }, 0.75);
    const r = renderContext([h], { format: 'xml', token_budget: 800, goals: [{ id: 'g', content: 'Goal <1>', status: 'pending', progress: 0 }] });
    expect(XMLValidator.validate(r.context)).toBe(true);
    const doc = parse(r.context).memory_context;
    expect(doc.strategy).toBe('detailed_l1_first');
    expect(doc.memory['#text']).toBe('Tom & Jerry <b>"quoted"</b> \'single\' ]]>  end');
    expect(doc.memory.keywords).toBe('a&b, <k>');
    expect(doc.memory.domain).toBe('org');
    expect(doc.memory.id).toBe(h.unit.id);
    expect(doc.memory.score).toBe('0.75');
    expect(doc.goal['#text']).toBe('Goal <1>');
    expect(r.used_token_estimate).toBe(tok.count(r.context));
  });

  it('stays well-formed and within budget when truncated', () => {
    const hits = Array.from({ length: 40 }, (_, i) => hit({ content: `<&"'> item ${i} `.repeat(40) }, 1 - i / 100));
    for (const budget of [64, 160, 300, 481, 1500]) {
      const r = renderContext(hits, { format: 'xml', token_budget: budget });
      expect(XMLValidator.validate(r.context)).toBe(true);
      expect(r.used_token_estimate).toBeLessThanOrEqual(budget);
      expect(r.truncated).toBe(true);
      expect(r.context.startsWith('<memory_context')).toBe(true);
      expect(r.context.endsWith('</memory_context>')).toBe(true);
    }
  });

  it('property: random nasty input always gives valid XML and text within budget', () => {
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const alphabet = ['<', '>', '&', '"', "'", ']]>', '<!--', '-->', '\u0000', '\u0001', '\u001f', '\uD800', '\uDFFF', '\uFFFE', '\uFFFF', '😀', '東', 'é', '\n', '\r\n', '\t', ' ', 'a', 'word ', '&amp;', '<![CDATA[', '\u2028', '\u0085', 'x'.repeat(50)];
    const str = (max: number) => Array.from({ length: Math.floor(rnd() * max) }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
    for (let trial = 0; trial < 40; trial++) {
      const hits = Array.from({ length: Math.floor(rnd() * 15) }, () =>
        hit({ content: str(80), level: rnd() < 0.3 ? 2 : 1, keywords: [str(5), str(5)], assets: rnd() < 0.3 ? [{ asset_id: 'f'.repeat(64), media_type: 'image', url: str(4) || null }] : [] }, rnd()),
      );
      const goals = rnd() < 0.5 ? [{ id: 'g', content: str(30), status: str(3) as never, progress: rnd() }] : [];
      const tasks = rnd() < 0.5 ? [{ task_id: 't', title: str(30), status: 'pending' as const, progress: rnd() * 3 - 1 }] : [];
      const budget = Math.floor(rnd() * 1200);
      for (const format of ['xml', 'text'] as const) {
        const r = renderContext(hits, { format, token_budget: budget, goals, tasks });
        expect(r.used_token_estimate).toBe(tok.count(r.context));
        expect(r.used_token_estimate).toBeLessThanOrEqual(clampBudget(budget));
        if (format === 'xml') {
          const valid = XMLValidator.validate(r.context);
          if (valid !== true) throw new Error(`invalid XML (${JSON.stringify(valid)}): ${JSON.stringify(r.context)}`);
          expect(() => parse(r.context)).not.toThrow();
        } else {
          const lines = r.context ? r.context.split('\n') : [];
          expect(lines.length).toBe(r.included_count + (r.context.match(/^- \[L3 /gm)?.length ?? 0));
          for (const line of lines) expect(line).toMatch(/^- \[L[123] /);
        }
      }
    }
  });
});
