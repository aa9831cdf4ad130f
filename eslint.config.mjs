import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/*
 * Package boundaries (ARCHITECTURE.md, Layout): imports point downward only, and a package is used through
 * what its package.json `exports` offers, never through its src/. LAYERS lists, for each package, the
 * Strata packages it may import; anything else of Strata is an error (a new package is refused until it
 * is placed here).
 */
const LAYERS = {
  raft: [],
  store: ['raft'],
  memory: ['store', 'raft'],
  service: ['memory', 'store', 'raft'],
  server: ['service', 'memory', 'store', 'raft'],
  client: [],
  cli: ['client', 'server'], // server: only `strata serve`, which runs the node's entry (@strata/server/main)
};

function boundaryRule(pkg) {
  const allowed = LAYERS[pkg];
  const siblings = Object.keys(LAYERS).filter((p) => p !== pkg).join('|');
  const below = allowed.length > 0 ? allowed.map((p) => `@strata/${p}`).join(', ') : 'no other Strata package';
  const deepPatterns = [
    { regex: '^@strata/[^/]+/src(/|$)', message: "another package's src/ is private: import what its package.json `exports` offers (add an export there if something is missing)" },
    { regex: `^(\\.\\./){2,}(${siblings})(/|$)`, message: 'a relative path into another package bypasses its `exports`: import it by its @strata/ name' },
  ];
  const upward = { regex: `^@strata/(?!(${[pkg, ...allowed].join('|')})(/|$))`, message: `imports point downward only (cli → client, server; server → service → memory → store → raft): ${pkg} may import ${below}` };
  return ['error', { patterns: [...deepPatterns, upward] }];
}

const boundaries = Object.keys(LAYERS).map((pkg) => ({
  files: [`packages/${pkg}/src/**/*.ts`, `packages/${pkg}/test/**/*.ts`],
  rules: { '@typescript-eslint/no-restricted-imports': boundaryRule(pkg) },
}));

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', '**/dist/', 'coverage/', 'bench-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', __dirname: 'readonly', require: 'readonly', module: 'writable' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  ...boundaries,
  {
    // the dashboard's browser modules, served as they are (packages/server/src/http/dashboard.ts)
    files: ['packages/server/dashboard/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries([
        'window', 'document', 'location', 'history', 'navigator', 'sessionStorage', 'fetch', 'URL', 'URLSearchParams', 'FormData',
        'performance', 'requestAnimationFrame', 'addEventListener', 'atob', 'confirm',
      ].map((name) => [name, 'readonly'])),
    },
  },
);
