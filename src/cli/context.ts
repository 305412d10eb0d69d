// Per-command setup shared by every command: resolve the configuration from the
// global options and the command's own flags, open the database, build the
// providers.

import type { Command } from 'commander';
import { chooseEmbedder, decimalNumber, resolveConfig, withEmbedder, type Config, type EmbedderChoice, type ResolvedConfig } from '../config/index.js';
import { openDatabase, type Db, type OpenOptions } from '../store/db.js';
import { getFingerprint } from '../store/meta.js';
import { UserError } from '../util/errors.js';

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

/** A command's own numeric flag, range-checked where it is parsed, named as the user typed it. */
export function wholeNumberFlag(raw: string, flag: string, min: number, max: number, what = 'a whole number'): number {
  const value = decimalNumber(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `from ${min} to ${max.toLocaleString('en-US')}`;
    throw new UserError(`${flag} must be ${what} ${range}, got "${raw}".`, { exitCode: 2 });
  }
  return value;
}

/** A command's own numeric flag that may have a fraction, range-checked. */
export function numberFlag(raw: string, flag: string, min: number, max: number): number {
  const value = decimalNumber(raw);
  if (!Number.isFinite(value) || value < min || value > max) {
    throw new UserError(`${flag} must be a number from ${min} to ${max}, got "${raw}".`, { exitCode: 2 });
  }
  return value;
}
