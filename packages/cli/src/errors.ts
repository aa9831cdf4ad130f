/**
 * What a failure prints and which exit code it gives (docs/api.md §16): 1 for a failed request (the
 * error envelope's message and code), 2 for wrong usage (commander's own parse errors, and UsageError).
 */
import { CommanderError } from 'commander';
import { StrataApiError } from '@strata/client';

export const EXIT_OK = 0;
export const EXIT_REQUEST_FAILED = 1;
export const EXIT_USAGE = 2;

/** The command line, or the input it names, is not what the command takes. */
export class UsageError extends Error {}

/** A request that failed without an error envelope (e.g. an export stream cut midway): exit 1, this message. */
export class Failed extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** A failure with what the user needs to carry on (e.g. how much of an ingest was accepted). */
export class Annotated extends Error {
  constructor(readonly failure: unknown, readonly notes: string[], readonly extra: Record<string, unknown> = {}) {
    super(failure instanceof Error ? failure.message : String(failure));
  }
}

/** Prints the failure to stderr (as JSON with --json) and answers the exit code. */
export function report(err: unknown, options: { json: boolean; url: string }, write: (s: string) => void): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE; // commander printed it
  const notes = err instanceof Annotated ? err.notes : [];
  const extra = err instanceof Annotated ? err.extra : {};
  const cause = err instanceof Annotated ? err.failure : err;
  if (cause instanceof UsageError) {
    write(options.json ? `${JSON.stringify({ error: cause.message, code: 'usage', ...extra })}\n` : [`strata: ${cause.message}`, ...notes].join('\n') + '\n');
    return EXIT_USAGE;
  }
  if (cause instanceof StrataApiError) {
    if (options.json) {
      write(`${JSON.stringify({ error: cause.message, code: cause.code, status: cause.status, ...(cause.details ? { details: cause.details } : {}), ...extra })}\n`);
    } else {
      const details = (cause.details ?? []).map((d) => `  ${d.path}: ${d.message}`);
      write([`strata: ${cause.message} (${cause.code}, HTTP ${cause.status})`, ...details, ...notes].join('\n') + '\n');
    }
    return EXIT_REQUEST_FAILED;
  }
  if (cause instanceof Failed) {
    write(options.json ? `${JSON.stringify({ error: cause.message, code: cause.code, ...extra })}\n` : [`strata: ${cause.message}`, ...notes].join('\n') + '\n');
    return EXIT_REQUEST_FAILED;
  }
  // No answer at all (connection refused, timeout): the request failed too.
  const message = `cannot reach ${options.url}: ${describe(cause)}`;
  write(options.json ? `${JSON.stringify({ error: message, code: 'unreachable', ...extra })}\n` : [`strata: ${message}`, ...notes].join('\n') + '\n');
  return EXIT_REQUEST_FAILED;
}

export function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
}
