/**
 * Every command of `strata`, in the order `--help` lists them. A command is one module exporting a
 * function that adds it to the program; adding one is a file beside this one and a line here.
 */
import type { Command } from 'commander';
import { registerCluster } from './cluster';
import { registerExport } from './export';
import { registerImport } from './import';
import { registerIngest } from './ingest';
import { registerKeys } from './keys';
import { registerLogin } from './login';
import { registerMcp } from './mcp';
import { registerSearch } from './search';
import { registerServe } from './serve';
import { registerStatus } from './status';

export type RegisterCommand = (program: Command) => void;

export const COMMANDS: RegisterCommand[] = [
  registerServe,
  registerMcp,
  registerStatus,
  registerLogin,
  registerKeys,
  registerCluster,
  registerIngest,
  registerSearch,
  registerExport,
  registerImport,
];
