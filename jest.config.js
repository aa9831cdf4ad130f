/**
 * Jest runs TypeScript through ts-jest in transpile-only mode (isolatedModules): fast, and type
 * checking stays the job of `npm run typecheck`. In-process imports of @strata/* resolve to the sources
 * (the `strata-source` export condition); the node and CLI processes that tests start run the compiled
 * build, which the global setup brings up to date first (`tsc -b`, a few seconds when nothing changed).
 */
module.exports = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['node', 'node-addons', 'strata-source'] },
  globalSetup: '<rootDir>/test/global-setup.js',
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true, diagnostics: false }] },
  testMatch: ['<rootDir>/packages/*/test/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  // Jest's timer is a backstop against a hang, not a limit on work: each step a test waits for has its
  // own bound (a node start: 20 s of the node's own CPU and at most 120 s of wall time, START_LIMITS in
  // test/helpers/server-process.ts; waits for memory to form: their own). At 30 s, a hook that started a
  // node and waited for consolidation failed on a machine at load 12-15 while every step was within its
  // bound (test/api/retrieve.test.ts, issue 25); the backstop is now the longest of those bounds.
  testTimeout: 120_000,
};
