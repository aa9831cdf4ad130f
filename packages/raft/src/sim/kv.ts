/** A tiny key-value state machine for the simulator, and its sequential model for the checker. */
import { invariant } from '../core/assert';
import type { Model, Operation } from './porcupine';

export type KvInput = { op: 'get'; key: string } | { op: 'put'; key: string; value: string } | { op: 'append'; key: string; value: string };

export function encodeCmd(i: KvInput): Uint8Array {
  return Buffer.from(JSON.stringify(i));
}

export function decodeCmd(b: Uint8Array): KvInput {
  return JSON.parse(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString()) as KvInput;
}

/** Durable across crashes: the application persists its data with its applied index atomically. */
export class KvMachine {
  data = new Map<string, string>();
  applied = 0;

  apply(index: number, cmd: KvInput | null): void {
    invariant(index === this.applied + 1, () => `state machine applied ${index} after ${this.applied}`);
    this.applied = index;
    if (!cmd || cmd.op === 'get') return;
    if (cmd.op === 'put') this.data.set(cmd.key, cmd.value);
    else this.data.set(cmd.key, (this.data.get(cmd.key) ?? '') + cmd.value);
  }

  get(key: string): string {
    return this.data.get(key) ?? '';
  }

  snapshot(): Uint8Array {
    return Buffer.from(JSON.stringify([...this.data.entries()].sort()));
  }

  restore(index: number, data: Uint8Array): void {
    this.data = new Map(JSON.parse(Buffer.from(data).toString()) as [string, string][]);
    this.applied = index;
  }
}

export const kvModel: Model<string, KvInput, string> = {
  init: () => '',
  step(state, input, output) {
    switch (input.op) {
      case 'get':
        return output === undefined || output === state ? state : undefined;
      case 'put':
        return input.value;
      case 'append':
        return state + input.value;
    }
  },
  key: (s) => s,
  partition(ops: Operation<KvInput, string>[]) {
    const by = new Map<string, Operation<KvInput, string>[]>();
    for (const o of ops) {
      const l = by.get(o.input.key) ?? [];
      l.push(o);
      by.set(o.input.key, l);
    }
    return [...by.values()];
  },
};
