// Per-command setup shared by every command: resolve the configuration from the
// global options and the command's own flags, open the database, build the
// providers.

import type { Command } from 'commander';
import { resolveConfig, type ResolvedConfig } from '../config/index.js';
import { openDatabase, type Db, type OpenOptions } from '../store/db.js';

export interface GlobalOptions {
  db?: string;
  config?: string;
  provider?: string;
  baseUrl?: string;
  chatModel?: string;
  rewriteModel?: string;
  embedModel?: string;
}

/** Resolves configuration for `command`; `flags` maps dotted setting keys to the command's own flag values. */
export function settingsFor(command: Command, flags: Record<string, string | number | undefined> = {}): ResolvedConfig {
  const globals = command.optsWithGlobals() as GlobalOptions;
  return resolveConfig({
    configFile: globals.config,
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
}

export function openDb(settings: ResolvedConfig, options: OpenOptions = {}): Db {
  return openDatabase(settings.config.db, options);
}
