/** Option and argument parsers: a bad value is a usage error (exit 2) that names what was expected. */
import { InvalidArgumentError } from 'commander';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function integerIn(min: number, max: number) {
  return (value: string): number => {
    const n = /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}.`);
    return n;
  };
}

export function numberIn(min: number, max: number) {
  return (value: string): number => {
    const n = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`expected a number from ${min} to ${max}.`);
    return n;
  };
}

export function uuid(value: string): string {
  if (!UUID.test(value)) throw new InvalidArgumentError('expected a UUID (e.g. 3c9d1f0e-7a2b-4c5d-8e6f-0a1b2c3d4e5f).');
  return value.toLowerCase();
}

/** For repeatable options: `--user a --user b` → ['a', 'b']. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
