/**
 * What `GET /readyz` answers, for a load balancer (docs/cluster.md "Behind a load balancer").
 *
 * The rule: a node is ready while its storage is open, it is a member of the cluster (initialized or
 * joined, and not removed), and it can serve or forward for most of its groups: for more than half of
 * the groups it must serve (shard 0 and every group it holds), a leader is known now or was known less
 * than `graceMs` ago (cluster.forward_timeout_ms, the time a request already waits for a leader). So
 * one group electing a leader (about an election timeout) takes no node out of a balancer's pool: the
 * requests of that group wait for its new leader instead of failing at the balancer, and the other
 * groups' requests go on. A node cut off from the others loses every leader and, after the grace,
 * leaves the pool; a node that never knew a leader (not initialized yet) is not ready.
 *
 * The strict check (`/readyz?strict=true`) is the former rule: a leader known right now for shard 0
 * and for every group this node holds (scripts that wait for a cluster to settle use it).
 */

/** One group as readiness sees it. */
export interface ReadinessGroup {
  id: number;
  /** this node must serve it: shard 0, or a group it holds */
  serves: boolean;
  /** a leader is known right now (this node leads, or its replica or the directory names one) */
  leaderKnown: boolean;
}

export interface ReadinessVerdict {
  ready: boolean;
  /** why not (null when ready) */
  reason: string | null;
}

/**
 * Pure: the verdict from the groups, when each last had a known leader (`lastLed`, ms), and now. A group
 * counts as served while its leader is known or was known within the grace.
 */
export function judgeReadiness(groups: readonly ReadinessGroup[], lastLed: ReadonlyMap<number, number>, now: number, graceMs: number, strict: boolean): ReadinessVerdict {
  const served = groups.filter((g) => g.serves);
  if (served.length === 0) return { ready: false, reason: 'This node serves no shard group.' };
  if (strict) {
    const missing = served.filter((g) => !g.leaderKnown).map((g) => g.id);
    return missing.length ? { ready: false, reason: `No leader known right now for shard ${missing.join(', ')}.` } : { ready: true, reason: null };
  }
  const led = served.filter((g) => g.leaderKnown || (lastLed.has(g.id) && now - lastLed.get(g.id)! <= graceMs));
  if (led.length * 2 > served.length) return { ready: true, reason: null };
  return { ready: false, reason: `A leader is known for only ${led.length} of the ${served.length} shard groups this node serves.` };
}

export interface ReadinessSource {
  /** storage open (false once the node is shutting down) */
  open(): boolean;
  /** why this node stopped serving (a failed storage write or apply stopped its Raft host), or null */
  failed(): string | null;
  /** why this node is not a member of the cluster (not initialized or joined yet, removed), or null */
  notMember(): string | null;
  groups(): ReadinessGroup[];
}

/** Samples when each group last had a known leader (every `sampleMs`) and judges on demand. */
export class Readiness {
  private readonly lastLed = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly source: ReadinessSource, private readonly graceMs: number, private readonly now: () => number = Date.now) {}

  start(sampleMs = 100): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), sampleMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  sample(): void {
    const t = this.now();
    for (const g of this.source.groups()) if (g.leaderKnown) this.lastLed.set(g.id, t);
  }

  check(strict = false): ReadinessVerdict {
    if (!this.source.open()) return { ready: false, reason: 'This node is shutting down.' };
    const failed = this.source.failed();
    if (failed) return { ready: false, reason: failed };
    const notMember = this.source.notMember();
    if (notMember) return { ready: false, reason: notMember };
    this.sample();
    return judgeReadiness(this.source.groups(), this.lastLed, this.now(), this.graceMs, strict);
  }
}
