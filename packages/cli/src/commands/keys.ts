/** `strata keys create|list|revoke` (docs/api.md §1; admin key, or a key minting within its own scope). */
import { Option, type Command } from 'commander';
import type { ApiKeyView } from '@strata/client';
import { connected } from '../context';
import { table } from '../output';
import { collect } from '../parse';

function scopeOf(k: Pick<ApiKeyView, 'org_id' | 'user_ids'>): string {
  const parts = [k.org_id ? `org ${k.org_id}` : '', k.user_ids ? `users ${k.user_ids.join(',')}` : ''].filter(Boolean);
  return parts.length ? parts.join('; ') : 'whole service';
}

export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('API keys');

  keys
    .command('create')
    .description('create an API key; the key is shown once, only here')
    .option('--name <name>', 'a label for people')
    .addOption(new Option('--role <role>', 'what the key may do (default: write, as the server decides)').choices(['read', 'write', 'admin']))
    .option('--org <org_id>', 'scope the key to one organization')
    .option('--user <user_id>', 'scope the key to this user (repeat for more)', collect)
    .action(connected(async ({ client, out }, command) => {
      const o = command.opts<{ name?: string; role?: 'read' | 'write' | 'admin'; org?: string; user?: string[] }>();
      const made = await client.createApiKey({ name: o.name, role: o.role, org_id: o.org, user_ids: o.user });
      out.result(made, () => [
        made.key,
        `key_id ${made.key_id}, role ${made.role}, scope: ${scopeOf(made)}${made.name ? `, name ${made.name}` : ''}`,
        'Store the key now: it is not shown again.',
      ]);
    }));

  keys
    .command('list')
    .description('list API keys (without the keys themselves)')
    .action(connected(async ({ client, out }) => {
      const { api_keys } = await client.listApiKeys();
      out.result({ api_keys }, () => (api_keys.length === 0 ? ['no API keys'] : table(
        ['KEY_ID', 'PREFIX', 'ROLE', 'SCOPE', 'CREATED', 'NAME'],
        api_keys.map((k) => [k.key_id, k.key_prefix, k.role, scopeOf(k), k.created_at, k.name ?? '']),
      )));
    }));

  keys
    .command('revoke')
    .description('revoke an API key: requests with it fail from now on')
    .argument('<key_id>', 'the key_id shown by `keys create` or `keys list`')
    .action(connected(async ({ client, out }, command) => {
      const [keyId] = command.processedArgs as [string];
      const answer = await client.revokeApiKey(keyId);
      out.result(answer, () => [`revoked ${answer.key_id}`]);
    }));
}
