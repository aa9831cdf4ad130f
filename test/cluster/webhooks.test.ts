/**
 * Webhooks across a leader failover (CONTRACT §13): writers go through every node of a 3-node cluster,
 * a real receiver on loopback collects `event.accepted` deliveries, and the leader is SIGKILLed mid-stream.
 * Every acknowledged event must be delivered; the only duplicates allowed are deliveries the old leader
 * had sent but not yet recorded (at most `webhooks.advance_batch` plus the one in flight: the last ones it
 * sent before it died); per user, first arrivals follow commit order. The delivery log around the kill and
 * the number of duplicates are printed.
 */
import { api, TestCluster, waitFor } from '../helpers/cluster';
import { WebhookReceiver, validSignature } from '../helpers/webhook-receiver';
import { listEvents } from '../helpers/cluster';
import { startWriters } from './writers';

jest.setTimeout(120_000);

const ADVANCE_BATCH = 20;

describe('webhooks: leader SIGKILL mid-stream', () => {
  let cluster: TestCluster;
  let recv: WebhookReceiver;
  beforeAll(async () => {
    recv = await WebhookReceiver.start();
    cluster = await TestCluster.start({
      nodes: 3,
      env: {
        STRATA__WEBHOOKS__ALLOW_PRIVATE: 'true', STRATA__WEBHOOKS__RETRY_INITIAL_MS: '50', STRATA__WEBHOOKS__RETRY_MAX_MS: '400',
        STRATA__WEBHOOKS__ADVANCE_INTERVAL_MS: '200', STRATA__WEBHOOKS__ADVANCE_BATCH: String(ADVANCE_BATCH), STRATA__WEBHOOKS__POLL_MS: '25',
      },
    });
  });
  afterAll(async () => {
    await cluster?.stop();
    await recv?.close();
  });

  it('delivers every acknowledged event and resends only what was in flight', async () => {
    const old = await cluster.leader(0);
    const termOf = async (id: number) => (await cluster.status(id)).find((sh) => sh.shard_id === 0)!.term;
    const termBefore = await termOf(old);
    // created through a follower: forwarded to the leader of shard 0, where subscriptions are proposed
    const follower = [1, 2, 3].find((id) => id !== old)!;
    const created = await api(cluster.node(follower).url, 'POST', '/v1/webhooks', { url: recv.url, events: ['event.accepted'] });
    expect(created.status).toBe(200);
    const { webhook_id: webhookId, secret } = created.body as { webhook_id: string; secret: string };

    const load = startWriters(cluster, [1, 2, 3], (i) => `hook-writer-${i}`);
    await waitFor('deliveries flowing before the kill', async () => recv.received.length >= 40, 30_000, 50);
    await cluster.kill(old, 'SIGKILL');
    const killAt = recv.received.length; // everything received so far came from the old leader
    const survivors = cluster.live().map((n) => n.id);
    const fresh = await cluster.leader(0, survivors, 15_000);
    expect(fresh).not.toBe(old);
    const before = load.writers.map((w) => w.acked.size);
    await waitFor('writes acknowledged under the new leader', async () => load.writers.every((w, i) => w.acked.size >= before[i] + 10), 30_000, 50);
    await load.stop();

    const acked = load.writers.flatMap((w) => [...w.acked.values()]);
    const delivered = () => new Set(recv.acceptedEventIds());
    await waitFor('every acknowledged event delivered', async () => acked.every((id) => delivered().has(id)), 30_000, 100)
      .catch((err) => {
        throw new Error(`${(err as Error).message}: ${acked.filter((id) => !delivered().has(id)).length} of ${acked.length} missing`);
      });
    // every write settled; let the new leader finish what is queued (unacknowledged writes may be stored too)
    const freshUrl = cluster.node(fresh).url;
    await waitFor('outbox drained', async () => ((await api(freshUrl, 'GET', `/v1/webhooks/${webhookId}/deliveries`)).body as { queued: number }).queued === 0, 30_000, 100);

    for (const d of recv.received) expect([d.body.id, validSignature(d.raw, d.signature, secret)]).toEqual([d.eventId, true]);
    const ids = recv.acceptedEventIds();
    const count = new Map<string, number>();
    for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
    const duplicated = [...count].filter(([, n]) => n > 1).map(([id]) => id);
    // Only the old leader's unrecorded tail can come twice: the last (advance_batch + 1) distinct deliveries it made.
    const firstSeen = (list: string[]) => list.filter((id, i) => list.indexOf(id) === i);
    const oldTail = new Set(firstSeen(ids.slice(0, killAt)).slice(-(ADVANCE_BATCH + 1)));
    const terms = (await termOf(fresh)) - termBefore;
    const log = recv.received.map((d, n) => {
      const e = d.body.data.event as { event_id: string; content: string };
      return `#${n} ${n < killAt ? 'old leader' : 'new leader'} ${e.content}${count.get(e.event_id)! > 1 ? (ids.indexOf(e.event_id) === n ? '  (sent again later)' : '  DUPLICATE') : ''}`;
    });
    console.log([
      `webhook failover: ${ids.length} deliveries of ${count.size} events (${acked.length} acknowledged writes), leader ${old} killed after delivery #${killAt - 1}, new leader ${fresh}; `
      + `${duplicated.length} duplicate(s) (${duplicated.filter((id) => oldTail.has(id)).length} of them among the old leader's last ${ADVANCE_BATCH} + 1 deliveries; terms +${terms})`,
      'delivery log around the kill:', ...log.slice(Math.max(0, killAt - 6), killAt + duplicated.length + 6),
    ].join('\n'));
    // Each term change lets its new leader resend at most the previous one's unrecorded tail. When the kill
    // was the only one (the usual case), every duplicate is of the killed leader's last deliveries.
    expect(duplicated.length).toBeLessThanOrEqual((ADVANCE_BATCH + 1) * terms);
    if (terms === 1) for (const id of duplicated) expect([id, oldTail.has(id), count.get(id)]).toEqual([id, true, 2]);

    // in commit order per user: first arrivals follow the stream's order
    const firstArrivals = firstSeen(ids);
    for (const w of load.writers) {
      const stream = (await listEvents(freshUrl, w.user, w.stream)).map((e) => e.event_id);
      const arrived = firstArrivals.filter((id) => stream.includes(id));
      expect([w.user, arrived]).toEqual([w.user, stream.filter((id) => count.has(id))]);
      expect(stream.every((id) => count.has(id))).toBe(true); // stored events are all delivered, acknowledged or not
    }
  });
});
