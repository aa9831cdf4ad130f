/** `strata serve`: runs a node in this process, exactly what `npm start` runs. */
import type { Command } from 'commander';

/** How often a node started through npx checks that npx is still there. */
const PARENT_CHECK_MS = 500;

/**
 * `npx strata serve` runs this process under `npm exec` and a shell. npm exits on SIGINT/SIGTERM without
 * passing the signal on, which would leave the node serving with no one to stop it. Started that way,
 * the node takes the loss of its parent as the signal: it stops gracefully, as on SIGTERM. Started any
 * other way (a service manager, `nohup strata serve &`), it keeps running when its parent exits.
 */
function stopWithNpx(env: NodeJS.ProcessEnv = process.env): void {
  if (env.npm_command !== 'exec') return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, PARENT_CHECK_MS);
  timer.unref();
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run a Strata node in this process (what `npm start` runs); configured by --config or STRATA_* variables; stops on SIGINT/SIGTERM (also sent to npx)')
    .option('--config <file>', 'TOML configuration file (default: STRATA_CONFIG, else the embedded defaults)')
    .action(async (options: { config?: string }) => {
      // The server's entry reads `--config` from process.argv: give it the arguments `npm start -- --config
      // <file>` would. It starts on import and stops on SIGTERM/SIGINT, exiting with its own code.
      process.argv = [process.argv[0], process.argv[1], ...(options.config ? ['--config', options.config] : [])];
      stopWithNpx();
      await import('@strata/server/main');
    });
}
