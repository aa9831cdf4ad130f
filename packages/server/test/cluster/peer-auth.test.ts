/** Requests between nodes signed with the cluster secret: exactly this request, once, from a node that has the secret. */
import { PeerSigner } from '../../src/cluster/peer-auth';

const SECRET = 'peer-auth-test-secret';

describe('PeerSigner', () => {
  let now = 1_700_000_000_000;
  const clock = () => now;
  const sender = () => new PeerSigner(SECRET, 4, 30_000, clock);
  const receiver = () => new PeerSigner(SECRET, 1, 30_000, clock);
  const body = { kind: 'add_learner', node: 7, url: 'http://10.0.0.7:3000' };

  it('accepts a signed request once, and names its sender', () => {
    const rx = receiver();
    const h = sender().sign('POST', '/v1/cluster/groups/3/steps', body);
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', JSON.parse(JSON.stringify(body)), h)).toBe(4);
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', body, h)).toBeNull(); // replayed
  });

  it('refuses another method, path, body, sender, a request without a body, or another secret', () => {
    const tx = sender();
    const h = () => tx.sign('POST', '/v1/cluster/groups/3/steps', body);
    const rx = receiver();
    expect(rx.verify('PUT', '/v1/cluster/groups/3/steps', body, h())).toBeNull();
    expect(rx.verify('POST', '/v1/cluster/groups/4/steps', body, h())).toBeNull();
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', { ...body, node: 8 }, h())).toBeNull();
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', undefined, h())).toBeNull();
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', body, { ...h(), 'x-strata-peer-from': '5' })).toBeNull();
    const other = new PeerSigner('another-secret-entirely', 4, 30_000, clock).sign('POST', '/v1/cluster/groups/3/steps', body);
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', body, other)).toBeNull();
    expect(rx.verify('POST', '/v1/cluster/groups/3/steps', body, {})).toBeNull();
  });

  it('refuses a signature older or newer than the clock skew', () => {
    const h = sender().sign('GET', '/v1/cluster/status', undefined);
    now += 31_000;
    expect(receiver().verify('GET', '/v1/cluster/status', undefined, h)).toBeNull();
    now -= 62_000;
    expect(receiver().verify('GET', '/v1/cluster/status', undefined, h)).toBeNull();
    now += 31_000;
    expect(receiver().verify('GET', '/v1/cluster/status', undefined, h)).toBe(4);
  });
});
