/**
 * `npx strata serve` stopped the way a process manager or a user stops it: a signal to npx. npm exits on
 * it without passing it on; the node (run by `strata serve` under npx) must stop gracefully with it
 * rather than keep serving with no parent.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { REPO_ROOT, removeDir, tempDir } from '../helpers/server-process';
import { waitFor } from '../helpers/cluster';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The processes below `pid` (npx → sh → node), from /proc. */
function descendants(pid: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

describe('npx strata serve', () => {
  it('stops the node when npx is sent SIGTERM', async () => {
    const dataDir = tempDir();
    const npx = spawn('npx', ['--no-install', 'strata', 'serve'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', STRATA_PORT: '0', STRATA_HOST: '127.0.0.1', STRATA_DATA_DIR: dataDir, STRATA_ADMIN_PASSWORD: 'a-long-password' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    npx.stdout.on('data', (c: Buffer) => (out += c.toString()));
    npx.stderr.on('data', (c: Buffer) => (out += c.toString()));
    let below: number[] = [];
    try {
      const serving = await waitFor('the node to serve', async () => /"url":"(http:[^"]+)".*"msg":"strata node serving"/.exec(out) ?? undefined, 60_000);
      expect((await fetch(`${serving[1]}/livez`)).status).toBe(200);
      below = descendants(npx.pid!); // the shell npx runs and the node, in strata's process
      expect(below.length).toBeGreaterThan(0);

      npx.kill('SIGTERM');
      await waitFor('every process below npx to exit', async () => below.every((pid) => !alive(pid)), 20_000);
      expect(out).toContain('"msg":"strata node stopped"');
    } finally {
      for (const pid of below.filter(alive)) process.kill(pid, 'SIGKILL');
      npx.kill('SIGKILL');
      removeDir(dataDir);
    }
  }, 90_000);
});
