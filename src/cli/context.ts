// Per-command setup shared by every command: resolve the configuration from the
// global options and the command's own flags, and open the workspace on it.

import type { Command } from 'commander';
import { openWorkspace } from '../app/workspace.js';
import type { Workspace } from '../app/index.js';
import { resolveConfig, type ResolvedConfig } from '../config/index.js';
import { UserError } from '../util/errors.js';
import { inCwd, ioOf } from './io.js';

export interface GlobalOptions {
  db?: string;
  config?: string;
  provider?: string;
  baseUrl?: string;
  chatModel?: string;
  rewriteModel?: string;
  embedModel?: string;
}

/** The command-line spelling of the flags that set a setting, so a bad value is reported as the user typed it. */
const FLAG_NAMES: Record<string, string> = {
  db: '--db',
  provider: '--provider',
  baseURL: '--base-url',
  'models.chat': '--chat-model',
  'models.rewrite': '--rewrite-model',
  'models.embedding': '--embed-model',
  'retrieval.k': '-k',
  'chunk.size': '--chunk-size',
  'chunk.overlap': '--chunk-overlap',
  'ingest.maxFileBytes': '--max-file-size',
  'rewrite.policy': '--rewrite',
  'assistant.scope': '--scope',
};

/** Resolves configuration for `command`; `flags` maps dotted setting keys to the command's own flag values. */
export function settingsFor(command: Command, flags: Record<string, string | number | undefined> = {}): ResolvedConfig {
  const globals = command.optsWithGlobals() as GlobalOptions;
  const io = ioOf(command);
  // `--db ""` would fall back to the default database, and ":memory:" keeps nothing once the command ends.
  if (globals.db !== undefined && globals.db.trim() === '') {
    throw new UserError('--db was given an empty path.', { hint: 'Give the database file, e.g. --db ./ragline.db, or leave --db out for the default.', exitCode: 2 });
  }
  const named = globals.db ?? io.env.RAGLINE_DB;
  if (named?.trim() === ':memory:') {
    throw new UserError(`${globals.db !== undefined ? '--db' : 'RAGLINE_DB'} :memory: is a database that ends with the command: nothing ingested or asked would be kept.`, {
      hint: 'Give a database file, e.g. --db ./ragline.db.',
      exitCode: 2,
    });
  }
  const fromEnv = io.env.RAGLINE_CONFIG?.trim() ? io.env.RAGLINE_CONFIG : undefined;
  const resolved = resolveConfig({
    env: io.env,
    flagNames: FLAG_NAMES,
    // Relative paths are read against the run's working directory.
    configFile: inCwd(io, globals.config ?? fromEnv),
    flags: {
      db: globals.db,
      provider: globals.provider,
      baseURL: globals.baseUrl,
      'models.chat': globals.chatModel,
      'models.rewrite': globals.rewriteModel,
      'models.embedding': globals.embedModel,
      ...flags,
    },
  });
  return { ...resolved, config: { ...resolved.config, db: inCwd(io, resolved.config.db) } };
}

/** The workspace on the database the settings name; `create`: make a new database of a missing or empty file (ingest), else refuse it. */
export function openWorkspaceFor(settings: ResolvedConfig, options: { create?: boolean } = {}): Workspace {
  return openWorkspace({ resolved: settings, create: options.create ?? false });
}

/** A command's own numeric flags are checked as the settings are, named as the user typed them. */
export { numberIn as numberFlag, wholeNumberIn as wholeNumberFlag } from '../config/index.js';
