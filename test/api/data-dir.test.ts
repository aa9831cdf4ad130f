/**
 * Data directory permissions (CONTRACT.md §1): created 0700 with files 0600; a directory open to other
 * local users is refused at start (exit 2) with the path and the fix. Real node processes.
 */
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, runServerExpectingExit, startServer, tempDir } from '../helpers/server-process';

const mode = (path: string) => statSync(path).mode & 0o777;

/** Every entry under `dir` with its mode, e.g. ['raft/CURRENT 600', …]. */
function modes(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    out.push(`${prefix}${name} ${mode(path).toString(8)}`);
    if (statSync(path).isDirectory()) out.push(...modes(path, `${prefix}${name}/`));
  }
  return out;
}

describe('data directory permissions', () => {
  it('creates a missing data directory 0700 and everything in it owner-only', async () => {
    const root = tempDir();
    const dataDir = join(root, 'nested', 'data');
    const server = await startServer({ dataDir });
    const written = modes(dataDir);
    expect(await server.stop()).toBe(0);
    expect(mode(dataDir)).toBe(0o700);
    expect(written.length).toBeGreaterThan(5); // strata.json, the admin password, LevelDB files
    expect(written.filter((m) => !/ (600|700)$/.test(m))).toEqual([]);
    expect(written).toContain('initial-admin-password 600');
    removeDir(root);
  });

  it("deletes the spools of imports a stop interrupted, and nothing else of the data directory's", async () => {
    const dataDir = tempDir();
    chmodSync(dataDir, 0o700);
    for (const dir of ['import-a1B2c3', 'import-notmine', 'imports']) {
      mkdirSync(join(dataDir, dir), { mode: 0o700 });
      writeFileSync(join(dataDir, dir, 'body.ndjson'), '{"format":"strata-export"}\n', { mode: 0o600 });
    }
    const server = await startServer({ dataDir });
    const left = readdirSync(dataDir);
    expect(await server.stop()).toBe(0);
    expect(left).not.toContain('import-a1B2c3');
    expect(left).toEqual(expect.arrayContaining(['import-notmine', 'imports'])); // not a spool's name
    removeDir(dataDir);
  });

  it('refuses a data directory readable by others (0755), naming the path and the fix', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'strata.json'), '{"format":1,"shards":1}\n');
    chmodSync(dataDir, 0o755);
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dataDir });
    expect(code).toBe(2);
    expect(output).toContain(dataDir);
    expect(output).toContain(`chmod -R go-rwx ${dataDir}`);
    expect(mode(dataDir)).toBe(0o755); // refused, not silently changed
    removeDir(dataDir);
  });

  it('refuses a data directory writable by group (0720) too', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'strata.json'), '{"format":1,"shards":1}\n');
    chmodSync(dataDir, 0o720);
    const { code, output } = await runServerExpectingExit({ STRATA_DATA_DIR: dataDir });
    expect(code).toBe(2);
    expect(output).toContain('go-rwx');
    removeDir(dataDir);
  });

  it('narrows an empty directory of its own (a fresh volume) and files left wider by an older version', async () => {
    const root = tempDir();
    const empty = join(root, 'empty');
    mkdirSync(empty, { mode: 0o755 });
    chmodSync(empty, 0o755);
    const first = await startServer({ dataDir: empty });
    expect(await first.stop()).toBe(0);
    expect(mode(empty)).toBe(0o700);
    // an older build wrote 0644 files and 0755 directories inside an owner-only directory
    chmodSync(join(empty, 'strata.json'), 0o644);
    chmodSync(join(empty, 'raft'), 0o755);
    const second = await startServer({ dataDir: empty });
    expect(await second.stop()).toBe(0);
    expect(mode(join(empty, 'strata.json'))).toBe(0o600);
    expect(mode(join(empty, 'raft'))).toBe(0o700);
    removeDir(root);
  });
});
