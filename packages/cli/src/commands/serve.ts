/** `strata serve`: runs a node in this process, exactly what `npm start` runs. */
import type { Command } from 'commander';

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a Strata node in this process (what `npm start` runs); configured by --config or STRATA_* variables')
    .option('--config <file>', 'TOML configuration file (default: STRATA_CONFIG, else the embedded defaults)')
    .action(async (options: { config?: string }) => {
      // The server's entry reads `--config` from process.argv: give it the arguments `npm start -- --config
      // <file>` would. It starts on import and stops on SIGTERM/SIGINT, exiting with its own code.
      process.argv = [process.argv[0], process.argv[1], ...(options.config ? ['--config', options.config] : [])];
      await import('@strata/server/main');
    });
}
