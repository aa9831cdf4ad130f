/**
 * MCP sessions held by a node. A session is in-memory state (its transport, its server, its stream),
 * so the number held is bounded: when full, the least recently used is closed; an idle one is closed
 * after its timeout. A closed session's client gets 404 and starts a new one (the MCP transport's rule).
 */
export interface HeldSession {
  /** who opened it (`kind:subject` of the credentials): only they may use it */
  owner: string;
  close(): Promise<void>;
}

export class SessionTable<S extends HeldSession> {
  /** insertion order is use order: the first entry is the least recently used */
  private readonly sessions = new Map<string, { session: S; usedAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly max: number, private readonly idleMs: number, private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => void this.sweep(), Math.min(60_000, Math.max(1000, idleMs / 4)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** The session if it exists and belongs to `owner` (another owner's session is not revealed). */
  use(id: string, owner: string): S | undefined {
    const entry = this.sessions.get(id);
    if (!entry || entry.session.owner !== owner) return undefined;
    this.sessions.delete(id);
    this.sessions.set(id, { session: entry.session, usedAt: this.now() });
    return entry.session;
  }

  async add(id: string, session: S): Promise<void> {
    while (this.sessions.size >= this.max) {
      const [oldest] = this.sessions.keys();
      await this.remove(oldest);
    }
    this.sessions.set(id, { session, usedAt: this.now() });
  }

  async remove(id: string): Promise<void> {
    const entry = this.sessions.get(id);
    if (!entry) return;
    this.sessions.delete(id);
    await entry.session.close().catch(() => undefined);
  }

  /** Closes the sessions unused for longer than the idle timeout. */
  async sweep(): Promise<void> {
    const cutoff = this.now() - this.idleMs;
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
