import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..');

export interface ServerProcess {
  url: string;
  pid: number;
  dataDir: string;
  child: ChildProcess;
  /** everything the process printed so far */
  output(): string;
  /** SIGTERM and wait for exit; resolves with the exit code */
  stop(): Promise<number | null>;
  /** send a signal (e.g. SIGKILL) and wait for exit */
  kill(signal: NodeJS.Signals): Promise<void>;
}

export function tempDir(prefix = 'strata-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts a real Strata node process (`node --import tsx packages/server/src/main.ts`) on a free port
 * and resolves once it logs that it serves. The port comes from the log line, so parallel test files
 * never collide.
 */
export function startServer(
  options: { dataDir?: string; env?: Record<string, string>; timeoutMs?: number; /** extra node flags, e.g. --cpu-prof (not allowed in NODE_OPTIONS) */ nodeArgs?: string[] } = {},
): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? tempDir();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--import', 'tsx', 'packages/server/src/main.ts'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      STRATA_PORT: '0',
      STRATA_HOST: '127.0.0.1',
      STRATA_DATA_DIR: dataDir,
      STRATA_LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${options.timeoutMs ?? 20000} ms:\n${out}`));
    }, options.timeoutMs ?? 20000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*"msg":"strata node serving"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveStart({
          url: m[1], pid: child.pid!, dataDir, child,
          output: () => out,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
          kill: async (signal) => {
            child.kill(signal);
            await exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with code ${code} before serving:\n${out}`));
    });
  });
}

/** Runs the server expecting it to refuse to start; resolves with its exit code and output. */
export function runServerExpectingExit(env: Record<string, string>, timeoutMs = 20000): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/server/src/main.ts'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', STRATA_PORT: '0', STRATA_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolveExit) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveExit({ code, output });
    });
  });
}
