/**
 * Preloaded into a node process (`node --require test/helpers/loaded-modules.js …`): when the process
 * exits, writes the files it loaded through require to $STRATA_TEST_LOADED_MODULES, one per line, so a
 * test can see which packages a start loads and which it leaves for later (test/api/start-modules.test.ts).
 */
const { writeFileSync } = require('node:fs');

const out = process.env.STRATA_TEST_LOADED_MODULES;
if (out) process.on('exit', () => writeFileSync(out, Object.keys(require.cache).join('\n') + '\n'));
