/** The flag reading of the repository's scripts: `--name value`, integers checked (exit 2 with the flag named). */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1];
}

/** Every value of a flag given several times (`--file a --file b`), in order. */
export function args(name: string): string[] {
  return process.argv.flatMap((a, i) => (a === `--${name}` && process.argv[i + 1] !== undefined ? [process.argv[i + 1]] : []));
}

export function intArg(name: string, def: number): number {
  const raw = arg(name);
  if (raw === undefined) return def;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 0) {
    console.error(`--${name} needs a non-negative integer`);
    process.exit(2);
  }
  return v;
}
