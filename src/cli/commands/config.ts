// `ragline config show` and `ragline config path`: every resolved setting with
// where its value came from, so "why is it talking to that server?" has an
// answer. The API key is never printed, only whether it is set and from where.

import fs from 'node:fs';
import type { Command } from 'commander';
import { describePrefixes, embedderInUse } from '../../app/settings.js';
import { defaultConfigFile, SETTING_KEYS, type ResolvedConfig, type Source } from '../../config/index.js';
import { settingsFor, type GlobalOptions } from '../context.js';
import { inCwd, ioOf } from '../io.js';
import { outputFor } from '../output.js';

/** Where to set the settings that have no default, shown when they are unset (mirrors SETTINGS in src/config). */
const ENV_NAMES: Record<string, string> = {
  baseURL: 'RAGLINE_BASE_URL, OPENAI_BASE_URL',
  apiKey: 'RAGLINE_API_KEY, OPENAI_API_KEY',
  'embedding.baseURL': 'RAGLINE_EMBED_BASE_URL (default: baseURL)',
  'embedding.apiKey': 'RAGLINE_EMBED_API_KEY (default: apiKey, on the same host)',
  'embedding.queryPrefix': 'RAGLINE_EMBED_QUERY_PREFIX (default: by model name)',
  'embedding.documentPrefix': 'RAGLINE_EMBED_DOCUMENT_PREFIX (default: by model name)',
};

/** Settings printed only as whether they are set. */
const SECRET_KEYS = new Set(['apiKey', 'embedding.apiKey']);

/** Shown in `--help`; test/config.test.ts checks that it resolves. */
export const EXAMPLE_CONFIG = `{
  "baseURL": "http://localhost:11434/v1",
  "models": { "chat": "llama3.1:8b", "embedding": "nomic-embed-text" },
  "embedding": { "batchSize": 32, "concurrency": 2 },
  "request": { "timeoutMs": 120000, "maxRetries": 4 },
  "chunk": { "size": 2000, "overlap": 200 },
  "retrieval": { "k": 5 },
  "rewrite": { "policy": "auto" },
  "history": { "retention": "30d" }
}`;

/** One setting as `config show --json` prints it. */
export interface ShownSetting {
  /** The value, or null when unset. The API key is never included: see `set`. */
  value: unknown;
  /** `flag`, `env:NAME`, `file:/path`, `default`, or `unset`. */
  source: Source | 'unset';
  /** Only for the API keys: whether a key is configured. */
  set?: boolean;
}

/** The settings as shown: dotted key -> value and source, the API key reduced to whether it is set. */
export function describeSettings(resolved: ResolvedConfig): Record<string, ShownSetting> {
  const shown: Record<string, ShownSetting> = {};
  for (const key of SETTING_KEYS) {
    const source = resolved.sources[key] ?? 'unset';
    if (SECRET_KEYS.has(key)) {
      const secret = valueAt(resolved.config, key);
      const set = secret !== undefined && secret !== '';
      shown[key] = { value: set ? 'redacted' : null, source, set };
      continue;
    }
    shown[key] = { value: valueAt(resolved.config, key) ?? null, source };
  }
  return shown;
}

function valueAt(object: unknown, dotted: string): unknown {
  let node = object as Record<string, unknown> | undefined;
  for (const part of dotted.split('.')) node = node?.[part] as Record<string, unknown> | undefined;
  return node;
}

/** The config file this invocation reads: --config, else RAGLINE_CONFIG, else the XDG default. */
export function configFileLocation(command: Command, env: NodeJS.ProcessEnv = ioOf(command).env): { file: string; from: string } {
  const globals = command.optsWithGlobals() as GlobalOptions;
  const io = ioOf(command);
  if (globals.config !== undefined && globals.config.trim() !== '') return { file: inCwd(io, globals.config), from: 'flag --config' };
  const fromEnv = env.RAGLINE_CONFIG;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return { file: inCwd(io, fromEnv), from: 'env:RAGLINE_CONFIG' };
  return { file: defaultConfigFile(env), from: 'default' };
}

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description('show the resolved configuration and where each value came from')
    .addHelpText(
      'after',
      `
Settings are resolved per value: command-line flags, then environment variables
(RAGLINE_*, and OPENAI_API_KEY / OPENAI_BASE_URL), then the config file, then
defaults. The config file is JSON, by default $XDG_CONFIG_HOME/ragline/config.json
(~/.config/ragline/config.json); --config or RAGLINE_CONFIG point elsewhere.
Unknown keys are refused. Example:

${EXAMPLE_CONFIG}

Keep the API key out of the file if you can: set OPENAI_API_KEY (or RAGLINE_API_KEY).

Examples:
  ragline config show
  ragline config show --json
  ragline config path`,
    );

  config
    .command('show', { isDefault: true })
    .description('every setting with its value and source (flag, env:NAME, file:path, default); the API key is redacted')
    .option('--json', 'print as JSON')
    .addHelpText('after', `\nExample config file:\n${EXAMPLE_CONFIG}`)
    .action((flags: { json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const location = configFileLocation(command);
      const resolved = settingsFor(command);
      const settings = describeSettings(resolved);
      const embedder = embedderInUse(resolved);
      if (flags.json) {
        output.json({ configFile: location.file, configFileRead: resolved.configFile !== undefined, settings, embedder });
        return;
      }
      const { color } = output;
      const fileNote = resolved.configFile ? '' : color.dim(' (not found; defaults apply)');
      output.out(`${color.bold('config file')} ${location.file}${fileNote}`);
      const width = Math.max(...SETTING_KEYS.map((key) => key.length));
      for (const key of SETTING_KEYS) {
        const { value, source, set } = settings[key]!;
        const shown = SECRET_KEYS.has(key) ? (set ? '(set, redacted)' : '(not set)') : value === null ? '(not set)' : JSON.stringify(value);
        const where = source === 'unset' && ENV_NAMES[key] ? `unset; env ${ENV_NAMES[key]}` : source;
        output.out(`${key.padEnd(width)}  ${shown}  ${color.dim(where)}`);
      }
      output.out(`${color.bold('embedder in use')} ${embedder.remote ? `openai:${embedder.model}` : 'offline (built-in)'}  ${color.dim(embedder.reason)}`);
      if (embedder.server) output.out(`${color.bold('embeddings server')} ${embedder.server}`);
      if (embedder.prefixes) output.out(`${color.bold('embedding prefixes')} ${describePrefixes(embedder.prefixes)}`);
    });

  config
    .command('path')
    .description('print the location of the config file this command reads (whether or not it exists)')
    .action((_flags: unknown, command: Command) => {
      const output = outputFor(command);
      const location = configFileLocation(command);
      output.out(location.file);
      if (!fs.existsSync(location.file)) output.err(`(${location.from}; the file does not exist yet: create it to change the defaults, see \`ragline config --help\`)`);
    });
}
