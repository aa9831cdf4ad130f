/**
 * Linearizability checking with the Wing-Gong algorithm as Porcupine implements it (Lowe's
 * just-in-time linearization with memoization of (linearized set, state)), partitioned by key.
 * An operation whose outcome is unknown has no return: it is given a return after everything else,
 * so it may take effect at any point after its call, or not be observed at all.
 */

export interface Operation<I, O> {
  clientId: number;
  input: I;
  /** event times; unique and increasing across the history */
  call: number;
  /** undefined: outcome unknown (timed out, node crashed) */
  ret?: number;
  output?: O;
}

export interface Model<S, I, O> {
  init(): S;
  /** the next state if (input, output) is a legal step from state, else undefined */
  step(state: S, input: I, output: O | undefined): S | undefined;
  /** a key for memoization; equal states must give equal keys */
  key(state: S): string;
  partition?(ops: Operation<I, O>[]): Operation<I, O>[][];
}

export type CheckResult = { ok: true } | { ok: false; partition: number; reason: string } | { ok: 'unknown'; reason: string };

interface Node<I, O> {
  op: Operation<I, O> | null;
  id: number;
  isCall: boolean;
  match: Node<I, O> | null;
  prev: Node<I, O> | null;
  next: Node<I, O> | null;
}

export function checkOperations<S, I, O>(model: Model<S, I, O>, history: Operation<I, O>[], maxSteps = 5_000_000): CheckResult {
  const parts = model.partition ? model.partition(history) : [history];
  for (let p = 0; p < parts.length; p++) {
    const r = checkPartition(model, parts[p], maxSteps);
    if (r === 'unknown') return { ok: 'unknown', reason: `partition ${p} exceeded ${maxSteps} search steps` };
    if (!r) return { ok: false, partition: p, reason: `no linearization of ${parts[p].length} operations` };
  }
  return { ok: true };
}

function checkPartition<S, I, O>(model: Model<S, I, O>, ops: Operation<I, O>[], maxSteps: number): boolean | 'unknown' {
  if (ops.length === 0) return true;
  const end = Math.max(...ops.map((o) => Math.max(o.call, o.ret ?? 0))) + 1;
  // Events sorted by time; a pending op returns at the end. Calls sort before returns at equal times.
  const events: { t: number; isCall: boolean; id: number }[] = [];
  ops.forEach((o, id) => {
    events.push({ t: o.call, isCall: true, id });
    events.push({ t: o.ret ?? end, isCall: false, id });
  });
  events.sort((a, b) => a.t - b.t || (a.isCall === b.isCall ? a.id - b.id : a.isCall ? -1 : 1));
  const head: Node<I, O> = { op: null, id: -1, isCall: false, match: null, prev: null, next: null };
  const calls = new Map<number, Node<I, O>>();
  let last = head;
  for (const e of events) {
    const n: Node<I, O> = { op: ops[e.id], id: e.id, isCall: e.isCall, match: null, prev: last, next: null };
    if (e.isCall) calls.set(e.id, n);
    else {
      const c = calls.get(e.id) as Node<I, O>;
      c.match = n;
      n.match = c;
    }
    last.next = n;
    last = n;
  }
  const lift = (n: Node<I, O>) => {
    (n.prev as Node<I, O>).next = n.next;
    if (n.next) n.next.prev = n.prev;
    const m = n.match as Node<I, O>;
    (m.prev as Node<I, O>).next = m.next;
    if (m.next) m.next.prev = m.prev;
  };
  const unlift = (n: Node<I, O>) => {
    const m = n.match as Node<I, O>;
    (m.prev as Node<I, O>).next = m;
    if (m.next) m.next.prev = m;
    (n.prev as Node<I, O>).next = n;
    if (n.next) n.next.prev = n;
  };
  const linearized = new Uint8Array(ops.length);
  const cache = new Set<string>();
  const stack: { node: Node<I, O>; state: S }[] = [];
  let state = model.init();
  let entry = head.next;
  let steps = 0;
  while (head.next !== null) {
    if (++steps > maxSteps) return 'unknown';
    const n = entry as Node<I, O>;
    if (n.isCall) {
      const op = n.op as Operation<I, O>;
      const next = model.step(state, op.input, op.ret === undefined ? undefined : op.output);
      let advanced = false;
      if (next !== undefined) {
        linearized[n.id] = 1;
        const k = bitsKey(linearized) + '|' + model.key(next);
        if (!cache.has(k)) {
          cache.add(k);
          stack.push({ node: n, state });
          state = next;
          lift(n);
          entry = head.next;
          advanced = true;
        } else linearized[n.id] = 0;
      }
      if (!advanced) entry = n.next;
    } else {
      // A return whose call cannot be linearized before it: backtrack.
      const top = stack.pop();
      if (!top) return false;
      state = top.state;
      linearized[top.node.id] = 0;
      unlift(top.node);
      entry = top.node.next;
    }
  }
  return true;
}

function bitsKey(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 16) {
    let w = 0;
    for (let j = 0; j < 16 && i + j < b.length; j++) w |= b[i + j] << j;
    s += w.toString(36) + ',';
  }
  return s;
}
