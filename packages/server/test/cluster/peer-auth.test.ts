/**
 * Requests between nodes signed with the cluster secret: exactly this request, once, to the node it
 * names, from a node that has the secret, signed after the receiver started.
 */
import { PeerSigner } from '../../src/cluster/peer-auth';

const SECRET = 'peer-auth-test-secret';

describe('PeerSigner', () => {
  let now = 1_700_000_000_000;
  const clock = () => now;
  const sender = () => new PeerSigner(SECRET, 4, 30_000, clock);
  const receiver = (id = 1) => new PeerSigner(SECRET, id, 30_000, clock);
  const body = { kind: 'add_learner', node: 7, url: 'http://10.0.0.7:3000' };
  const PATH = '/v1/cluster/groups/3/steps';

  it('accepts a signed request once, and names its sender', () => {
    const rx = receiver();
    const h = sender().sign(1, 'POST', PATH, body);
    expect(rx.verify('POST', PATH, JSON.parse(JSON.stringify(body)), h)).toBe(4);
    expect(rx.verify('POST', PATH, body, h)).toBeNull(); // replayed
  });

  it('refuses another method, path, body, sender, a request without a body, or another secret', () => {
    const tx = sender();
    const h = () => tx.sign(1, 'POST', PATH, body);
    const rx = receiver();
    expect(rx.verify('PUT', PATH, body, h())).toBeNull();
    expect(rx.verify('POST', '/v1/cluster/groups/4/steps', body, h())).toBeNull();
    expect(rx.verify('POST', PATH, { ...body, node: 8 }, h())).toBeNull();
    expect(rx.verify('POST', PATH, undefined, h())).toBeNull();
    expect(rx.verify('POST', PATH, body, { ...h(), 'x-strata-peer-from': '5' })).toBeNull();
    const other = new PeerSigner('another-secret-entirely', 4, 30_000, clock).sign(1, 'POST', PATH, body);
    expect(rx.verify('POST', PATH, body, other)).toBeNull();
    expect(rx.verify('POST', PATH, body, {})).toBeNull();
  });

  it('refuses a signature older or newer than the clock skew', () => {
    const rx = receiver();
    const h = sender().sign(1, 'GET', '/v1/cluster/status', undefined);
    now += 31_000;
    expect(rx.verify('GET', '/v1/cluster/status', undefined, h)).toBeNull();
    now -= 62_000;
    expect(rx.verify('GET', '/v1/cluster/status', undefined, h)).toBeNull();
    now += 31_000;
    expect(rx.verify('GET', '/v1/cluster/status', undefined, h)).toBe(4);
  });

  it('names its receiver: a request captured on its way to node 1 is refused by node 2, and by node 1 only once', () => {
    const [one, two] = [receiver(1), receiver(2)];
    const h = sender().sign(1, 'POST', PATH, body);
    expect(two.verify('POST', PATH, body, h)).toBeNull();
    expect(two.verify('POST', PATH, body, { ...h, 'x-strata-peer-to': '2' })).toBeNull(); // the receiver is signed
    expect(one.verify('POST', PATH, body, h)).toBe(4);
    expect(one.verify('POST', PATH, body, h)).toBeNull();
  });

  it('refuses a request signed before the receiving process started (captured, then replayed after a restart)', () => {
    const h = sender().sign(1, 'POST', PATH, body);
    now += 5_000; // node 1 restarts: a new process, a new replay set
    const restarted = receiver(1);
    expect(restarted.verify('POST', PATH, body, h)).toBeNull();
    expect(restarted.verify('POST', PATH, body, sender().sign(1, 'POST', PATH, body))).toBe(4);
  });

  it('judges a request from its headers alone, keeping the digest the body must have', () => {
    const rx = receiver();
    const h = sender().signDigest(1, 'POST', '/v1/cluster/groups/3/propose', 'ab'.repeat(32));
    expect(rx.verifyHeaders('POST', '/v1/cluster/groups/3/propose', h)).toEqual({ from: 4, digest: 'ab'.repeat(32) });
    expect(rx.verifyHeaders('POST', '/v1/cluster/groups/3/propose', { ...h, 'x-strata-peer-digest': 'cd'.repeat(32) })).toBeNull();
  });
});
