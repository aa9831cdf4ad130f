/**
 * The events of an ingest, read from a file or stdin one line at a time: NDJSON (an event object a
 * line) or plain text (each line a text event). Read as a stream, pulled by the sender, so memory stays
 * flat however long the input is and a slow server slows the reading down.
 */
import { createReadStream, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { EventInput } from '@strata/client';
import { UsageError } from '../errors';

export type InputFormat = 'auto' | 'ndjson' | 'text';

export interface InputEvent {
  /** 1-based line number in the input, to name it in errors */
  line: number;
  event: EventInput;
}

/** Fields given on the command line for events that do not set them. */
export interface EventDefaults {
  org_id?: string;
  agent_id?: string;
}

/** The input stream: the file, or stdin for none or `-`. A file that cannot be read is wrong usage. */
export function openInput(file: string | undefined): { stream: Readable; path: string | null } {
  if (file === undefined || file === '-') return { stream: process.stdin, path: null };
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  if (!isFile) throw new UsageError(`${file} is not a file.`);
  return { stream: createReadStream(file), path: file };
}

/** Lines of the stream without their end (\n or \r\n), numbered from 1; a BOM at the start is dropped. */
export async function* lines(stream: Readable): AsyncGenerator<{ n: number; text: string }> {
  stream.setEncoding('utf8');
  let rest = '';
  let n = 0;
  const line = (raw: string) => ({ n: ++n, text: (n === 1 ? raw.replace(/^\uFEFF/, '') : raw).replace(/\r$/, '') });
  for await (const chunk of stream as AsyncIterable<string>) {
    rest += chunk;
    let at: number;
    while ((at = rest.indexOf('\n')) >= 0) {
      yield line(rest.slice(0, at));
      rest = rest.slice(at + 1);
    }
  }
  if (rest !== '') yield line(rest);
}

/** The number of events in a file (its non-blank lines), for the progress bar's total and ETA. */
export async function countEvents(path: string): Promise<number> {
  let count = 0;
  for await (const { text } of lines(createReadStream(path))) if (text.trim() !== '') count++;
  return count;
}

/**
 * Events of the input. `auto` decides on the first non-blank line: a JSON object makes the input
 * NDJSON, anything else plain text. In NDJSON a line that is not a JSON object stops the ingest
 * (wrong input, exit 2); its fields are checked by the server, which names the line's index.
 */
export async function* readEvents(stream: Readable, format: InputFormat, defaults: EventDefaults): AsyncGenerator<InputEvent> {
  let mode: 'ndjson' | 'text' | null = format === 'auto' ? null : format;
  for await (const { n, text } of lines(stream)) {
    if (text.trim() === '') continue;
    const object = mode === 'text' ? null : jsonObject(text);
    mode ??= object ? 'ndjson' : 'text';
    if (mode === 'text') {
      yield { line: n, event: { ...defaults, content: text } };
    } else if (object) {
      yield { line: n, event: { ...defaults, ...object } as EventInput };
    } else {
      throw new UsageError(`line ${n} is not a JSON object: NDJSON input has one event object a line (--format text reads every line as text).`);
    }
  }
}

function jsonObject(text: string): Record<string, unknown> | null {
  if (!text.trimStart().startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
