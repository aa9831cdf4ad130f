import { prefetchWordVectors } from '@strata/memory/embedding-files';
import { ConfigError, loadConfig } from './config';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hashPassword, randomPassword } from './auth/passwords';
import { OWNER_ONLY_UMASK } from './data-dir';
import type { StrataNode } from './node';

/** `strata [--config file.toml]`: start one node and stop it gracefully on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  // Before anything is created: LevelDB files, the admin password file and logs are owner-only.
  process.umask(OWNER_ONLY_UMASK);
  const args = process.argv.slice(2);
  const at = args.indexOf('--config');
  let config;
  try {
    config = loadConfig({ file: at >= 0 ? args[at + 1] : undefined });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`strata: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  // The word vectors (43 MB) are read on the thread pool while the node's modules load, required only
  // now (most of a start's main-thread time): a refused configuration exits before either.
  if (config.embedding.provider === 'local') prefetchWordVectors();
  // A new data directory (no strata.json yet) gets its admin account at this start: the password's
  // hash (scrypt, 0.1-0.5 s on the thread pool) begins now too. (A node joining a cluster whose admin
  // exists hashes it for nothing, once.)
  let adminPassword: Promise<{ password: string; hash: string }> | undefined;
  if (!existsSync(join(config.storage.data_dir, 'strata.json'))) {
    const password = config.auth.admin_password ?? randomPassword();
    adminPassword = hashPassword(password).then((hash) => ({ password, hash }));
    adminPassword.catch(() => undefined); // the node hashes again if this failed
  }
  const { StrataNode: Node } = require('./node') as typeof import('./node');
  // The handlers are in place before the node starts: a signal that arrives while it starts, or right
  // after it logs that it serves, stops it gracefully instead of killing the process outright.
  let node: StrataNode | null = null;
  let signals = 0;
  let requested: string | null = null;
  const stopNode = (n: StrataNode, signal: string) => {
    n.logger.info({ signal }, 'stopping');
    n.stop().then(() => process.exit(0), (err) => {
      n.logger.error({ err }, 'stop failed');
      process.exit(1);
    });
  };
  const stop = (signal: string) => {
    if (++signals > 1) process.exit(1);
    requested = signal;
    if (node) stopNode(node, signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  node = await Node.start(config, { adminPassword });
  if (process.env.STRATA_API_KEY && !process.env.STRATA_ADMIN_API_KEY) {
    // One shell often exports STRATA_API_KEY for the CLI: say that the node took it as its admin key.
    node.logger.warn('STRATA_API_KEY is set and accepted as an admin key; name the node\'s admin key STRATA_ADMIN_API_KEY (STRATA_API_KEY is the clients\' credential)');
  }
  if (requested) stopNode(node, requested);
}

main().catch((err) => {
  // A configuration the node refuses only once it looks at it (the data directory's modes): exit 2 too.
  if (err instanceof ConfigError) {
    process.stderr.write(`strata: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`strata: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
