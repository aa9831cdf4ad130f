/** Everything a command prints as its result: JSON for scripts (`--json`), lines for people. */
export class Output {
  constructor(readonly json: boolean, private readonly write: (s: string) => void = (s) => process.stdout.write(s)) {}

  /** `value` is the --json document; `human` renders it for a terminal. */
  result(value: unknown, human: () => string[]): void {
    this.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : human().map((l) => `${l}\n`).join(''));
  }
}

/** Columns padded to their widest cell (the last column is not padded). */
export function table(header: string[], rows: string[][]): string[] {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd());
}
