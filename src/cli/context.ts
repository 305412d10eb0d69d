// Per-command setup shared by every command: resolve the configuration from the
// global options and the command's own flags, open the database, build the
// providers.

import type { Command } from 'commander';
import { chooseEmbedder, resolveConfig, withEmbedder, type Config, type EmbedderChoice, type ResolvedConfig } from '../config/index.js';
import { openDatabase, type Db, type OpenOptions } from '../store/db.js';
import { getFingerprint } from '../store/meta.js';

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
  return resolveConfig({
    flagNames: FLAG_NAMES,
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

/**
 * The configuration with the embedder this database needs (chooseEmbedder): with
 * embedProvider auto, an existing index keeps its own embedder. `reindex`: the
 * index is about to be rebuilt, so it is not followed.
 */
export function embedderConfig(settings: ResolvedConfig, db: Db, options: { reindex?: boolean } = {}): { config: Config; choice: EmbedderChoice } {
  const choice = chooseEmbedder(settings, options.reindex ? undefined : getFingerprint(db)?.embedder);
  return { config: withEmbedder(settings.config, choice), choice };
}

/** A command's own numeric flags are checked as the settings are, named as the user typed them. */
export { numberIn as numberFlag, wholeNumberIn as wholeNumberFlag } from '../config/index.js';
