#!/usr/bin/env node
'use strict';
/*
 * `npx strata` runs the CLI compiled by `npm run build` (packages/cli/dist), in this process: no
 * TypeScript is transpiled at start, and signals (Ctrl-C on `strata serve`) reach the code directly.
 * `npm ci` builds it (the root `prepare` script); after changing the sources, `npm run build` again.
 */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const entry = join(__dirname, '..', 'dist', 'main.js');
if (!existsSync(entry)) {
  process.stderr.write(`strata: ${entry} is missing: run \`npm run build\` at the repository root (npm ci runs it too).\n`);
  process.exitCode = 1;
} else {
  require(entry)
    .main(process.argv.slice(2))
    .catch((err) => {
      process.stderr.write(`strata: ${err && err.stack ? err.stack : String(err)}\n`);
      process.exitCode = 1;
    });
}
