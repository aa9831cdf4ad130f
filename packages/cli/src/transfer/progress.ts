/**
 * Progress of an export or import on stderr (stdout carries the data or the result): a bar on a
 * terminal, plain lines at most once a second otherwise (logs, pipes, CI), and a last line with the
 * totals. Counted in bytes: an export's size is not known in advance (a running count, no ETA); an
 * import's is when it reads a file (a bar with percentage and ETA).
 */
import { SingleBar } from 'cli-progress';
import { formatBytes, formatRate, seconds } from './format';

export interface TransferProgress {
  /** `bytes` more went through; `records` is the count so far, when it is known */
  advance(bytes: number, records?: number): void;
  /** the last line: how much, how long */
  finish(): void;
  /** stops the bar without the last line (a failure is reported instead) */
  abort(): void;
}

export interface TransferProgressOptions {
  /** names the lines: `export`, `import` */
  label: string;
  /** bytes expected, when known (a file); null otherwise */
  total: number | null;
  /** whether to show a record count (an export counts its lines as they pass) */
  records: boolean;
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  now?: () => number;
}

export function createTransferProgress(options: TransferProgressOptions): TransferProgress {
  return options.stream.isTTY ? barProgress(options) : lineProgress(options);
}

function barProgress({ label, total, records, stream, now = Date.now }: TransferProgressOptions): TransferProgress {
  const start = now();
  let done = 0;
  let count = 0;
  const counted = records ? ' | {records} records' : '';
  const bar = new SingleBar({
    stream,
    format: total === null
      ? `${label} {done}${counted} | {rate} | {duration_formatted}`
      : `${label} [{bar}] {percentage}% | {done}/{size}${counted} | {rate} | ETA {eta_formatted}`,
    hideCursor: true,
    etaBuffer: 50,
  });
  const payload = () => ({ done: formatBytes(done), size: total === null ? '' : formatBytes(total), records: count, rate: formatRate(done, now() - start) });
  bar.start(total ?? 0, 0, payload());
  return {
    advance(bytes, recordsSoFar) {
      done += bytes;
      count = recordsSoFar ?? count;
      bar.update(total === null ? 0 : Math.min(done, total), payload());
    },
    finish() {
      bar.update(total === null ? 0 : Math.min(done, total), payload());
      bar.stop();
    },
    abort() {
      bar.stop();
    },
  };
}

function lineProgress({ label, total, records, stream, now = Date.now }: TransferProgressOptions): TransferProgress {
  const start = now();
  let done = 0;
  let count = 0;
  let last = start;
  const counted = () => (records ? `, ${count} records` : '');
  return {
    advance(bytes, recordsSoFar) {
      done += bytes;
      count = recordsSoFar ?? count;
      const t = now();
      if (t - last < 1000) return;
      last = t;
      const ms = t - start;
      const of = total === null ? formatBytes(done) : `${formatBytes(done)}/${formatBytes(total)} (${Math.floor((done * 100) / Math.max(total, 1))}%)`;
      const rate = ms > 0 ? (done * 1000) / ms : 0;
      const eta = total !== null && rate > 0 ? `, ETA ${Math.ceil((total - done) / rate)} s` : '';
      stream.write(`${label}: ${of}${counted()}, ${formatRate(done, ms)}${eta}\n`);
    },
    finish() {
      const ms = now() - start;
      stream.write(`${label}: ${formatBytes(done)}${counted()} in ${seconds(ms)} s (${formatRate(done, ms)})\n`);
    },
    abort() {},
  };
}
