/** The `strata` command as users run it: the binary npm links into node_modules/.bin, as a child process. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './server-process';

export const STRATA_BIN = join(REPO_ROOT, 'node_modules', '.bin', 'strata');

export interface CliRun { code: number | null; stdout: string; stderr: string }

/** Runs `command args` in the repository root to its end; `input` is piped to stdin (closed either way). */
export function runCommand(command: string, args: string[], options: { env?: Record<string, string>; input?: string } = {}): Promise<CliRun> {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(options.input ?? '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

/** `strata args` with only `env` (plus PATH and HOME). */
export function runStrata(args: string[], env: Record<string, string> = {}, input = ''): Promise<CliRun> {
  return runCommand(STRATA_BIN, args, { env, input });
}
