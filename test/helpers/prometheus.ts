/** A scrape of a node's /metrics (Prometheus text format 0.0.4), parsed into samples. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class Scrape {
  constructor(readonly samples: Sample[], readonly types: Map<string, string>) {}

  static parse(text: string): Scrape {
    const samples: Sample[] = [];
    const types = new Map<string, string>();
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1], type[2]);
      if (line === '' || line.startsWith('#')) continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
      samples.push({ name: m[1], labels, value: Number(m[3]) });
    }
    return new Scrape(samples, types);
  }

  /** Samples of a series name whose labels include `labels`. */
  all(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  /** The one value of a series (throws when absent or ambiguous, so a missing series fails loudly). */
  value(name: string, labels: Record<string, string> = {}): number {
    const found = this.all(name, labels);
    if (found.length !== 1) throw new Error(`${name}${JSON.stringify(labels)}: ${found.length} samples`);
    return found[0].value;
  }
}

export async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return Scrape.parse(await res.text());
}
