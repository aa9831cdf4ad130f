/**
 * `strata import [file]`: an export file (NDJSON, docs/export-format.md) from a file or stdin into the
 * node (POST /v1/import, docs/api.md §14), sent as it is read. The node writes it through the log and
 * skips every record whose id it has, so importing a file again changes nothing.
 */
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { StrataApiError, type ImportResponse } from '@strata/client';
import { connected } from '../context';
import { Annotated } from '../errors';
import { openInput } from '../ingest/input';
import { formatBytes } from '../transfer/format';
import { createTransferProgress } from '../transfer/progress';
import { countsLine, total } from '../transfer/records';
import { uploadBody } from '../transfer/upload';

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('import an export file (NDJSON) from a file or stdin; records the node has already are skipped')
    .argument('[file]', 'the export file; none or - reads stdin')
    .option('--reembed', "embed the memory units again when the file's embedder is not the node's (otherwise the node refuses the file)")
    .action(connected(async ({ client, out }, command) => {
      const [file] = command.processedArgs as [string | undefined];
      const o = command.opts<{ reembed?: boolean }>();
      const input = openInput(file);
      // A file's size gives the bar its total and ETA, and the node its Content-Length (a file over its limit is refused at once).
      const size = input.path === null ? null : statSync(input.path).size;
      const progress = createTransferProgress({ label: 'import', total: size, records: false, stream: process.stderr });
      let sent = 0;
      const started = Date.now();
      const body = uploadBody(input.stream, (bytes) => {
        sent += bytes;
        progress.advance(bytes);
      });
      let answer: ImportResponse;
      try {
        answer = await client.importNdjson(body, { reembed: o.reembed === true, contentLength: size ?? undefined });
      } catch (err) {
        progress.abort();
        throw annotate(err, input.path ?? 'the input');
      } finally {
        // refused before its end: what is left of the input is not needed (and stdin must not keep the process waiting)
        input.stream.destroy();
      }
      progress.finish();
      const ms = Date.now() - started;
      out.result({ ...answer, bytes: sent, seconds: ms / 1000 }, () => [
        `imported ${total(answer.counts)} record(s): ${countsLine(answer.counts)}`,
        `skipped  ${total(answer.skipped)} record(s) the node had already: ${countsLine(answer.skipped)}`,
        `${formatBytes(sent)} in ${(ms / 1000).toFixed(1)} s`,
      ]);
    }));
}

/** Which line of the input the node refused (details `/line/N…`), and how to carry on. */
function annotate(err: unknown, source: string): unknown {
  if (!(err instanceof StrataApiError)) return err;
  if (err.status === 409 && err.code === 'conflict') {
    return new Annotated(err, ["Run again with --reembed to embed the file's memory units with this node's embedder."]);
  }
  const line = (err.details ?? []).map((d) => /^\/line\/(\d+)/.exec(d.path)?.[1]).find((n) => n !== undefined);
  if (line === undefined) return err;
  return new Annotated(err, [
    `Line ${line} of ${source} was refused: nothing from it on was applied; lines before it may have been.`,
    'Import the corrected file again: what was applied is skipped.',
  ], { line: Number(line) });
}
