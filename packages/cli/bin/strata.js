#!/usr/bin/env node
'use strict';
/*
 * `npx strata` runs the CLI's TypeScript sources in this process, the way `npm start` runs the server
 * (`node --import tsx`): importing tsx's loader registers its ESM and CommonJS hooks, and the entry is
 * loaded through them. One process, so signals (Ctrl-C on `strata serve`) reach the code directly.
 */
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

import('tsx')
  .then(() => import(pathToFileURL(join(__dirname, '..', 'src', 'main.ts')).href))
  // main.ts is CommonJS once compiled (the repo has no "type": "module"): its exports may sit on `default`.
  .then((entry) => (entry.main || entry.default.main)(process.argv.slice(2)))
  .catch((err) => {
    process.stderr.write(`strata: ${err && err.stack ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  });
