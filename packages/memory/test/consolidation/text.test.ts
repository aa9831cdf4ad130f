import { eventText, jsonToText } from '../../src/consolidation';
import { event } from './fixtures';

const asset = { asset_id: 'ab'.repeat(32), media_type: 'image' as const, size: 0, url: 'https://img.example/dog.jpg', phash: null };

describe('eventText', () => {
  it('keeps text as it is (trimmed) and marks it as prose', () => {
    expect(eventText(event('  I like tea.  '))).toEqual({ text: 'I like tea.', prose: true, assets: [] });
  });

  it('flattens JSON into key paths with array indexes', () => {
    const doc = { order: { id: 7, items: [{ name: 'pen', qty: 2 }, { name: 'ink' }] }, paid: true, note: null, tags: [] };
    const t = eventText(event(JSON.stringify(doc), { content_type: 'json' }));
    expect(t.text).toBe('order.id: 7; order.items[0].name: pen; order.items[0].qty: 2; order.items[1].name: ink; paid: true; note: null; tags: []');
    expect(t.prose).toBe(false);
  });

  it('bounds flattened JSON and says how much was left out', () => {
    const doc = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${i}`, i]));
    expect(jsonToText(JSON.stringify(doc), { maxJsonChars: 1000, maxJsonEntries: 3 })).toBe('k0: 0; k1: 1; k2: 2; … (7 more)');
    expect(jsonToText(JSON.stringify(doc), { maxJsonChars: 21, maxJsonEntries: 100 })).toBe('k0: 0; k1: 1; k2: 2; … (7 more)');
  });

  it('a scalar or an unparsable document still yields text', () => {
    expect(jsonToText('42')).toBe('value: 42');
    expect(jsonToText('{oops')).toBe('{oops');
  });

  it('media: asset reference plus the caption from metadata', () => {
    const t = eventText(event('https://img.example/dog.jpg', { content_type: 'image', assets: [asset], metadata: { caption: 'a dog on a beach' } }));
    expect(t).toEqual({ text: '[image https://img.example/dog.jpg] a dog on a beach', prose: false, assets: [asset] });
  });

  it('media without description: a placeholder that keeps the asset', () => {
    const a = { ...asset, url: null, media_type: 'audio' as const };
    const t = eventText(event('UklGRg==', { content_type: 'audio', assets: [a] }));
    expect(t).toEqual({ text: '[audio]', prose: false, assets: [a] });
  });
});
