/**
 * `strata export`: one user's records (--user) or every user's (unscoped admin key) as an export file
 * (NDJSON, docs/api.md §14, docs/export-format.md), written to --out or stdout as the node sends it:
 * chunk by chunk with back-pressure, so memory stays flat whatever the export's size.
 */
import { createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { Command } from 'commander';
import { connected } from '../context';
import { Failed, UsageError, describe } from '../errors';
import { formatBytes, seconds } from '../transfer/format';
import { createTransferProgress } from '../transfer/progress';
import { countsLine, RecordCounter } from '../transfer/records';

interface ExportCommandOptions {
  user?: string;
  out?: string;
  linearizable?: boolean;
}

/** Where the file goes: written beside its name and renamed once complete, so a cut export leaves no file that looks whole. */
interface FileTarget {
  open(): Writable;
  commit(): void;
  discard(): void;
}

export function registerExport(program: Command): void {
  program
    .command('export')
    .description("stream memory records as an export file (NDJSON, docs/export-format.md): one user's, or every user's (unscoped admin key)")
    .option('--user <user_id>', "export this user's records (default: every user)")
    .option('--out <file>', 'write the file here, in place only once complete (default: stdout)')
    .option('--linearizable', "wait for the leader's commit index first (export what was just written anywhere)")
    .action(connected(async ({ client, out }, command) => {
      const o = command.opts<ExportCommandOptions>();
      const target = o.out === undefined ? null : fileTarget(o.out);
      const options = { consistency: o.linearizable ? ('linearizable' as const) : undefined };
      const started = Date.now();
      const body = o.user === undefined ? await client.exportAll(options) : await client.exportUser(o.user, options);
      const progress = createTransferProgress({ label: 'export', total: null, records: true, stream: process.stderr });
      const counter = new RecordCounter((bytes, records) => progress.advance(bytes, records));
      try {
        const source = Readable.fromWeb(body as WebReadableStream<Uint8Array>);
        // stdout stays open: it is the process's, not this command's
        if (target) await pipeline(source, counter, target.open());
        else await pipeline(source, counter, process.stdout, { end: false });
        target?.commit();
      } catch (err) {
        progress.abort();
        target?.discard();
        const written = o.out === undefined ? 'What reached stdout is incomplete.' : `${o.out} was not written.`;
        throw new Failed('export_incomplete', `the export stopped after ${counter.records} record(s), ${formatBytes(counter.bytes)}: ${describe(err)}. ${written}`);
      }
      progress.finish();
      // Without --out, stdout is the data: the progress's last line on stderr is the summary.
      if (o.out === undefined) return;
      const ms = Date.now() - started;
      out.result(
        { status: 'exported', user_id: o.user ?? null, file: o.out, records: counter.counts, total_records: counter.records, bytes: counter.bytes, seconds: ms / 1000 },
        () => [`exported ${counter.records} record(s) (${countsLine(counter.counts)}) to ${o.out}: ${formatBytes(counter.bytes)} in ${seconds(ms)} s`],
      );
    }));
}

/**
 * Checked before anything is asked of the node (a wrong path is wrong usage, exit 2). A regular file
 * (or a new one) is written as `<file>.partial` and renamed at the end; anything else that can be
 * written to (a device such as /dev/null, a named pipe) is written directly.
 */
function fileTarget(file: string): FileTarget {
  let existing: ReturnType<typeof statSync> | null = null;
  try {
    existing = statSync(file);
  } catch {
    existing = null;
  }
  if (existing?.isDirectory()) throw new UsageError(`--out ${file} is a directory.`);
  if (existing && !existing.isFile()) return { open: () => createWriteStream(file), commit() {}, discard() {} };
  let dir: ReturnType<typeof statSync>;
  try {
    dir = statSync(dirname(file));
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as Error).message}`);
  }
  if (!dir.isDirectory()) throw new UsageError(`cannot write ${file}: ${dirname(file)} is not a directory.`);
  const partial = `${file}.partial`;
  return {
    open: () => createWriteStream(partial),
    commit: () => renameSync(partial, file),
    discard: () => rmSync(partial, { force: true }),
  };
}
