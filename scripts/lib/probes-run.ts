/** Runs the stated-fact probes (probes.ts) against a node over HTTP and scores them. */
import { StrataClient } from '@strata/client';
import { scoreProbes, type ProbeScore, type ProbeUser } from './probes';

/** A fixed stream per probe user (the id only has to be a UUID). */
function streamOf(index: number): string {
  return `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
}

export async function runProbes(client: StrataClient, users: ProbeUser[], options: { limit?: number; timeoutMs?: number } = {}): Promise<ProbeScore> {
  const keyOfEvent = new Map<string, string>(); // event id → probe key, per user (user|event)
  const contentOf = new Map<string, string>();
  for (const [i, user] of users.entries()) {
    const answer = await client.ingestBatch(user.user_id, streamOf(i), user.events.map((e) => ({ content: e.content, content_type: e.content_type ?? 'text' })));
    answer.event_ids.forEach((id, j) => {
      keyOfEvent.set(`${user.user_id}|${id}`, user.events[j].key);
      contentOf.set(`${user.user_id}|${user.events[j].key}`, user.events[j].content);
    });
  }
  const ready = await client.waitUntilReady(options.timeoutMs ?? 120_000, 100);
  if (!ready.ready) throw new Error(`consolidation did not finish: ${JSON.stringify(ready)}`);
  const questions = [];
  const ranked = [];
  for (const [i, user] of users.entries()) {
    for (const q of user.questions) {
      const res = await client.retrieve(user.user_id, streamOf(i), { query: q.query, limit: options.limit ?? 10 });
      ranked.push({
        keys: res.results.map((r) => r.unit.references.map((id) => keyOfEvent.get(`${user.user_id}|${id}`) ?? '?')),
        top: res.results[0]?.unit.content ?? null,
      });
      questions.push({ ...q, expected_content: contentOf.get(`${user.user_id}|${q.expected}`) ?? '' });
    }
  }
  return scoreProbes(questions, ranked);
}
