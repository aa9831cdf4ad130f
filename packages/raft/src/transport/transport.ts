/** What the driver needs from a transport: fire-and-forget batches per peer, and inbound delivery. */
import type { GroupMessage } from './codec';

export type InboundHandler = (from: number, fromUrl: string | null, msgs: GroupMessage[]) => void;

export interface Transport {
  /** Queues messages for a peer; delivery is best effort (Raft retries). */
  send(to: number, url: string, msgs: GroupMessage[]): void;
  setHandler(h: InboundHandler): void;
  close(): Promise<void>;
}

/** In-process transport between hosts of one test: delivers asynchronously, like a network. */
export class LocalTransportHub {
  private readonly handlers = new Map<number, InboundHandler>();
  /** set to drop traffic between two nodes */
  blocked = new Set<string>();

  transport(nodeId: number): Transport {
    return {
      send: (to, _url, msgs) => {
        if (this.blocked.has(`${nodeId}>${to}`)) return;
        setImmediate(() => this.handlers.get(to)?.(nodeId, `local://${nodeId}`, msgs));
      },
      setHandler: (h) => void this.handlers.set(nodeId, h),
      close: async () => void this.handlers.delete(nodeId),
    };
  }
}
