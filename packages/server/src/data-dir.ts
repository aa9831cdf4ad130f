/**
 * The data directory holds the JWT signing secret, password hashes and API key hashes: anyone who
 * can read it can mint admin tokens. So, as etcd and PostgreSQL do, it is created 0700, what the node
 * owns inside it is kept 0600 (files) / 0700 (directories), and a node refuses to start on a
 * directory that group or others can read, write or enter.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from './config';

/** Owner-only umask: everything the process creates from now on (LevelDB files, logs) is 0600/0700. */
export const OWNER_ONLY_UMASK = 0o077;

const uid = () => (typeof process.getuid === 'function' ? process.getuid() : -1);

/**
 * Creates `dir` 0700 if missing, refuses (ConfigError: exit 2) a directory open to group/others, and
 * narrows the modes of what this process's user owns inside it. An existing but empty directory of
 * ours is narrowed instead of refused: it holds nothing yet (a fresh Docker volume, `mkdir data`).
 */
export function prepareDataDir(dir: string): void {
  const path = resolve(dir);
  let stat = statOrNull(path, true); // the directory itself may be a symbolic link to where data lives
  if (!stat) {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    chmodSync(path, 0o700); // mkdir's mode is filtered by the umask, which may be wider
    stat = statSync(path);
  }
  if (!stat.isDirectory()) throw new ConfigError(`The data directory ${path} is not a directory.`);
  if ((stat.mode & 0o077) !== 0) {
    if (stat.uid === uid() && readdirSync(path).length === 0) {
      chmodSync(path, 0o700);
    } else {
      throw new ConfigError(
        `The data directory ${path} is open to other local users (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}); ` +
        `it holds the signing secret and password hashes. Fix it with: chmod -R go-rwx ${path}`,
      );
    }
  }
  narrowContents(path);
}

/** Directories 0700, files 0600, for entries the process's user owns (symbolic links are not followed). */
function narrowContents(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statOrNull(path);
    if (!stat || stat.isSymbolicLink() || stat.uid !== uid()) continue;
    if (stat.isDirectory()) {
      if ((stat.mode & 0o077) !== 0) chmodSync(path, 0o700);
      narrowContents(path);
    } else if (stat.isFile() && (stat.mode & 0o077) !== 0) {
      chmodSync(path, stat.mode & 0o700);
    }
  }
}

function statOrNull(path: string, follow = false): Stats | null {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
