/**
 * Cross-record invariants of one replica's state: the secondary indexes and counters that apply keeps
 * beside the records must agree with the records. Apply writes them in the same batch, so any
 * disagreement is an apply bug (or a replay that wrote part of a command twice). Reads the whole
 * database: for the simulator's checkpoints, not for a node.
 */
import type { Sub, StateDb } from '../db';
import { join, SEP } from '../keys';
import { isLiveWebhook, WEBHOOK_ATTEMPTS_KEPT, webhookWants, type WebhookRecord } from '../webhooks';

async function entries<V>(sub: Sub<V>): Promise<Map<string, V>> {
  const out = new Map<string, V>();
  for await (const [k, v] of sub.iterator()) out.set(k, v);
  return out;
}

/** A free-text key part as apply writes it (see keyPart in apply/memory.ts). */
const keyPart = (s: string): string => s.split(SEP).join(' ');

/** The violated rules (empty when the state is consistent), each naming a record. */
export async function checkState(db: StateDb): Promise<string[]> {
  const problems: string[] = [];
  const fail = (msg: string) => {
    if (problems.length < 20) problems.push(msg);
  };

  const units = await entries(db.units);
  const edges = await entries(db.edges);
  const adjacency = await entries(db.adjacency);
  const events = await entries(db.events);
  const eventIds = await entries(db.eventIds);
  const pending = await entries(db.pending);
  const pendingByUser = await entries(db.pendingByUser);

  // Counters against the records they count (`dropped` is not: deleting an event keeps the count of drops).
  const counted: [string, number][] = [
    ['units', units.size], ['edges', edges.size], ['events', events.size], ['pending', pending.size],
    ['failed', (await entries(db.failed)).size], ['goals', (await entries(db.goals)).size], ['tasks', (await entries(db.tasks)).size],
  ];
  for (const [name, n] of counted) {
    const c = await db.counter(name);
    if (c !== n) fail(`counter ${name} is ${c} but ${n} records exist`);
  }

  for (const [key, unit] of units) {
    if (key !== join(unit.user_id, unit.id)) fail(`unit stored under ${JSON.stringify(key)} says user ${unit.user_id} id ${unit.id}`);
    if ((unit.retired_at === null) !== (unit.retired_reason === null)) fail(`unit ${unit.id}: retired_at and retired_reason disagree`);
    if (!(unit.importance >= 0 && unit.importance <= 1)) fail(`unit ${unit.id}: importance ${unit.importance} outside [0, 1]`);
    if (unit.subject && unit.attribute) {
      const k = join(unit.user_id, keyPart(unit.subject), keyPart(unit.attribute), unit.id);
      if ((await db.unitBySubject.get(k)) !== unit.id) fail(`unit ${unit.id} missing from unit_by_subject`);
    }
    if (unit.org_id && (await db.orgUnits.get(join(unit.org_id, unit.user_id, unit.id))) !== unit.id) fail(`unit ${unit.id} missing from org_units`);
  }
  for await (const [k, id] of db.unitBySubject.iterator()) {
    const user = k.slice(0, k.indexOf(SEP));
    if (!units.has(join(user, id))) fail(`unit_by_subject ${JSON.stringify(k)} names a unit that does not exist`);
  }
  for await (const [k, id] of db.orgUnits.iterator()) {
    const [org, user] = k.split(SEP);
    if (units.get(join(user, id))?.org_id !== org) fail(`org_units ${JSON.stringify(k)} names no unit of that org`);
  }
  for (const sub of [db.vectors, db.unitStats] as Sub<unknown>[]) {
    for await (const k of sub.keys()) if (!units.has(k)) fail(`${sub.prefix} ${JSON.stringify(k)} belongs to no unit`);
  }

  // Every edge has its two adjacency entries and joins two units of its user; every adjacency entry has its edge.
  for (const [key, e] of edges) {
    if (key !== join(e.user_id, e.edge_id)) fail(`edge stored under ${JSON.stringify(key)} says ${e.edge_id}`);
    for (const [end, other, out] of [[e.source_id, e.target_id, true], [e.target_id, e.source_id, false]] as const) {
      if (!units.has(join(e.user_id, end))) fail(`edge ${e.edge_id} touches missing unit ${end}`);
      const a = adjacency.get(join(e.user_id, end, e.edge_id));
      if (!a || a.other_id !== other || a.out !== out || a.relation !== e.relation) fail(`edge ${e.edge_id}: adjacency under ${end} missing or wrong`);
    }
  }
  for (const k of adjacency.keys()) {
    const [user, , edgeId] = k.split(SEP);
    if (!edges.has(join(user, edgeId))) fail(`adjacency ${JSON.stringify(k)} has no edge`);
  }

  // Events and their id index are one-to-one.
  for (const [key, ev] of events) {
    const at = eventIds.get(join(ev.user_id, ev.event_id));
    if (!at || join(ev.user_id, at.stream_id, at.seq) !== key) fail(`event ${ev.event_id} (${ev.seq}) is not what event_ids names`);
  }
  for (const [key, at] of eventIds) {
    const [user] = key.split(SEP);
    if (!events.has(join(user, at.stream_id, at.seq))) fail(`event_ids ${JSON.stringify(key)} names no event`);
  }

  // The pending queue and its by-user copy hold the same entries, each of an existing event.
  for (const [seq, entry] of pending) {
    const copy = pendingByUser.get(join(entry.user_id, seq));
    if (!copy || JSON.stringify(copy) !== JSON.stringify(entry)) fail(`pending ${seq} missing or different in pending_by_user`);
    if (eventIds.get(join(entry.user_id, entry.event_id))?.seq !== seq) fail(`pending ${seq} names event ${entry.event_id} that is not stored there`);
  }
  for (const [k, entry] of pendingByUser) {
    const seq = k.slice(k.lastIndexOf(SEP) + 1);
    if (pending.get(seq)?.event_id !== entry.event_id) fail(`pending_by_user ${JSON.stringify(k)} is not pending`);
  }

  // Users and orgs: the record and its by-org index agree.
  const userOrgs = await entries(db.userOrgs);
  for (const [user, rec] of userOrgs) if ((await db.orgUsers.get(join(rec.org_id, user))) !== user) fail(`user ${user} missing from org_users of ${rec.org_id}`);
  for await (const [k, user] of db.orgUsers.iterator()) {
    const [org] = k.split(SEP);
    if (userOrgs.get(user)?.org_id !== org) fail(`org_users ${JSON.stringify(k)} disagrees with user_orgs`);
  }

  // Semantic plans and their expiry index agree.
  const plans = await entries(db.semanticPlans);
  for (const [id, plan] of plans) if ((await db.planExpiry.get(join(plan.expires_at, id))) !== id) fail(`plan ${id} missing from plan_expiry`);
  for await (const [k, id] of db.planExpiry.iterator()) if (plans.get(id)?.expires_at !== k.split(SEP)[0]) fail(`plan_expiry ${JSON.stringify(k)} has no plan`);

  // An event planned into L3 names a goal or task that exists.
  for await (const [k, src] of db.l3ByEvent.iterator()) {
    const [user] = k.split(SEP);
    const sub = src.kind === 'goal' ? (db.goals as Sub<unknown>) : (db.tasks as Sub<unknown>);
    if ((await sub.get(join(user, src.id))) === undefined) fail(`l3_by_event ${JSON.stringify(k)} names missing ${src.kind} ${src.id}`);
  }

  // API keys and their hash index are one-to-one.
  for await (const [k, v] of db.auth.iterator()) {
    if (k.startsWith(`apikey${SEP}`)) {
      const rec = v as { key_id: string; key_hash: string };
      if ((await db.auth.get(`apikey_hash${SEP}${rec.key_hash}`)) !== rec.key_id) fail(`api key ${rec.key_id} missing from its hash index`);
    } else if (k.startsWith(`apikey_hash${SEP}`)) {
      if ((await db.auth.get(`apikey${SEP}${v as string}`)) === undefined) fail(`api key hash ${JSON.stringify(k)} names no key`);
    }
  }
  // Webhooks: the live count, and per live subscription its counters against its outbox and attempts;
  // a deleted one (tombstone) keeps nothing else.
  const live = new Map<string, WebhookRecord>();
  for await (const [id, w] of db.webhooks.iterator()) if (isLiveWebhook(w)) live.set(id, w);
  if ((await db.counter('webhooks')) !== live.size) fail(`counter webhooks is ${await db.counter('webhooks')} but ${live.size} live subscriptions exist`);
  const queued = new Map<string, number>();
  for await (const [k, d] of db.webhookOutbox.iterator()) {
    const id = k.slice(0, k.indexOf(SEP));
    const w = live.get(id);
    if (!w) fail(`webhook_outbox ${JSON.stringify(k)} belongs to no live subscription`);
    else if (!webhookWants(w, d.type)) fail(`webhook_outbox ${JSON.stringify(k)} holds a ${d.type} the subscription does not want`);
    if (k !== join(id, d.seq)) fail(`webhook_outbox ${JSON.stringify(k)} holds seq ${d.seq}`);
    queued.set(id, (queued.get(id) ?? 0) + 1);
  }
  const attempts = new Map<string, number>();
  for await (const k of db.webhookAttempts.keys()) {
    const id = k.slice(0, k.indexOf(SEP));
    if (!live.has(id)) fail(`webhook_attempts ${JSON.stringify(k)} belongs to no live subscription`);
    attempts.set(id, (attempts.get(id) ?? 0) + 1);
  }
  for await (const [id, st] of db.webhookState.iterator()) {
    if (!live.has(id)) fail(`webhook_state of ${id} belongs to no live subscription`);
    if (st.queued !== (queued.get(id) ?? 0)) fail(`webhook ${id}: state says ${st.queued} queued, the outbox holds ${queued.get(id) ?? 0}`);
    if (st.queued > (live.get(id)?.outbox_max ?? Infinity)) fail(`webhook ${id}: ${st.queued} queued over its bound`);
    if (st.attempts !== (attempts.get(id) ?? 0) || st.attempts > WEBHOOK_ATTEMPTS_KEPT) fail(`webhook ${id}: state says ${st.attempts} attempts, ${attempts.get(id) ?? 0} kept`);
  }
  for (const id of live.keys()) if ((await db.webhookState.get(id)) === undefined) fail(`webhook ${id} has no state`);
  return problems;
}
