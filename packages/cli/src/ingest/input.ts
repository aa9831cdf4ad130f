/**
 * The events of an ingest, read from a file or stdin one line at a time: NDJSON (an event object a
 * line) or plain text (each line a text event); or a chat export (a JSON array of OpenAI-style messages
 * `[{role, content, name?, timestamp?}]`), read whole and sent as messages for the server to turn into
 * events, so it is one conversation and never one blob. Read as a stream, pulled by the sender, so memory stays
 * flat however long the input is and a slow server slows the reading down.
 */
import { createReadStream, readFileSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { ChatExportMessage, EventInput } from '@strata/client';
import { UsageError } from '../errors';

export type InputFormat = 'auto' | 'ndjson' | 'text' | 'chat';

export interface InputEvent {
  /** 1-based line number in the input (for a chat export: the message's 1-based position), to name it in errors */
  line: number;
  event: EventInput;
  /** a message of a chat export, sent as such: the server turns it into an event */
  message?: ChatExportMessage;
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

/** The number of events in a file (its non-blank lines, or a chat export's messages), for the progress bar's total and ETA. */
export async function countEvents(path: string): Promise<number> {
  let count = 0;
  let first = true;
  for await (const { text } of lines(createReadStream(path))) {
    if (text.trim() === '') continue;
    if (first && text.trimStart().startsWith('[')) {
      const all = readFileSync(path, 'utf8').replace(/^\uFEFF/, '');
      try {
        const value: unknown = JSON.parse(all);
        return Array.isArray(value) ? value.length : 0;
      } catch {
        return 0;
      }
    }
    first = false;
    count++;
  }
  return count;
}

/** A chat export read whole (it is one JSON document): its messages, or a usage error saying what is wrong. */
async function chatMessages(head: string, rest: AsyncGenerator<{ n: number; text: string }>): Promise<ChatExportMessage[]> {
  let text = head;
  for await (const { text: more } of rest) text += `\n${more}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`the input starts with "[" but is not a JSON document (${(err as Error).message}): a chat export is one JSON array [{"role", "content", "name"?, "timestamp"?}].`);
  }
  if (!Array.isArray(value) || value.length === 0) throw new UsageError('a chat export must be a non-empty JSON array of messages [{"role", "content", "name"?, "timestamp"?}].');
  value.forEach((m, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new UsageError(`message ${i + 1} of the chat export is not an object {"role", "content", "name"?, "timestamp"?}.`);
  });
  return value as ChatExportMessage[];
}

/**
 * Events of the input. `auto` decides on the first non-blank line: a JSON object makes the input
 * NDJSON, anything else plain text. In NDJSON a line that is not a JSON object stops the ingest
 * (wrong input, exit 2); its fields are checked by the server, which names the line's index.
 */
export async function* readEvents(stream: Readable, format: InputFormat, defaults: EventDefaults): AsyncGenerator<InputEvent> {
  let mode: 'ndjson' | 'text' | 'chat' | null = format === 'auto' ? null : format;
  const input = lines(stream);
  for await (const { n, text } of input) {
    if (text.trim() === '') continue;
    if (mode === 'chat' || (mode === null && text.trimStart().startsWith('['))) {
      // A chat export (OpenAI style): one conversation, each message an event the server reads.
      const messages = await chatMessages(text, input);
      for (const [i, message] of messages.entries()) yield { line: i + 1, event: { content: '' }, message };
      return;
    }
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
