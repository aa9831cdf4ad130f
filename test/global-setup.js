/**
 * Before any test file: `npm run build`'s incremental compile (tsc -b), so the node and CLI processes the
 * tests start run the sources as they are now, never a stale dist/. Once, before the workers start, so
 * no two compiles write dist/ at the same time.
 */
const { spawnSync } = require('node:child_process');
const { join } = require('node:path');

module.exports = async function buildBeforeTests() {
  const root = join(__dirname, '..');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm run build failed before the tests:\n${r.stdout}${r.stderr}`);
};
