/**
 * `user.set_org` on a real LevelDB state machine: the user → org record that decides what org-scoped
 * keys may act on (CONTRACT §1). A claim never overrides a recorded org and never takes a user that
 * already has data; a set records or clears; the by-org index follows; two replicas agree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  StateDb, StateMachine, pendingOfUsers, snapshotImage, userHasData, userOrg, usersOfOrg,
  type Command, type IngestCommand, type UserOrgAnswer, type UserOrgCommand,
} from '../src';

const T0 = '2026-01-01T00:00:00.000Z';

function ingest(user: string, ids: string[]): IngestCommand {
  return {
    type: 'events.ingest', user_id: user, stream_id: 's1', at: T0, idempotency: null, assets: [],
    events: ids.map((id) => ({
      event_id: id, user_id: user, stream_id: 's1', content: `content ${id}`, content_type: 'text', org_id: null, agent_id: null, role: null,
      level: null, parent_id: null, task_status: null, task_progress: null, valid_time: T0, transaction_time: T0, metadata: null, assets: [],
    })),
  };
}

const claim = (user: string, org: string): UserOrgCommand => ({ type: 'user.set_org', user_id: user, org_id: org, mode: 'claim', at: T0 });
const set = (user: string, org: string | null): UserOrgCommand => ({ type: 'user.set_org', user_id: user, org_id: org, mode: 'set', at: T0 });

describe('user.set_org apply', () => {
  const dirs: string[] = [];
  const open = async () => {
    const dir = mkdtempSync(join(tmpdir(), 'strata-userorg-'));
    dirs.push(dir);
    const db = await StateDb.open(join(dir, 'state'));
    const sm = await StateMachine.open(db);
    let index = 0;
    return { db, sm, apply: (c: Command) => sm.apply(++index, c) };
  };
  const opened: StateDb[] = [];
  afterAll(async () => {
    for (const db of opened) await db.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const script: Command[] = [
    claim('new', 'acme'), // a new user: recorded
    claim('new', 'globex'), // recorded already: stays acme
    ingest('old', ['e1']),
    claim('old', 'acme'), // has data: not recorded
    set('old', 'globex'), // an admin may set it
    set('moved', 'acme'),
    set('moved', 'globex'), // moved: leaves acme's index
    set('gone', 'acme'),
    set('gone', null), // cleared
    ingest('new', ['e2', 'e3']),
  ];

  it('records, refuses and clears as the rules say, with the by-org index in step', async () => {
    const node = await open();
    opened.push(node.db);
    const answers: unknown[] = [];
    for (const c of script) answers.push(await node.apply(c));
    expect(answers.slice(0, 2)).toEqual([{ org_id: 'acme', changed: true }, { org_id: 'acme', changed: false }]);
    expect(answers[3]).toEqual({ org_id: null, changed: false } satisfies UserOrgAnswer);
    expect(answers[4]).toEqual({ org_id: 'globex', changed: true });
    expect(await userOrg(node.db, 'new')).toBe('acme');
    expect(await userOrg(node.db, 'old')).toBe('globex');
    expect(await userOrg(node.db, 'gone')).toBeNull();
    expect(await userOrg(node.db, 'nobody')).toBeNull();
    expect(await usersOfOrg(node.db, 'acme')).toEqual(['new']);
    expect(await usersOfOrg(node.db, 'globex')).toEqual(['moved', 'old']);
    expect(await userHasData(node.db, 'old')).toBe(true);
    expect(await userHasData(node.db, 'moved')).toBe(false);
    // the same set with the same org changes nothing
    expect(await node.apply(set('old', 'globex'))).toEqual({ org_id: 'globex', changed: false });
  });

  it('refuses malformed commands deterministically, changing nothing', async () => {
    const node = await open();
    opened.push(node.db);
    expect(await node.apply({ ...claim('x', 'acme'), org_id: null })).toMatchObject({ error: { status: 400, code: 'invalid_command' } });
    expect(await node.apply(set('x', ''))).toMatchObject({ error: { status: 400 } });
    expect(await userOrg(node.db, 'x')).toBeNull();
  });

  it('gives the same state on two replicas applying the same log', async () => {
    const a = await open();
    const b = await open();
    opened.push(a.db, b.db);
    for (const c of script) {
      await a.apply(c);
      await b.apply(c);
    }
    expect((await snapshotImage(a.db)).equals(await snapshotImage(b.db))).toBe(true);
  });

  it('counts the pending backlog of some users only', async () => {
    const node = await open();
    opened.push(node.db);
    await node.apply(ingest('ana', ['a1', 'a2']));
    await node.apply(ingest('bob', ['b1', 'b2', 'b3']));
    expect(await pendingOfUsers(node.db, ['ana'])).toEqual({ pending: 2, failed: 0, oldest_accepted_at: T0 });
    expect(await pendingOfUsers(node.db, ['ana', 'bob', 'ana'])).toMatchObject({ pending: 5 });
    expect(await pendingOfUsers(node.db, [])).toEqual({ pending: 0, failed: 0, oldest_accepted_at: null });
  });
});
