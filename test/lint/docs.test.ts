/**
 * What a clone of the repository tells its reader stays inside the repository: every relative link of
 * the READMEs and docs/ resolves to a file here, no text sends the reader to a file outside it (the
 * design notes the project was started from are not shipped), docs/api.md names every route of the
 * OpenAPI document a node serves, and the CLI's help cites nothing outside the repository either.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT, removeDir, startServer, type ServerProcess } from '../helpers/server-process';
import { runStrata } from '../helpers/cli';

function markdownFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(path);
    }
  };
  for (const top of ['README.md', 'docs', 'packages', 'clients', 'examples', 'deploy']) {
    const path = join(REPO_ROOT, top);
    if (!existsSync(path)) continue;
    if (statSync(path).isDirectory()) walk(path);
    else found.push(path);
  }
  return found;
}

/** Text that points a reader outside the repository: the unshipped design notes, absolute paths. */
const OUTSIDE = /\.\.\/shared\/|\/work\/|CONTRACT\.md|CONTRACT §|ARCHITECTURE\.md/;

describe('the docs a clone carries', () => {
  const files = markdownFiles();

  it('finds the READMEs and docs', () => {
    const names = files.map((f) => relative(REPO_ROOT, f));
    expect(names).toEqual(expect.arrayContaining(['README.md', 'docs/api.md', 'packages/client/README.md', 'clients/python/README.md']));
  });

  it.each(files.map((f) => [relative(REPO_ROOT, f), f]))('%s: every relative link resolves inside the repository', (_name, file) => {
    const text = readFileSync(file, 'utf8');
    const broken: string[] = [];
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1];
      if (/^[a-z]+:/i.test(target) || target.startsWith('#')) continue; // another scheme or this page
      const path = resolve(dirname(file), target.split('#')[0]);
      if (!path.startsWith(REPO_ROOT + '/') || !existsSync(path)) broken.push(target);
    }
    expect(broken).toEqual([]);
    expect(text.split('\n').filter((line) => OUTSIDE.test(line))).toEqual([]);
  });
});

describe('docs/api.md against the OpenAPI document', () => {
  let server: ServerProcess;
  beforeAll(async () => {
    server = await startServer({ env: { STRATA_ADMIN_PASSWORD: 'a-long-password', STRATA__EMBEDDING__PROVIDER: 'hashing' } });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    removeDir(server?.dataDir ?? '');
  });

  it('names every route the node serves, as METHOD /path', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const api = readFileSync(join(REPO_ROOT, 'docs/api.md'), 'utf8');
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      const written = path.replace(/\{([^}]+)\}/g, ':$1');
      for (const method of Object.keys(methods)) {
        if (!api.includes(`${method.toUpperCase()} ${written}`)) missing.push(`${method.toUpperCase()} ${written}`);
      }
    }
    expect(Object.keys(doc.paths).length).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });
});

describe('the CLI help', () => {
  it('cites nothing outside the repository, in any command', async () => {
    const top = await runStrata(['--help']);
    expect(top.code).toBe(0);
    const commands = [...top.stdout.matchAll(/^ {2}([a-z]+)\b/gm)].map((m) => m[1]).filter((c) => c !== 'help');
    expect(commands).toEqual(expect.arrayContaining(['serve', 'login', 'ingest', 'search']));
    const helps = [top.stdout, ...(await Promise.all(commands.map(async (c) => (await runStrata([c, '--help'])).stdout)))];
    for (const help of helps) expect(help.split('\n').filter((line) => OUTSIDE.test(line))).toEqual([]);
    const search = helps[commands.indexOf('search') + 1];
    expect(search).toContain('WHEN IT HAPPENED');
    expect(search).toContain('WHAT THE MEMORY HELD THEN');
  }, 60_000);
});
