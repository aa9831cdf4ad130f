/**
 * The MCP session table's bounds (red-team round 3, finding 2): one owner opening sessions in a loop
 * closes only its own, at its own cap and when the table is full.
 */
import { SessionTable, type HeldSession } from '../src/mcp/sessions';

class Held implements HeldSession {
  closed = false;
  constructor(readonly owner: string) {}
  async close(): Promise<void> {
    this.closed = true;
  }
}

describe('SessionTable', () => {
  const tables: SessionTable<Held>[] = [];
  const table = (max: number, perOwner: number) => {
    const t = new SessionTable<Held>({ max, perOwner, idleMs: 60_000 });
    tables.push(t);
    return t;
  };
  afterAll(async () => {
    for (const t of tables) await t.closeAll();
  });

  it("closes an owner's own least recently used session at its cap, never another owner's", async () => {
    const t = table(1000, 3);
    const victim = new Held('key:victim');
    await t.add('v', victim);
    const opened: Held[] = [];
    for (let i = 0; i < 1050; i++) {
      const s = new Held('key:mallory');
      opened.push(s);
      await t.add(`m${i}`, s);
    }
    expect(t.use('v', 'key:victim')).toBe(victim);
    expect(victim.closed).toBe(false);
    expect([t.heldBy('key:mallory'), t.size]).toEqual([3, 4]);
    expect(opened.filter((s) => !s.closed)).toEqual(opened.slice(-3));
  });

  it('when full, closes a session of the owner holding the most, oldest first', async () => {
    const t = table(6, 4);
    const a = [new Held('a'), new Held('a')];
    const b = [new Held('b'), new Held('b'), new Held('b'), new Held('b')];
    await t.add('a0', a[0]);
    for (let i = 0; i < 4; i++) await t.add(`b${i}`, b[i]);
    await t.add('a1', a[1]);
    // full (6): a third owner's session takes the place of b's oldest, not of a's (older, but a holds fewer)
    await t.add('c0', new Held('c'));
    expect([a[0].closed, b[0].closed, b[1].closed]).toEqual([false, true, false]);
    expect([t.heldBy('a'), t.heldBy('b'), t.heldBy('c'), t.size]).toEqual([2, 3, 1, 6]);
    // a session used is the newest of its owner: b's least recently used is now b2
    t.use('b1', 'b');
    await t.add('c1', new Held('c'));
    expect([b[1].closed, b[2].closed]).toEqual([false, true]);
  });

  it('keeps its counts when adds come at once', async () => {
    const t = table(100, 2);
    await Promise.all(Array.from({ length: 20 }, (_, i) => t.add(`s${i}`, new Held('x'))));
    expect([t.heldBy('x'), t.size]).toEqual([2, 2]);
  });
});
