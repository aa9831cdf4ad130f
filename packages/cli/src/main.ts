/** Entry point of `strata` (bin/strata.js loads its compiled form from dist/; tests run this source through tsx). */
import { buildProgram } from './program';
import { DEFAULT_URL } from './context';
import { report } from './errors';

/**
 * Runs one command line and sets the exit code: 0 success, 1 failed request, 2 wrong usage. The code
 * is set, not forced with process.exit, so output still in flight to a pipe is not cut off.
 */
export async function main(argv: string[]): Promise<void> {
  const out = (s: string) => void process.stdout.write(s);
  const err = (s: string) => void process.stderr.write(s);
  const program = buildProgram({ out, err });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (failure) {
    const g = program.opts<{ json?: boolean; url?: string }>();
    process.exitCode = report(failure, { json: g.json === true, url: g.url ?? DEFAULT_URL }, err);
  }
}
