/**
 * The first-run path to an admin key, as a new user takes it: a node started without a configured
 * password writes a generated one to <data_dir>/initial-admin-password; `strata login` exchanges it
 * for an admin API key (which may create keys) or a token; changing the password removes the file, the
 * old password stops working and the new one logs in (piped on stdin); a file left by an older run is
 * removed at the next start; `--initial-password-file` reads that file while it exists and then takes the
 * password as without it. The node's own static key has its own name (STRATA_ADMIN_API_KEY).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';
import { runStrata } from '../helpers/cli';
import { waitFor } from '../helpers/cluster';

describe('strata login', () => {
  let server: ServerProcess;
  let dir: string;
  const passwordFile = () => join(server.dataDir, 'initial-admin-password');
  const on = () => ({ STRATA_URL: server.url });

  beforeAll(async () => {
    dir = tempDir('strata-login-');
    server = await startServer({ env: { STRATA__EMBEDDING__PROVIDER: 'hashing' } });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    removeDir(server?.dataDir ?? '');
    removeDir(dir);
  });

  it('turns the generated password into an admin API key that may create keys, twice in a row', async () => {
    expect(existsSync(passwordFile())).toBe(true);
    for (let i = 0; i < 2; i++) {
      const login = await runStrata(['login', '--password-file', passwordFile()], on());
      expect(login.code).toBe(0);
      const key = login.stdout.trim();
      expect(key).toMatch(/^sk_[A-Za-z0-9]{36}$/);
      expect(login.stderr).toContain('still the generated one');
      const minted = await runStrata(['keys', 'create', '--role', 'admin', '--json'], { ...on(), STRATA_API_KEY: key });
      expect(minted.code).toBe(0);
      expect(JSON.parse(minted.stdout)).toMatchObject({ role: 'admin' });
    }
    // the form for commands run again (the README's): the file while it exists
    const initial = await runStrata(['login', '--initial-password-file', passwordFile()], on());
    expect(initial.code).toBe(0);
    expect(initial.stdout.trim()).toMatch(/^sk_/);
    expect(initial.stderr).not.toContain('is gone');
  }, 90_000); // five CLI processes, three logins hashing on the node: a bound for a busy machine

  it('prints a token with --token, and refuses a wrong password with exit 1', async () => {
    const token = await runStrata(['login', '--token', '--password-file', passwordFile()], on());
    expect(token.code).toBe(0);
    expect(token.stdout.trim().split('.')).toHaveLength(3);
    const wrongFile = join(dir, 'wrong');
    writeFileSync(wrongFile, 'not-the-password\n');
    const wrong = await runStrata(['login', '--password-file', wrongFile], on());
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('unauthenticated');
    const missing = await runStrata(['login', '--password-file', join(dir, 'absent')], on());
    expect(missing.code).toBe(2);
  });

  it('changes the password: the generated one\'s file is removed and only the new password logs in', async () => {
    const generated = readFileSync(passwordFile(), 'utf8').trim();
    const newFile = join(dir, 'new-password');
    writeFileSync(newFile, 'a-long-new-password\n');
    const changed = await runStrata(['login', '--password-file', passwordFile(), '--new-password-file', newFile, '--json'], on());
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.stdout)).toMatchObject({ role: 'admin', password_changed: true });
    expect(existsSync(passwordFile())).toBe(false);

    const old = await runStrata(['login'], on(), `${generated}\n`);
    expect(old.code).toBe(1);
    const piped = await runStrata(['login', '--token'], on(), 'a-long-new-password\n');
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toContain('generated');
  });

  // each login below hashes on the node and starts a CLI process: a bound for a busy machine, not a timing
  it('takes the password as without --initial-password-file once the file is gone; --password-file stays strict', async () => {
    const newFile = join(dir, 'new-password');
    expect(existsSync(passwordFile())).toBe(false); // changed by the case above
    // the generated password's file is gone: --initial-password-file takes the password as without it
    const fromEnv = await runStrata(['login', '--initial-password-file', passwordFile()], { ...on(), STRATA_ADMIN_PASSWORD: 'a-long-new-password' });
    expect(fromEnv.code).toBe(0);
    expect(fromEnv.stdout.trim()).toMatch(/^sk_/);
    expect(fromEnv.stderr).toContain('is gone (the node deletes it once the admin password has been changed): using STRATA_ADMIN_PASSWORD');
    const fromStdin = await runStrata(['login', '--token', '--initial-password-file', passwordFile()], on(), 'a-long-new-password\n');
    expect(fromStdin.code).toBe(0);
    // --password-file stays strict, and says what to do instead
    const strict = await runStrata(['login', '--password-file', passwordFile()], { ...on(), STRATA_ADMIN_PASSWORD: 'a-long-new-password' });
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('the node deletes it once the admin password has been changed');
    expect(strict.stderr).toContain('--initial-password-file');
    const both = await runStrata(['login', '--password-file', newFile, '--initial-password-file', passwordFile()], on());
    expect(both.code).toBe(2);
  }, 120_000);

  it('removes a stale password file at the next start once the password was changed', async () => {
    writeFileSync(passwordFile(), 'a-password-that-no-longer-works\n', { mode: 0o600 });
    await server.stop();
    server = await startServer({ dataDir: server.dataDir, env: { STRATA__EMBEDDING__PROVIDER: 'hashing' } });
    expect(existsSync(passwordFile())).toBe(false);
    expect(server.output()).toContain('removed the file that held the generated one');
  }, 60_000);
});

describe('the node\'s static admin key', () => {
  it('is named STRATA_ADMIN_API_KEY; STRATA_API_KEY alone still works and is warned about', async () => {
    const named = await startServer({ env: { STRATA_ADMIN_API_KEY: 'node-admin-key-1', STRATA_ADMIN_PASSWORD: 'a-long-password' } });
    try {
      const status = await runStrata(['keys', 'list', '--json'], { STRATA_URL: named.url, STRATA_API_KEY: 'node-admin-key-1' });
      expect(status.code).toBe(0);
      expect(named.output()).not.toContain('STRATA_API_KEY is set');
    } finally {
      await named.stop();
      removeDir(named.dataDir);
    }
    const legacy = await startServer({ env: { STRATA_API_KEY: 'node-admin-key-2', STRATA_ADMIN_PASSWORD: 'a-long-password' } });
    try {
      const status = await runStrata(['keys', 'list', '--json'], { STRATA_URL: legacy.url, STRATA_API_KEY: 'node-admin-key-2' });
      expect(status.code).toBe(0);
      // logged right after the node serves: wait for the line rather than race it
      await waitFor('the STRATA_API_KEY warning', async () => legacy.output().includes('STRATA_API_KEY is set and accepted as an admin key'));
    } finally {
      await legacy.stop();
      removeDir(legacy.dataDir);
    }
  }, 90_000);
});
