/**
 * MCP sessions held by a node. A session is in-memory state (its transport, its server, its stream),
 * so the number held is bounded, in all and per owner: an owner at its own cap loses its own least
 * recently used session; a full table loses the least recently used session of the owner holding the
 * most, so one tenant opening sessions in a loop closes only its own (red-team round 3: a read-only
 * key opening 1,050 sessions evicted every other tenant's). An idle session is closed after its
 * timeout. A closed session's client gets 404 and starts a new one (the MCP transport's rule).
 */
export interface HeldSession {
  /** who opened it (`kind:subject` of the credentials): only they may use it */
  owner: string;
  close(): Promise<void>;
}

export interface SessionLimits {
  /** sessions held at once, all owners together */
  max: number;
  /** sessions one owner may hold at once */
  perOwner: number;
  /** milliseconds a session may stay unused */
  idleMs: number;
}

export class SessionTable<S extends HeldSession> {
  /** insertion order is use order: the first entry is the least recently used */
  private readonly sessions = new Map<string, { session: S; usedAt: number }>();
  /** sessions held per owner */
  private readonly held = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly limits: SessionLimits, private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1000, limits.idleMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Sessions `owner` holds. */
  heldBy(owner: string): number {
    return this.held.get(owner) ?? 0;
  }

  /** The session if it exists and belongs to `owner` (another owner's session is not revealed). */
  use(id: string, owner: string): S | undefined {
    const entry = this.sessions.get(id);
    if (!entry || entry.session.owner !== owner) return undefined;
    this.sessions.delete(id);
    this.sessions.set(id, { session: entry.session, usedAt: this.now() });
    return entry.session;
  }

  /** The table's counts change before anything is awaited, so adds at once cannot overshoot a cap. */
  async add(id: string, session: S): Promise<void> {
    const closing: S[] = [];
    while (this.heldBy(session.owner) >= this.limits.perOwner) closing.push(this.take(this.oldestOf(session.owner)!)!);
    while (this.sessions.size >= this.limits.max) closing.push(this.take(this.oldestOf(this.largestOwner())!)!);
    this.sessions.set(id, { session, usedAt: this.now() });
    this.held.set(session.owner, this.heldBy(session.owner) + 1);
    for (const s of closing) await s.close().catch(() => undefined);
  }

  async remove(id: string): Promise<void> {
    await this.take(id)?.close().catch(() => undefined);
  }

  /** Out of the table (not yet closed). */
  private take(id: string): S | undefined {
    const entry = this.sessions.get(id);
    if (!entry) return undefined;
    this.sessions.delete(id);
    const left = this.heldBy(entry.session.owner) - 1;
    if (left > 0) this.held.set(entry.session.owner, left);
    else this.held.delete(entry.session.owner);
    return entry.session;
  }

  /** The owner holding the most sessions (the first such in use order of their oldest session). */
  private largestOwner(): string {
    let best = '';
    let most = 0;
    for (const [owner, n] of this.held) if (n > most) [best, most] = [owner, n];
    return best;
  }

  private oldestOf(owner: string): string | undefined {
    for (const [id, entry] of this.sessions) if (entry.session.owner === owner) return id;
    return undefined;
  }

  /** Closes the sessions unused for longer than the idle timeout. */
  async sweep(): Promise<void> {
    const cutoff = this.now() - this.limits.idleMs;
    for (const [id, entry] of [...this.sessions]) {
      if (entry.usedAt >= cutoff) break; // use order: the rest are newer
      await this.remove(id);
    }
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    for (const id of [...this.sessions.keys()]) await this.remove(id);
  }
}
