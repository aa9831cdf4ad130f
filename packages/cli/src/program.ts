/** The `strata` command line: global options, then one module per command (commands/index.ts). */
import { Command, Option } from 'commander';
import { COMMANDS } from './commands';
import { DEFAULT_URL } from './context';
import { version as VERSION } from '../package.json';

export function buildProgram(write: { out: (s: string) => void; err: (s: string) => void }): Command {
  const program = new Command('strata')
    .description('Strata, the memory runtime for AI agents: run a node, or talk to one over HTTP.')
    .version(VERSION, '-V, --version')
    .addOption(new Option('--url <url>', 'base URL of the Strata node').env('STRATA_URL').default(DEFAULT_URL))
    .addOption(new Option('--api-key <key>', 'API key sent as x-api-key (keys and cluster need an admin key)').env('STRATA_API_KEY'))
    .option('--json', 'print the result as JSON on stdout (errors as JSON on stderr)')
    // Before any subcommand is added: subcommands copy these settings from their parent.
    .exitOverride()
    .configureOutput({ writeOut: write.out, writeErr: write.err })
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true });
  for (const register of COMMANDS) register(program);
  return program;
}
