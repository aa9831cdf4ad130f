/**
 * Processes and HTTP readiness for the benchmark scripts: servers started as child processes on
 * 127.0.0.1 with their own log files, stopped by the pid they were given.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import net from 'node:net';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '..', '..');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP port free on 127.0.0.1 right now (the benchmarks', the evaluation's and the fault tests' processes). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` (with `headers`) until `ok` says so, or throws after `ms`. */
export async function waitHttp(url: string, ok: (status: number, body: string) => boolean, what: string, headers: Record<string, string> = {}, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url, { headers, signal: AbortSignal.timeout(2000) });
      if (ok(r.status, await r.text())) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export interface Proc {
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `cmd` in `cwd` (the project's root) with only `env` (plus PATH and HOME), output appended to `logFile`. */
export function launch(cmd: string, args: string[], env: Record<string, string>, logFile: string, cwd = ROOT): Proc {
  const fd = openSync(logFile, 'a');
  const child = spawn(cmd, args, { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, stdio: ['ignore', fd, fd] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    stop: async () => {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}
