/**
 * The Python client (clients/python, CONTRACT §16) against a real node: its unittest suite runs in a
 * python3 process given the node's URL, an admin key and the admin password. Routes of the contract the
 * node does not serve yet are skipped there ("route not served yet"), by the node's own 404/405 answer.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';

const KEY = 'python-client-test-admin-key';
const ADMIN_PASSWORD = 'python-client-admin-password';

// Chosen at load time: without python3 (>= 3.9, what the client supports) the suite is skipped, and says why.
function pythonMissing(): string | null {
  if (spawnSync('which', ['python3'], { stdio: 'ignore' }).status !== 0) return 'python3 is not on the PATH';
  const version = spawnSync('python3', ['-c', 'import sys; print(sys.version.split()[0]); sys.exit(sys.version_info < (3, 9))'], { encoding: 'utf8' });
  return version.status === 0 ? null : `python3 is ${version.stdout.trim() || 'unusable'}, the client needs >= 3.9`;
}
const missing = pythonMissing();
if (missing) console.warn(`python-client.test.ts skipped: ${missing}.`);
const describeWithPython = missing ? describe.skip : describe;

function runPython(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn('python3', args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describeWithPython('python client', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startServer({
      env: { STRATA_API_KEY: KEY, STRATA_ADMIN_PASSWORD: ADMIN_PASSWORD, STRATA__CONSOLIDATION__INTERVAL_MS: '50', STRATA__EMBEDDING__PROVIDER: 'hashing' },
    });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    removeDir(server.dataDir);
  });

  it('passes its unittest suite against the node', async () => {
    const result = await runPython(['-m', 'unittest', 'discover', '-s', join('clients', 'python', 'tests'), '-v'], {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      // no proxy variables: the node is on 127.0.0.1; no bytecode files left in the tree
      PYTHONDONTWRITEBYTECODE: '1',
      STRATA_TEST_URL: server.url,
      STRATA_TEST_API_KEY: KEY,
      STRATA_TEST_ADMIN_PASSWORD: ADMIN_PASSWORD,
    });
    if (result.code !== 0) throw new Error(`python3 exited with code ${result.code}:\n${result.output}`);
    expect(result.output).toMatch(/^OK\b/m);
  }, 120_000);
});
