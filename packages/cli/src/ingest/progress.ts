/**
 * Ingest progress on stderr (stdout keeps the result, so `--json` output stays one document): a bar
 * with rate and ETA on a terminal, plain lines at most once a second otherwise (logs, pipes, CI).
 */
import { SingleBar } from 'cli-progress';

export interface Progress {
  advance(count: number): void;
  /** the last line: how many, how long */
  finish(): void;
  /** stops the bar without the summary line (a failure is reported instead) */
  abort(): void;
}

export interface ProgressOptions {
  /** events expected, when known (a file); null for stdin */
  total: number | null;
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  now?: () => number;
}

export function createProgress(options: ProgressOptions): Progress {
  return options.stream.isTTY ? barProgress(options) : lineProgress(options);
}

function rate(done: number, ms: number): number {
  return ms > 0 ? Math.round((done * 1000) / ms) : 0;
}

function barProgress({ total, stream, now = Date.now }: ProgressOptions): Progress {
  const start = now();
  let done = 0;
  const bar = new SingleBar({
    stream,
    format: total === null
      ? 'ingest {value} events | {rate} events/s | {duration_formatted}'
      : 'ingest [{bar}] {percentage}% | {value}/{total} events | {rate} events/s | ETA {eta_formatted}',
    hideCursor: true,
    etaBuffer: 20,
  });
  bar.start(total ?? 0, 0, { rate: 0 });
  return {
    advance(count) {
      done += count;
      bar.update(done, { rate: rate(done, now() - start) });
    },
    finish() {
      bar.stop();
    },
    abort() {
      bar.stop();
    },
  };
}

function lineProgress({ total, stream, now = Date.now }: ProgressOptions): Progress {
  const start = now();
  let done = 0;
  let last = start;
  return {
    advance(count) {
      done += count;
      const t = now();
      if (t - last < 1000) return;
      last = t;
      const r = rate(done, t - start);
      const of = total === null ? `${done} events` : `${done}/${total} events (${Math.floor((done * 100) / Math.max(total, 1))}%)`;
      const eta = total !== null && r > 0 ? `, ETA ${Math.ceil((total - done) / r)} s` : '';
      stream.write(`ingest: ${of}, ${r} events/s${eta}\n`);
    },
    finish() {
      const ms = now() - start;
      stream.write(`ingest: ${done} events in ${(ms / 1000).toFixed(1)} s (${rate(done, ms)} events/s)\n`);
    },
    abort() {},
  };
}
