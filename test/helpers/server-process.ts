import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(__dirname, '..', '..');
/** The node's compiled entry, what `npm start` runs (jest's global setup builds it before the tests). */
export const SERVER_MAIN = 'packages/server/dist/main.js';

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

/** CPU seconds a process has used so far (Linux /proc), or null where that cannot be read. */
export function cpuSecondsOf(pid: number): number | null {
  try {
    // the fields after the command name (which may hold spaces) start at its closing parenthesis
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/**
 * How long a start may take. A node that is starting is either working (loading its modules, opening
 * LevelDB) or waiting (for a port, for its peers), and on a busy machine the work takes many times its
 * CPU time in wall time: a fixed wall-clock limit failed the suite at a load of 8-12 while every node
 * was starting normally. So the limit is on the node's own CPU time (`cpuMs`: what a start that loops
 * or thrashes spends), and a wall-clock limit (`wallMs`) catches a start that waits forever.
 */
export interface StartLimits {
  cpuMs: number;
  wallMs: number;
}
export const START_LIMITS: StartLimits = { cpuMs: 20_000, wallMs: 120_000 };

/**
 * Starts a real Strata node process (`node packages/server/dist/main.js`, what `npm start` runs) on a free port
 * and resolves once it logs that it serves. The port comes from the log line, so parallel test files
 * never collide. `timeoutMs` is the CPU-time limit of the start (StartLimits).
 */
export function startServer(
  options: {
    dataDir?: string; env?: Record<string, string>; timeoutMs?: number; /** extra node flags, e.g. --cpu-prof (not allowed in NODE_OPTIONS) */ nodeArgs?: string[];
    /** told of the child as soon as it is spawned, so a caller can stop a start still under way (TestCluster.stop) */
    onSpawn?: (child: ChildProcess) => void;
  } = {},
): Promise<ServerProcess> {
  const dataDir = options.dataDir ?? tempDir();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), SERVER_MAIN], {
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
  options.onSpawn?.(child);
  let out = '';
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const limits = { ...START_LIMITS, ...(options.timeoutMs !== undefined ? { cpuMs: options.timeoutMs } : {}) };
  const started = Date.now();
  return new Promise((resolveStart, reject) => {
    let overLimit: Error | null = null;
    const timer = setInterval(() => {
      const cpu = cpuSecondsOf(child.pid!);
      const wall = Date.now() - started;
      // where CPU time cannot be read, the CPU limit is applied to wall time (the old behaviour)
      const over = cpu === null ? wall > limits.cpuMs : cpu * 1000 > limits.cpuMs || wall > limits.wallMs;
      if (!over) return;
      clearInterval(timer);
      child.kill('SIGKILL');
      // rejected (below) once it is gone: a caller that cleans up after a failed start finds nothing left running
      overLimit = new Error(`server did not start: ${cpu === null ? '' : `${cpu.toFixed(1)} s of CPU, `}${(wall / 1000).toFixed(1)} s (limits ${limits.cpuMs / 1000} s of CPU, ${limits.wallMs / 1000} s):\n${out}`);
    }, 250);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)".*"msg":"strata node serving"/.exec(out);
      if (m) {
        clearInterval(timer);
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
      clearInterval(timer);
      reject(overLimit ?? new Error(`server exited with code ${code} before serving:\n${out}`));
    });
  });
}

/** Runs the server expecting it to refuse to start; resolves with its exit code and output. */
export function runServerExpectingExit(env: Record<string, string>, timeoutMs = 20000): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [SERVER_MAIN], {
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
