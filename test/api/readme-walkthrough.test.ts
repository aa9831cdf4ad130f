/**
 * The README's walkthrough, run as a user runs it (issue 29: "the walkthrough runs twice in a row"): the
 * shell blocks of "Quick start" (logging in, a key for an agent), "A walk through with curl" and
 * "Memory, retrieval and tasks" are read from README.md itself, so the test follows the README as it
 * changes, and run by bash with curl and jq against a real node started as `npm start` starts it, on a
 * fresh data directory. Then again on the same data directory after a restart, as someone going through
 * it a second time would; then once more after the admin password was changed the way the README says
 * (the node then deletes data/initial-admin-password), with the new password in STRATA_ADMIN_PASSWORD.
 * Every command must exit 0 and no answer may be an error envelope.
 *
 * The commands run in a scratch directory whose data/ is the node's data directory, so the README's
 * `data/initial-admin-password` is the real file; `localhost:3000` becomes the node's address, and
 * STRATA_URL points the CLI at it. `npx strata` in the repository runs the workspace's bin: a shell
 * function stands in for that lookup here (the scratch directory has no package.json, and npx must not
 * reach the registry).
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCommand, STRATA_BIN, type CliRun } from '../helpers/cli';
import { REPO_ROOT, removeDir, startServer, tempDir, type ServerProcess } from '../helpers/server-process';

/** The ```sh blocks under a `## heading` of the README, in order. */
function shellBlocks(readme: string, heading: string): string[] {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README.md has no section "## ${heading}"`);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** A block's commands: continuation lines joined, comments and blank lines left out. */
function commandsOf(block: string): string[] {
  return block.replace(/\\\n\s*/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

function walkthrough(): string[] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const quick = shellBlocks(readme, 'Quick start');
  // the first block installs and starts the node (the test starts it); the second logs in
  if (!quick[0]?.includes('npm start') || !quick[1]?.includes('strata login')) throw new Error('Quick start no longer reads: npm ci / npm start, then strata login');
  return [...quick.slice(1), ...shellBlocks(readme, 'A walk through with curl'), ...shellBlocks(readme, 'Memory, retrieval and tasks')].flatMap(commandsOf);
}

interface Step { command: string; code: number; stdout: string; stderr: string }

/**
 * Runs the commands in one bash (variables carry from step to step, as in a terminal) in `cwd`; each
 * step's exit code, stdout and stderr kept apart. The last step prints the variables the walkthrough sets.
 */
async function run(commands: string[], cwd: string, server: ServerProcess, env: Record<string, string> = {}): Promise<{ steps: Step[]; vars: Record<string, string>; raw: CliRun }> {
  const address = new URL(server.url).host;
  const lines = [
    `npx() { if [ "$1" = strata ]; then shift; ${JSON.stringify(STRATA_BIN)} "$@"; else command npx "$@"; fi; }`,
    `cd ${JSON.stringify(cwd)}`,
    ...commands.flatMap((command, i) => [
      `printf '\\n<<<step ${i} out>>>\\n'`,
      `{ ${command.replaceAll('localhost:3000', address)}\n} 2>".step-${i}.err"`,
      `printf '\\n<<<step ${i} code %d>>>\\n' $?`,
    ]),
    `printf '\\n<<<vars>>>\\n'`,
    'jq -n --arg TOKEN "$TOKEN" --arg KEY "$KEY" --arg STRATA_API_KEY "$STRATA_API_KEY" --arg STREAM "$STREAM" \'$ARGS.named\'',
  ];
  const raw = await runCommand('bash', ['-c', lines.join('\n')], { env: { STRATA_URL: server.url, ...env } });
  const steps = commands.map((command, i) => {
    const out = new RegExp(`<<<step ${i} out>>>\\n([\\s\\S]*?)\\n<<<step ${i} code (\\d+)>>>`).exec(raw.stdout);
    if (!out) throw new Error(`step ${i} (${command}) did not run:\n${raw.stdout}\n${raw.stderr}`);
    return { command, code: Number(out[2]), stdout: out[1].trim(), stderr: readFileSync(join(cwd, `.step-${i}.err`), 'utf8') };
  });
  const vars = JSON.parse(raw.stdout.slice(raw.stdout.indexOf('<<<vars>>>') + '<<<vars>>>'.length)) as Record<string, string>;
  return { steps, vars, raw };
}

/** What went wrong in a run, one line a step: an exit code other than 0, or an error envelope answered. */
function failures(steps: Step[]): string[] {
  const bad: string[] = [];
  for (const s of steps) {
    if (s.code !== 0) bad.push(`exit ${s.code}: ${s.command}\n${s.stderr}${s.stdout}`);
    for (const line of s.stdout.split('\n')) {
      let answer: unknown;
      try {
        answer = JSON.parse(line);
      } catch {
        continue; // the CLI's text output
      }
      if (answer && typeof answer === 'object' && 'error' in answer) bad.push(`error answer: ${s.command}\n${line}`);
    }
  }
  return bad;
}

describe('the README walkthrough', () => {
  const dir = tempDir('strata-readme-');
  const dataDir = join(dir, 'data');
  let server: ServerProcess | null = null;
  const commands = walkthrough();

  afterAll(async () => {
    await server?.stop();
    removeDir(dir);
  });

  async function startNode(): Promise<ServerProcess> {
    // as `npm start` runs it: the default embedder, no password configured (the node generates one)
    server = await startServer({ dataDir });
    return server;
  }

  // steps shared by the cases, which run in order (each run continues where the one before left the node)
  let first: Awaited<ReturnType<typeof run>>;
  const batch = (steps: Step[]) => steps.find((s) => s.command.includes('Idempotency-Key'))!.stdout;
  // a bound for a hung step on a busy machine (the whole file takes under a minute on an idle one)
  const LIMIT = 240_000;

  it('runs on a fresh data directory', async () => {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const node = await startNode();
    first = await run(commands, dir, node);
    expect(failures(first.steps)).toEqual([]);
    for (const name of ['TOKEN', 'KEY', 'STRATA_API_KEY']) expect([name, first.vars[name]]).toEqual([name, expect.stringMatching(/^(sk_|ey)\S{20,}$/)]);
    expect(JSON.parse(batch(first.steps))).toMatchObject({ count: 2 });
  }, LIMIT);

  it('runs a second time, the node restarted on the same data directory', async () => {
    expect(await server!.stop()).toBe(0);
    const node = await startNode();
    const second = await run(commands, dir, node);
    expect(failures(second.steps)).toEqual([]);
    expect(second.vars.KEY).not.toBe(first.vars.KEY); // a new key for the agent each time
    expect(batch(second.steps)).toBe(batch(first.steps)); // the same Idempotency-Key: the first answer again
  }, LIMIT);

  it('runs after the admin password was changed as Quick start says, with the new one in STRATA_ADMIN_PASSWORD', async () => {
    const node = server!;
    writeFileSync(join(dir, 'my-password'), 'a-password-of-my-own\n', { mode: 0o600 });
    const change = await runCommand('bash', ['-c', `cd ${JSON.stringify(dir)} && ${JSON.stringify(STRATA_BIN)} login --password-file data/initial-admin-password --new-password-file my-password`], { env: { STRATA_URL: node.url } });
    expect(change.code).toBe(0);
    expect(existsSync(join(dataDir, 'initial-admin-password'))).toBe(false);
    const third = await run(commands, dir, node, { STRATA_ADMIN_PASSWORD: 'a-password-of-my-own' });
    expect(failures(third.steps)).toEqual([]);
  }, LIMIT);
});
