/**
 * `strata login`: the first step after the first start. Exchanges the admin password (the generated one
 * in <data_dir>/initial-admin-password until it is changed) for an admin API key, printed alone on
 * stdout so `export STRATA_API_KEY=$(npx strata login ...)` works; `--token` prints the dashboard token
 * instead (for `Authorization: Bearer`), and `--new-password-file` changes the password on the way (the
 * node then removes the file of the generated one).
 *
 * `--initial-password-file` is for commands meant to be run again (the README's): it reads the generated
 * password while its file exists, and once the node has deleted it (the password was changed) takes the
 * password as if the option were not given, saying so. `--password-file` stays strict: a file named
 * there must exist.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { Option, type Command } from 'commander';
import { connected } from '../context';
import { readSecretFile, readSecretLine } from '../credentials/secret';
import { UsageError } from '../errors';

interface LoginOptions {
  username: string;
  passwordFile?: string;
  initialPasswordFile?: string;
  newPasswordFile?: string;
  token?: boolean;
  name?: string;
  role: 'read' | 'write' | 'admin';
}

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description('exchange the admin password for an admin API key (printed alone, for `export STRATA_API_KEY=$(...)`) or, with --token, a dashboard token')
    .option('--username <name>', 'the account to log in as', 'admin')
    .option('--password-file <file>', 'read the password from this file\'s first line; default: STRATA_ADMIN_PASSWORD, else typed (hidden) or piped on stdin')
    .addOption(new Option('--initial-password-file <file>', 'the generated password\'s file (data/initial-admin-password): read while it exists; once the password was changed (the node deletes the file), as without this option')
      .conflicts('passwordFile'))
    .option('--new-password-file <file>', 'change the password to this file\'s first line (at least 8 characters) after logging in')
    .option('--token', 'print the token (valid auth.token_ttl seconds) instead of creating an API key')
    .option('--name <name>', 'label of the new key (default: "strata login <time>")')
    .addOption(new Option('--role <role>', 'role of the new key').choices(['read', 'write', 'admin']).default('admin'))
    .action(connected(async ({ client, out }, command) => {
      const o = command.opts<LoginOptions>();
      const initial = o.initialPasswordFile;
      if (initial !== undefined && !existsSync(initial)) {
        process.stderr.write(`strata: ${initial} is gone (the node deletes it once the admin password has been changed): ${process.env.STRATA_ADMIN_PASSWORD ? 'using STRATA_ADMIN_PASSWORD' : 'give the current password'}.\n`);
      }
      const file = o.passwordFile ?? (initial !== undefined && existsSync(initial) ? initial : undefined);
      const password = file !== undefined ? readPasswordFile(file)
        : process.env.STRATA_ADMIN_PASSWORD ? process.env.STRATA_ADMIN_PASSWORD
        : await readSecretLine(`Password for ${o.username}: `);
      const newPassword = o.newPasswordFile !== undefined ? readSecretFile(o.newPasswordFile, 'new password') : null;
      const session = await client.login(o.username, password);
      client.useToken(session.token);
      if (newPassword !== null) await client.changePassword(password, newPassword);
      else if (session.must_change_password) {
        process.stderr.write('strata: the admin password is still the generated one; change it (strata login --new-password-file <file>, or the dashboard).\n');
      }
      if (o.token) {
        out.result({ token: session.token, expires_in: session.expires_in, password_changed: newPassword !== null }, () => [session.token]);
        return;
      }
      const made = await client.createApiKey({ name: o.name ?? `strata login ${new Date().toISOString()}`, role: o.role });
      out.result({ ...made, password_changed: newPassword !== null }, () => [made.key]);
    }));
}

/** The password from a file; a missing initial-admin-password says why it may be gone and what to use. */
function readPasswordFile(file: string): string {
  if (!existsSync(file) && basename(file) === 'initial-admin-password') {
    throw new UsageError(`${file} does not exist: the node deletes it once the admin password has been changed. Log in with the current password (STRATA_ADMIN_PASSWORD, typed, or --password-file <your file>), or use --initial-password-file ${file}, which falls back to those once the file is gone.`);
  }
  return readSecretFile(file, 'password');
}
