/**
 * A password for `strata login`: from a file (its first line), or typed at a terminal without echo, or
 * the first line piped on stdin. Never from the command line, where other users' `ps` would see it.
 */
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors';

export function readSecretFile(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the ${what} from ${file}: ${(err as Error).message}`);
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line === '') throw new UsageError(`${file} holds no ${what} (its first line is empty).`);
  return line;
}

/** Reads one line from `input`: hidden with a prompt on a terminal, the first line of a pipe otherwise. */
export function readSecretLine(prompt: string, input: NodeJS.ReadStream = process.stdin, err: NodeJS.WriteStream = process.stderr): Promise<string> {
  return input.isTTY ? readHidden(prompt, input, err) : readFirstLine(input);
}

function readFirstLine(input: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => {
      input.off('data', onData);
      input.off('end', done);
      input.off('error', reject);
      const line = text.split(/\r?\n/)[0] ?? '';
      if (line === '') reject(new UsageError('no password on stdin (give --password-file, or pipe the password in).'));
      else resolve(line);
    };
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes('\n')) done();
    };
    input.on('data', onData);
    input.once('end', done);
    input.once('error', reject);
  });
}

function readHidden(prompt: string, input: NodeJS.ReadStream, err: NodeJS.WriteStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    err.write(prompt);
    input.setRawMode(true);
    input.resume();
    const finish = (failure: Error | null) => {
      input.setRawMode(false);
      input.pause();
      input.off('data', onData);
      err.write('\n');
      if (failure) reject(failure);
      else resolve(typed);
    };
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return finish(typed === '' ? new UsageError('no password typed.') : null);
        if (ch === '\u0003' || ch === '\u0004') return finish(new UsageError('cancelled.')); // Ctrl-C, Ctrl-D
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    input.on('data', onData);
  });
}
