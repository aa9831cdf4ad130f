/**
 * An MCP write tool reaching a node that does not hold the user's group is sent, as its REST request,
 * to the group's leader as the placement directory names it (Forwarder.write). The directory lags a
 * leader change by a placement round: the node it names may lead no longer. Found by CI
 * (test/cluster/placement-surfaces.test.ts): MCP `remember` answered "This node no longer leads shard 1;
 * the write was not run (not stored); retry." where the same REST write would have been stored, because
 * the MCP path neither told the member the directory was its source (so the member did not pass it on to
 * the leader it knows) nor looked for the leader again after a "not stored" answer.
 *
 * Three real HTTP servers, each routing the write with its own Forwarder exactly as a node's REST route
 * does (Forwarder.route, errors answered by http/errors.ts); each node's view of the group is given.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { StrataError } from '@strata/store';
import { Forwarder, type LeaderView } from '../../src/cluster/forward';
import { sendError } from '../../src/http/errors';

const SHARD = 1;
const PATH = '/v1/users/u-1/streams/11111111-1111-4111-8111-111111111111/events';

interface Node {
  id: number;
  url: string;
  server: Server;
  /** bodies this node ran as the group's leader */
  ran: unknown[];
}

const nodes = new Map<number, Node>();
const urlOf = (id: number) => nodes.get(id)?.url ?? null;

/** A node whose REST write route routes with a Forwarder over `view` (its own id filled in). */
async function startNode(id: number, view: Omit<LeaderView, 'nodeId' | 'urlOf'>): Promise<Node> {
  const node: Node = { id, url: '', server: null as unknown as Server, ran: [] };
  const forwarder = new Forwarder({ view: { ...view, nodeId: id, urlOf }, timeoutMs: 1500, pollMs: 10 });
  const app = express();
  app.post(PATH, express.json(), (req, res) => {
    forwarder.route(SHARD, req, res, async () => {
      node.ran.push(req.body);
      res.status(202).json({ status: 'accepted', ran_on: id });
    }).catch((err: unknown) => sendError(res, err, () => undefined));
  });
  node.server = createServer(app);
  await new Promise<void>((r) => node.server.listen(0, '127.0.0.1', r));
  node.url = `http://127.0.0.1:${(node.server.address() as AddressInfo).port}`;
  nodes.set(id, node);
  return node;
}

afterEach(async () => {
  for (const n of nodes.values()) await new Promise((r) => n.server.close(r));
  nodes.clear();
});

/** Node 1 (holding nothing of the group) writes through Forwarder.write with the leader its directory names. */
function away(directoryLeader: () => number): Forwarder {
  return new Forwarder({
    view: { nodeId: 1, isLeader: () => false, leaderId: directoryLeader, urlOf, holds: () => false, replicas: () => [2, 3] },
    timeoutMs: 1500, pollMs: 10,
  });
}

const rest = { method: 'POST', path: PATH, headers: { 'idempotency-key': 'k-1' }, body: { content: 'a lighthouse logbook' } };
const notLocal = async (): Promise<never> => {
  throw new Error('node 1 does not lead the group: nothing runs here');
};

describe('an MCP write on a node that does not hold the group', () => {
  it('reaches the leader through a member the directory still names as leader (the member passes it on)', async () => {
    // node 2 led, node 3 leads now; node 2 knows it, node 1's directory does not yet
    await startNode(2, { isLeader: () => false, leaderId: () => 3, holds: () => true });
    const leader = await startNode(3, { isLeader: () => true, leaderId: () => 3, holds: () => true });
    const answer = await away(() => 2).write(() => SHARD, notLocal, rest);
    expect(answer).toEqual({ status: 'accepted', ran_on: 3 });
    expect(leader.ran).toEqual([rest.body]);
  });

  it('looks for the leader again when the node it reached answers "not stored", and the write is run once', async () => {
    // node 2 no longer holds the group (it refuses: not stored); the directory names node 3 once it has caught up
    await startNode(2, { isLeader: () => false, leaderId: () => null, holds: () => false });
    const leader = await startNode(3, { isLeader: () => true, leaderId: () => 3, holds: () => true });
    let asked = 0;
    const forwarder = away(() => (asked++ === 0 ? 2 : 3));
    const answer = await forwarder.write(() => SHARD, notLocal, rest);
    expect(answer).toEqual({ status: 'accepted', ran_on: 3 });
    expect(leader.ran).toEqual([rest.body]);
    expect(forwarder.notStoredRetries).toBe(1);
  });

  it("answers the leader's refusal as the error it was (not looked for again)", async () => {
    const app = express();
    app.post(PATH, (_req, res) => sendError(res, new StrataError('validation_failed', 'content is empty'), () => undefined));
    const server = createServer(app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    nodes.set(2, { id: 2, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, ran: [] });
    const forwarder = away(() => 2);
    const err = await forwarder.write(() => SHARD, notLocal, rest).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StrataError);
    expect([(err as StrataError).code, (err as StrataError).message]).toEqual(['validation_failed', 'content is empty']);
    expect(forwarder.notStoredRetries).toBe(0);
  });
});
