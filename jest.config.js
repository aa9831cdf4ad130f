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
  testTimeout: 30000,
};
