/**
 * The package boundaries of eslint.config.mjs (ARCHITECTURE.md, Layout), checked on planted source:
 * a deep import into another package's src/, a relative path into another package, and upward imports
 * fail; the downward imports the layout allows pass. Uses ESLint's own API on the real config.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

// ESLint loads its flat config with a dynamic import(), which jest's module system cannot run: the
// planted sources are linted by ESLint's API in one plain node process instead.
const LINT_CASES = `
const { ESLint } = require('eslint');
const cases = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
(async () => {
  const eslint = new ESLint({ cwd: process.cwd() });
  const out = [];
  for (const c of cases) {
    const [r] = await eslint.lintText(c.code, { filePath: require('node:path').join(process.cwd(), c.file) });
    out.push(r.messages.filter((m) => m.ruleId === '@typescript-eslint/no-restricted-imports').map((m) => m.message));
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`;

function boundaryErrors(cases: { file: string; code: string }[]): string[][] {
  return JSON.parse(execFileSync(process.execPath, ['-e', LINT_CASES], { cwd: root, input: JSON.stringify(cases), encoding: 'utf8' })) as string[][];
}

const importOf = (target: string) => `import type * as planted from '${target}';\nexport type { planted };\n`;

describe('package boundaries (eslint)', () => {
  it("refuses another package's src/ (by name or by relative path) and upward imports; allows the layout's downward imports", () => {
    const refused: [string, string, RegExp][] = [
      ['packages/server/src/planted.ts', '@strata/memory/src/retrieval/pipeline', /src\/ is private/],
      ['packages/memory/test/planted.test.ts', '@strata/store/src/indexes', /src\/ is private/],
      ['packages/server/src/routes/planted.ts', '../../../store/src/local-log', /relative path into another package/],
      ['packages/raft/src/planted.ts', '@strata/store', /imports point downward only/],
      ['packages/store/src/planted.ts', '@strata/memory', /imports point downward only/],
      ['packages/store/src/planted.ts', '@strata/server', /imports point downward only/],
      ['packages/memory/src/planted.ts', '@strata/server', /imports point downward only/],
      ['packages/client/src/planted.ts', '@strata/server', /imports point downward only/],
    ];
    const allowed: [string, string][] = [
      ['packages/store/src/planted.ts', '@strata/raft'],
      ['packages/memory/src/planted.ts', '@strata/store'],
      ['packages/memory/src/planted.ts', '@strata/store/indexes'],
      ['packages/server/src/planted.ts', '@strata/memory/retrieval'],
      ['packages/server/src/planted.ts', '@strata/raft'],
    ];
    const results = boundaryErrors([...refused, ...allowed].map(([file, target]) => ({ file, code: importOf(target) })));
    refused.forEach(([file, target, why], i) => expect({ file, target, errors: results[i] }).toEqual({ file, target, errors: [expect.stringMatching(why)] }));
    allowed.forEach(([file, target], i) => expect({ file, target, errors: results[refused.length + i] }).toEqual({ file, target, errors: [] }));
  });

  it('the raft group depends on the narrow GroupHost, not on the host module (no type cycle)', () => {
    const group = readFileSync(join(root, 'packages/raft/src/driver/group.ts'), 'utf8');
    expect(group).not.toMatch(/from '\.\/host'/);
    expect(group).toMatch(/from '\.\/group-host'/);
  });
});
