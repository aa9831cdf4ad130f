/**
 * The login throttle and the password-hash gate under concurrency, against a real node process
 * (CONTRACT.md §1: 20 simultaneous wrong passwords, at most 5 answered 401, the rest 429).
 */
import { removeDir, runServerExpectingExit, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

const PASSWORD = 'throttle-pass-1';

async function login(url: string, password: string): Promise<{ status: number; retryAfter: string | null; body: { code?: string; error?: string } }> {
  const res = await fetch(`${url}/v1/dashboard/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }),
  });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as { code?: string } };
}

const count = (answers: { status: number }[], status: number) => answers.filter((a) => a.status === status).length;

describe('login throttle under concurrency', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_PASSWORD: PASSWORD } });
  });
  afterAll(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('answers 20 simultaneous wrong passwords with 5 × 401 and 15 × 429 with Retry-After', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => login(server.url, `wrong-${i}`)));
    expect(count(answers, 401)).toBe(5);
    expect(count(answers, 429)).toBe(15);
    for (const a of answers.filter((x) => x.status === 429)) {
      expect(a.body.code).toBe('rate_limited');
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
  });

  it('keeps refusing the address, the right password included, until the window passes', async () => {
    const a = await login(server.url, PASSWORD);
    expect(a.status).toBe(429);
    expect(a.body.code).toBe('rate_limited');
  });
});

describe('password hashing is bounded', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    // No throttle in the way (1000 attempts), one hash at a time, no queue: the gate alone decides.
    server = await startServer({
      env: {
        STRATA_ADMIN_PASSWORD: PASSWORD, STRATA__AUTH__LOGIN_MAX_ATTEMPTS: '1000',
        STRATA__AUTH__HASH_CONCURRENCY: '1', STRATA__AUTH__HASH_QUEUE: '0',
      },
    });
  });
  afterAll(async () => {
    await server.stop();
    removeDir(server.dataDir);
  });

  it('refuses logins beyond the hash queue at once with 503 and Retry-After, and the others get their answer', async () => {
    // 60 requests sent together: while one hash runs (tens of ms) the others find the queue full.
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => login(server.url, `wrong-${i}`)));
    expect(count(answers, 401) + count(answers, 503)).toBe(60);
    expect(count(answers, 401)).toBeGreaterThanOrEqual(1);
    expect(count(answers, 503)).toBeGreaterThanOrEqual(1);
    for (const a of answers.filter((x) => x.status === 503)) {
      expect(a.body.code).toBe('unavailable');
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
    }
    // A refusal for a full queue is not counted against the address: the right password still works.
    expect((await login(server.url, PASSWORD)).status).toBe(200);
  });

  it('refuses an invalid hash_concurrency at start (exit 2)', async () => {
    const dir = tempDir();
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dir, STRATA__AUTH__HASH_CONCURRENCY: '0' });
    expect(code).toBe(2);
    expect(output).toContain("'auth.hash_concurrency'");
    removeDir(dir);
  });
});
