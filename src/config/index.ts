// All settings resolved in one place, into one plain object: flags, then
// RAGLINE_* environment variables (and the standard OPENAI_* ones), then the
// config file, then defaults. Every value remembers where it came from so
// `ragline config show` can tell.

import os from 'node:os';
import path from 'node:path';
import type { RewritePolicy } from '../domain/index.js';
import { UserError } from '../util/errors.js';
import { readRegularFile } from '../util/regular-file.js';
import { registerSecret, registerURLCredentials } from '../util/secrets.js';

export type ProviderChoice = 'auto' | 'offline' | 'openai';

export interface Config {
  /** Path of the SQLite database, or a postgres:// URL. */
  db: string;
  /** On Postgres: whose sessions these are (default: the Postgres role of the connection). */
  user?: string;
  /** `auto`: the OpenAI-compatible provider when a key or base URL is set, else offline. */
  provider: ProviderChoice;
  /** Which embedder builds and searches the index; `auto` follows `provider`. */
  embedProvider: ProviderChoice;
  baseURL?: string;
  apiKey?: string;
  models: { chat: string; rewrite: string; embedding: string };
  embedding: {
    dimensions?: number;
    batchSize: number;
    concurrency: number;
    /** A server of its own for embeddings (llama.cpp and vLLM serve one model per process). Default: baseURL. */
    baseURL?: string;
    /** Its key. Default: apiKey, unless baseURL is set to another host (a key is not sent to a server it was not given for). */
    apiKey?: string;
    /**
     * Put before each query / each document before embedding; `none` (stored as '') for
     * nothing; unset: what the index recorded, else chosen by model name (src/providers/embedding-prefixes.ts).
     */
    queryPrefix?: string;
    documentPrefix?: string;
  };
  /** The answer model's limits. */
  answer: {
    /** Tokens the model may generate; unset: the server's default. */
    maxTokens?: number;
    /** The model's context window in tokens, overriding what the server reports; the answer prompt is fitted to it. */
    contextTokens?: number;
  };
  request: {
    /** Wait for a response to start (headers, and a stream's first token). */
    timeoutMs: number;
    /** Longest silence inside a stream once it has started. */
    idleMs: number;
    /** Longest a model's streamed reply may take in all, from the request to its last token. */
    totalMs: number;
    /** How long a model may take to load (a local server's first request) before calls give up waiting for it. */
    loadTimeoutMs: number;
    maxRetries: number;
    /** Ceiling of the first wait before a retry, in ms; it doubles on each retry. */
    retryBaseMs: number;
  };
  chunk: { size: number; overlap: number };
  ingest: { maxFileBytes: number };
  retrieval: {
    k: number;
    /**
     * Weight of the raw question's results fused beside a rewritten query's; 0
     * searches with the rewrite alone. Unset: 1 beside the offline rewriter, 0.3
     * beside a model's rewrite (both measured on bench/mtrag).
     */
    rawWeight?: number;
  };
  rewrite: { policy: RewritePolicy; timeoutMs: number; maxTokens: number };
  history: {
    /** Approximate tokens of earlier turns carried verbatim; older turns go into the running summary. */
    tokenBudget: number;
    /** Exchanges the rewrite sees. */
    rewriteTurns: number;
    /** Exchanges the answer prompt sees. */
    answerTurns: number;
    /** Turns older than this are pruned when chat starts, e.g. `30d`; `off` or unset keeps everything. */
    retention?: string;
  };
  assistant: { scope?: string };
  /** `auto`: a configured model extracts each exchange's topics; `local`: always the local extractor. */
  topics: { extractor: 'auto' | 'local' };
  search: SearchPaths;
}

/**
 * Which path each side of a search takes. `auto` answers from SQLite (vec0, FTS5)
 * until the in-memory copy is loaded and when it would not fit in memory; `vec0`
 * and `fts5` keep a side on SQLite; `memory` always uses the copy (benchmarks,
 * diagnosis).
 */
export interface SearchPaths {
  vector: 'auto' | 'vec0' | 'memory';
  keyword: 'auto' | 'fts5' | 'memory';
  /** Threads that scan the in-memory vector copy: 2 (on 2+ cores) or 1. */
  vectorThreads: number;
}

/** What a retriever built without settings uses (the defaults below). */
export const DEFAULT_SEARCH_PATHS: SearchPaths = { vector: 'auto', keyword: 'auto', vectorThreads: 2 };

export type Source = 'flag' | 'default' | `env:${string}` | `file:${string}`;

export interface ResolvedConfig {
  config: Config;
  /** Where each dotted key's value came from. */
  sources: Record<string, Source>;
  /** The config file that was read, if any. */
  configFile?: string;
}

type Parser = (raw: string, where: string) => unknown;

interface Setting {
  key: string;
  env: string[];
  parse: Parser;
  fallback?: (partial: Record<string, unknown>) => unknown;
}

const text: Parser = (raw) => raw.trim();
/** Taken as written (an embedding prefix ends in the space the model expects); `none`: no prefix. */
const prefix: Parser = (raw) => (raw.trim().toLowerCase() === 'none' ? '' : raw);
/**
 * A number as a person writes one in decimal ("5", "0.3", "-2"), else NaN: `Number()`
 * alone also reads "0x10", "1e2", "0b11" and "Infinity", which no option means.
 */
export function decimalNumber(raw: string): number {
  return /^\s*[+-]?(\d+(\.\d*)?|\.\d+)\s*$/.test(raw) ? Number(raw) : NaN;
}

/**
 * A whole number within [min, max] (max Number.MAX_SAFE_INTEGER: no upper bound);
 * `where` names the flag, variable or file setting it came from, as the user wrote it.
 */
export function wholeNumberIn(raw: string, where: string, min: number, max: number, what = 'a whole number'): number {
  const value = decimalNumber(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of ${min} or more` : `from ${min} to ${max.toLocaleString('en-US')}`;
    throw new UserError(`${where} must be ${what} ${range}, got "${raw}".`, { exitCode: 2 });
  }
  return value;
}

/** A number, fraction allowed, within [min, max]; `where` as for wholeNumberIn. */
export function numberIn(raw: string, where: string, min: number, max: number): number {
  const value = decimalNumber(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new UserError(`${where} must be a number from ${min} to ${max}, got "${raw}".`, { exitCode: 2 });
  return value;
}

const wholeNumber =
  (min: number, max: number): Parser =>
  (raw, where) =>
    wholeNumberIn(raw, where, min, max);
const numberBetween =
  (min: number, max: number): Parser =>
  (raw, where) =>
    numberIn(raw, where, min, max);
/** The longest delay a Node timer takes; longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Most chunks one question may retrieve (sqlite-vec refuses KNN queries above 4096). */
export const MAX_K = 1000;
const oneOf =
  (...choices: string[]): Parser =>
  (raw, where) => {
    const value = raw.trim().toLowerCase();
    if (!choices.includes(value)) throw new UserError(`${where} must be one of ${choices.join(', ')}, got "${raw}".`, { exitCode: 2 });
    return value;
  };
const url: Parser = (raw, where) => {
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw new UserError(`${where} must be an http(s) URL such as http://localhost:11434/v1, got "${raw}".`, { exitCode: 2 });
  }
  return raw.replace(/\/+$/, '');
};
/**
 * `history.retention`: `off` (keep every turn, as when unset, so an environment
 * variable can turn off what a config file sets) or an age above zero. Zero is
 * refused: it would remove all history (but the session continued) at each chat start.
 */
const retention: Parser = (raw, where) => {
  const value = raw.trim();
  if (value.toLowerCase() === 'off') return 'off';
  if (!/^\d/.test(value)) {
    throw new UserError(`${where} must be off or an age such as 12h, 30d or 6mo, got "${raw}".`, { hint: `Units: ${DURATION_HELP}.`, exitCode: 2 });
  }
  parseHistoryAge(raw, where, {
    would: 'remove all chat history each time a chat starts',
    hint: 'Write off to keep every turn, or an age such as 30d to remove the turns older than that.',
  });
  return value;
};

const DAY_MS = 86_400_000;
/** Units of an age (`prune --older-than`, `history.retention`); a month is 30 days, a year 365. */
const DURATION_UNITS: Record<string, number> = {
  s: 1000,
  min: 60_000,
  h: 3_600_000,
  d: DAY_MS,
  w: 7 * DAY_MS,
  mo: 30 * DAY_MS,
  y: 365 * DAY_MS,
};
/** The longest age accepted: older cut-offs are not dates a database can hold usefully. */
const MAX_DURATION_YEARS = 1000;
export const DURATION_HELP = 's, min, h, d, w, mo (30 days) or y (365 days), e.g. 90s, 45min, 12h, 30d, 8w, 6mo, 1y';

/**
 * Parses an age such as `90s`, `45min`, `12h`, `30d`, `8w`, `6mo` or `1y` into
 * milliseconds. A bare `m` is refused as ambiguous (minutes or months?), as are
 * ages beyond MAX_DURATION_YEARS; `where` names the flag or setting in the message.
 */
export function parseDuration(raw: string, where: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i.exec(raw);
  const unit = match?.[2]!.toLowerCase();
  if (match && unit === 'm') {
    throw new UserError(`${where} "${raw.trim()}" is ambiguous: "m" could be minutes or months.`, {
      hint: `Write ${match[1]}min for minutes or ${match[1]}mo for months.`,
      exitCode: 2,
    });
  }
  if (!match || DURATION_UNITS[unit!] === undefined) {
    throw new UserError(`${where} must be an age such as 12h, 30d or 6mo, got "${raw}".`, { hint: `Units: ${DURATION_HELP}.`, exitCode: 2 });
  }
  const ms = Number(match[1]) * DURATION_UNITS[unit!]!;
  if (!Number.isFinite(ms) || ms > MAX_DURATION_YEARS * DURATION_UNITS.y!) {
    throw new UserError(`${where} "${raw.trim()}" is too long: at most ${MAX_DURATION_YEARS}y.`, { exitCode: 2 });
  }
  return ms;
}

/**
 * An age of chat history: the turns older than it are removed (`prune --older-than`,
 * `history.retention`). Read as parseDuration reads it, and above zero: every turn is
 * older than zero, so a zero age is refused, `zero` saying what it would do and what
 * to write instead, rather than read as "remove all history".
 */
export function parseHistoryAge(raw: string, where: string, zero: { would: string; hint: string }): number {
  const ms = parseDuration(raw, where);
  if (ms === 0) throw new UserError(`${where} "${raw.trim()}" would ${zero.would}.`, { hint: zero.hint, exitCode: 2 });
  return ms;
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = blankToUndefined(env.XDG_DATA_HOME);
  return path.join(xdg ?? path.join(homeDir(env), '.local', 'share'), 'ragline');
}

export function defaultConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = blankToUndefined(env.XDG_CONFIG_HOME);
  return path.join(xdg ?? path.join(homeDir(env), '.config'), 'ragline', 'config.json');
}

/** HOME from the env being resolved (not this process's), so an explicit env object is honoured. */
function homeDir(env: NodeJS.ProcessEnv): string {
  return blankToUndefined(env.HOME) ?? os.homedir();
}

const SETTINGS: Setting[] = [
  { key: 'db', env: ['RAGLINE_DB'], parse: text },
  { key: 'user', env: ['RAGLINE_USER'], parse: text },
  { key: 'provider', env: ['RAGLINE_PROVIDER'], parse: oneOf('auto', 'offline', 'openai') },
  { key: 'embedProvider', env: ['RAGLINE_EMBED_PROVIDER'], parse: oneOf('auto', 'offline', 'openai') },
  { key: 'baseURL', env: ['RAGLINE_BASE_URL', 'OPENAI_BASE_URL'], parse: url },
  { key: 'apiKey', env: ['RAGLINE_API_KEY', 'OPENAI_API_KEY'], parse: text },
  { key: 'models.chat', env: ['RAGLINE_CHAT_MODEL'], parse: text },
  { key: 'models.rewrite', env: ['RAGLINE_REWRITE_MODEL'], parse: text, fallback: (c) => c['models.chat'] },
  { key: 'models.embedding', env: ['RAGLINE_EMBED_MODEL'], parse: text },
  { key: 'embedding.dimensions', env: ['RAGLINE_EMBED_DIMENSIONS'], parse: wholeNumber(1, 8192) },
  { key: 'embedding.batchSize', env: ['RAGLINE_EMBED_BATCH'], parse: wholeNumber(1, 2048) },
  { key: 'embedding.concurrency', env: ['RAGLINE_EMBED_CONCURRENCY'], parse: wholeNumber(1, 64) },
  { key: 'embedding.baseURL', env: ['RAGLINE_EMBED_BASE_URL'], parse: url },
  { key: 'embedding.apiKey', env: ['RAGLINE_EMBED_API_KEY'], parse: text },
  { key: 'embedding.queryPrefix', env: ['RAGLINE_EMBED_QUERY_PREFIX'], parse: prefix },
  { key: 'embedding.documentPrefix', env: ['RAGLINE_EMBED_DOCUMENT_PREFIX'], parse: prefix },
  { key: 'answer.maxTokens', env: ['RAGLINE_ANSWER_MAX_TOKENS'], parse: wholeNumber(1, 1_000_000) },
  { key: 'answer.contextTokens', env: ['RAGLINE_CONTEXT_TOKENS'], parse: wholeNumber(256, 10_000_000) },
  { key: 'request.timeoutMs', env: ['RAGLINE_TIMEOUT_MS'], parse: wholeNumber(1, MAX_TIMER_MS) },
  { key: 'request.idleMs', env: ['RAGLINE_STREAM_IDLE_MS'], parse: wholeNumber(1, MAX_TIMER_MS) },
  { key: 'request.totalMs', env: ['RAGLINE_STREAM_TOTAL_MS'], parse: wholeNumber(1, MAX_TIMER_MS) },
  { key: 'request.loadTimeoutMs', env: ['RAGLINE_LOAD_TIMEOUT_MS'], parse: wholeNumber(1, MAX_TIMER_MS) },
  { key: 'request.maxRetries', env: ['RAGLINE_MAX_RETRIES'], parse: wholeNumber(0, 100) },
  { key: 'request.retryBaseMs', env: ['RAGLINE_RETRY_BASE_MS'], parse: wholeNumber(0, MAX_TIMER_MS) },
  { key: 'chunk.size', env: ['RAGLINE_CHUNK_SIZE'], parse: wholeNumber(1, 1_000_000) },
  { key: 'chunk.overlap', env: ['RAGLINE_CHUNK_OVERLAP'], parse: wholeNumber(0, 1_000_000) },
  { key: 'ingest.maxFileBytes', env: ['RAGLINE_MAX_FILE_BYTES'], parse: wholeNumber(1, 2 ** 31 - 1) },
  { key: 'retrieval.k', env: ['RAGLINE_K'], parse: wholeNumber(1, MAX_K) },
  { key: 'retrieval.rawWeight', env: ['RAGLINE_RAW_WEIGHT'], parse: numberBetween(0, 100) },
  { key: 'rewrite.policy', env: ['RAGLINE_REWRITE'], parse: oneOf('auto', 'always', 'never') },
  { key: 'rewrite.timeoutMs', env: ['RAGLINE_REWRITE_TIMEOUT_MS'], parse: wholeNumber(1, MAX_TIMER_MS) },
  { key: 'rewrite.maxTokens', env: ['RAGLINE_REWRITE_MAX_TOKENS'], parse: wholeNumber(1, 100_000) },
  { key: 'history.tokenBudget', env: ['RAGLINE_HISTORY_TOKENS'], parse: wholeNumber(1, 10_000_000) },
  { key: 'history.rewriteTurns', env: ['RAGLINE_REWRITE_TURNS'], parse: wholeNumber(1, 1000) },
  { key: 'history.answerTurns', env: ['RAGLINE_ANSWER_TURNS'], parse: wholeNumber(0, 1000) },
  { key: 'history.retention', env: ['RAGLINE_HISTORY_RETENTION'], parse: retention },
  { key: 'assistant.scope', env: ['RAGLINE_SCOPE'], parse: text },
  { key: 'topics.extractor', env: ['RAGLINE_TOPICS'], parse: oneOf('auto', 'local') },
  { key: 'search.vector', env: ['RAGLINE_VECTOR_SEARCH'], parse: oneOf('auto', 'vec0', 'memory') },
  { key: 'search.keyword', env: ['RAGLINE_KEYWORD_SEARCH'], parse: oneOf('auto', 'fts5', 'memory') },
  { key: 'search.vectorThreads', env: ['RAGLINE_VECTOR_THREADS'], parse: wholeNumber(1, 2) },
];

/** Defaults; the chunk and retrieval values were chosen by measuring on bench/mtrag (see BENCHMARKS.md). */
export const DEFAULTS: Record<string, unknown> = {
  provider: 'auto',
  embedProvider: 'auto',
  'models.chat': 'gpt-4o-mini',
  'models.embedding': 'text-embedding-3-small',
  'embedding.batchSize': 64,
  'embedding.concurrency': 2,
  'request.timeoutMs': 60_000,
  'request.idleMs': 30_000,
  'request.totalMs': 300_000, // DEFAULT_TOTAL_MS in src/providers/openai.ts
  'request.loadTimeoutMs': 300_000,
  'request.maxRetries': 4,
  'request.retryBaseMs': 500, // DEFAULT_BASE_DELAY_MS in src/providers/retry.ts
  'chunk.size': 3000,
  'chunk.overlap': 150,
  'ingest.maxFileBytes': 20 * 1024 * 1024,
  'retrieval.k': 5,
  'rewrite.policy': 'auto',
  'rewrite.timeoutMs': 15_000,
  'rewrite.maxTokens': 120,
  'history.tokenBudget': 2000,
  'history.rewriteTurns': 3,
  'history.answerTurns': 3,
  'topics.extractor': 'auto',
  'search.vector': DEFAULT_SEARCH_PATHS.vector,
  'search.keyword': DEFAULT_SEARCH_PATHS.keyword,
  'search.vectorThreads': DEFAULT_SEARCH_PATHS.vectorThreads,
};

export const SETTING_KEYS = SETTINGS.map((s) => s.key);

export interface ResolveInput {
  /** Flag values by dotted key; undefined means the flag was not given. */
  flags?: Record<string, string | number | undefined>;
  /** How each flag is spelled on the command line, for messages (default `--<dotted key>`). */
  flagNames?: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  /** `--config <file>`; when given, the file must exist. `false`: read no config file. */
  configFile?: string | false;
}

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function readConfigFile(file: string, required: boolean): Record<string, unknown> | undefined {
  let raw: string;
  try {
    const read = readRegularFile(file);
    if (!Buffer.isBuffer(read)) {
      // A FIFO or a device would be read forever; refused before the read.
      throw new UserError(`The config file ${file} is ${read.is}, not a regular file.`, {
        hint: 'Point --config or RAGLINE_CONFIG at a JSON file (`ragline config path` shows which file is read).',
        exitCode: 2,
      });
    }
    raw = read.toString('utf8');
  } catch (err) {
    if (err instanceof UserError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !required) return undefined;
    throw new UserError(`Cannot read the config file ${file}: ${(err as Error).message}`, { exitCode: 2 });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new UserError(`The config file ${file} is not valid JSON: ${(err as Error).message}`, {
      hint: 'Fix it, or see the README for an example.',
      exitCode: 2,
    });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UserError(`The config file ${file} must hold a JSON object.`, { exitCode: 2 });
  }
  return flatten(parsed as Record<string, unknown>);
}

function flatten(object: Record<string, unknown>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    const dotted = prefix + key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) Object.assign(out, flatten(value as Record<string, unknown>, dotted + '.'));
    else out[dotted] = value;
  }
  return out;
}

function setPath(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = target;
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
  node[parts.at(-1)!] = value;
}

/** Resolves flags > environment > config file > defaults into one Config. */
export function resolveConfig(input: ResolveInput = {}): ResolvedConfig {
  const env = input.env ?? process.env;
  const explicitFile = input.configFile === false ? undefined : (input.configFile ?? blankToUndefined(env.RAGLINE_CONFIG));
  const configFile = explicitFile ?? defaultConfigFile(env);
  const fileValues = input.configFile === false ? undefined : readConfigFile(configFile, explicitFile !== undefined);
  if (fileValues) {
    const unknown = Object.keys(fileValues).filter((key) => !SETTING_KEYS.includes(key));
    if (unknown.length > 0) {
      throw new UserError(`Unknown setting${unknown.length > 1 ? 's' : ''} in ${configFile}: ${unknown.join(', ')}.`, {
        hint: `Known settings: ${SETTING_KEYS.join(', ')}.`,
        exitCode: 2,
      });
    }
  }

  const values: Record<string, unknown> = {};
  const sources: Record<string, Source> = {};
  for (const setting of SETTINGS) {
    const flag = input.flags?.[setting.key];
    if (flag !== undefined && String(flag).trim() !== '') {
      values[setting.key] = setting.parse(String(flag), input.flagNames?.[setting.key] ?? `--${setting.key}`);
      sources[setting.key] = 'flag';
      continue;
    }
    const envName = setting.env.find((name) => blankToUndefined(env[name]) !== undefined);
    if (envName) {
      values[setting.key] = setting.parse(env[envName]!, envName);
      sources[setting.key] = `env:${envName}`;
      continue;
    }
    const fromFile = fileValues?.[setting.key];
    if (fromFile !== undefined && fromFile !== null && String(fromFile).trim() !== '') {
      values[setting.key] = setting.parse(String(fromFile), `${setting.key} in ${configFile}`);
      sources[setting.key] = `file:${configFile}`;
      continue;
    }
    const derived = setting.fallback?.(values);
    if (derived !== undefined) {
      // e.g. the rewrite model follows the chat model, wherever that came from
      values[setting.key] = derived;
      sources[setting.key] = sources['models.chat'] ?? 'default';
    } else if (DEFAULTS[setting.key] !== undefined) {
      values[setting.key] = DEFAULTS[setting.key];
      sources[setting.key] = 'default';
    }
  }
  if (values.db === undefined) {
    values.db = path.join(defaultDataDir(env), 'ragline.db');
    sources.db = 'default';
  }

  const config = {} as Record<string, unknown>;
  for (const [key, value] of Object.entries(values)) setPath(config, key, value);
  const resolved = config as unknown as Config;
  registerSecret(resolved.apiKey);
  registerSecret(resolved.embedding.apiKey);
  registerURLCredentials(resolved.baseURL);
  registerURLCredentials(resolved.embedding.baseURL);
  registerURLCredentials(resolved.db);
  if (resolved.chunk.overlap >= resolved.chunk.size) {
    throw new UserError(`chunk.overlap (${resolved.chunk.overlap}) must be smaller than chunk.size (${resolved.chunk.size}).`, { exitCode: 2 });
  }
  return { config: resolved, sources, configFile: fileValues ? configFile : undefined };
}

/** Whether the chat and rewrite go to an OpenAI-compatible server. */
export function usesRemoteChat(config: Config): boolean {
  if (config.provider === 'openai') return true;
  if (config.provider === 'offline') return false;
  return config.apiKey !== undefined || config.baseURL !== undefined;
}

/**
 * Whether embeddings come from an OpenAI-compatible server: chosen so, or left `auto`
 * with a server for the chat or one of their own (embedding.baseURL).
 */
export function usesRemoteEmbeddings(config: Config): boolean {
  if (config.embedProvider === 'openai') return true;
  if (config.embedProvider === 'offline') return false;
  return config.embedding.baseURL !== undefined || usesRemoteChat(config);
}

/**
 * The server embeddings go to and its key: embedding.baseURL and embedding.apiKey, each
 * defaulting to the chat's. The chat's key goes along only to the chat's host: a key
 * given for one server is not sent to another.
 */
export function embeddingServer(config: Config): { baseURL?: string; apiKey?: string } {
  const baseURL = config.embedding.baseURL ?? config.baseURL;
  if (config.embedding.apiKey !== undefined) return { baseURL, apiKey: config.embedding.apiKey };
  // The host name, not the port: a second server on the same machine (vLLM on 8000 and 8001) shares the key.
  const sameHost = config.embedding.baseURL === undefined || hostOf(config.embedding.baseURL) === hostOf(config.baseURL ?? 'https://api.openai.com/v1');
  return { baseURL, apiKey: sameHost ? config.apiKey : undefined };
}

function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** The config with the API keys replaced, safe to print or store. */
export function redacted(config: Config): Config {
  const embeddingKey = config.embedding.apiKey;
  return {
    ...config,
    apiKey: config.apiKey === undefined ? undefined : redactKey(config.apiKey),
    embedding: { ...config.embedding, apiKey: embeddingKey === undefined ? undefined : redactKey(embeddingKey) },
  };
}

export function redactKey(key: string): string {
  return key === '' ? '' : '*** (set, redacted)';
}

/** Which embedder a command uses, and why (shown by `config show` and `doctor`). */
export interface EmbedderChoice {
  remote: boolean;
  /** The embedding model, when remote. */
  model?: string;
  /** Why, in words: the setting that chose it, or the index it follows. */
  reason: string;
  /**
   * The prefixes the index was embedded with, when this is the model that built it: what it
   * recorded, or none for an index built before prefixes were recorded. Undefined otherwise.
   */
  indexPrefixes?: { query: string; document: string };
}

/** What an index records of its embedder (src/store/meta.ts IndexFingerprint has these fields). */
export interface IndexedWith {
  /** e.g. `offline:hash-v1-384` or `openai:nomic-embed-text`. */
  embedder: string;
  /** The prefixes its documents were embedded with; absent in an index built before they were recorded. */
  prefixes?: { query: string; document: string };
}

/**
 * The embedder for an index built with `index` (its recorded embedder id, e.g.
 * `offline:hash-v1-384` or `openai:nomic-embed-text`, or its fingerprint; undefined
 * for an empty index or a --reindex). Chosen explicitly (embedProvider offline or
 * openai), it is what was chosen. Left `auto`, an existing index keeps the embedder it
 * was built with: setting a key or a base URL for the chat model does not make an
 * offline index unusable. Without an index, `auto` follows `provider`.
 */
export function chooseEmbedder(resolved: ResolvedConfig, index?: string | IndexedWith): EmbedderChoice {
  const indexed = typeof index === 'string' ? { embedder: index } : index;
  const choice = chooseEmbedderModel(resolved, indexed?.embedder);
  if (choice.remote && indexed && indexed.embedder === `openai:${choice.model}`) {
    choice.indexPrefixes = indexed.prefixes ?? { query: '', document: '' };
  }
  return choice;
}

function chooseEmbedderModel(resolved: ResolvedConfig, indexEmbedder: string | undefined): EmbedderChoice {
  const { config, sources } = resolved;
  const remoteModel = (model: string) => ({ remote: true, model });
  if (config.embedProvider !== 'auto') {
    const reason = `embedProvider is ${config.embedProvider} (${sources.embedProvider ?? 'default'})`;
    return config.embedProvider === 'openai' ? { ...remoteModel(config.models.embedding), reason } : { remote: false, reason };
  }
  if (indexEmbedder?.startsWith('offline:')) {
    return { remote: false, reason: `embedProvider auto: the index was built with ${indexEmbedder}` };
  }
  const remote = usesRemoteEmbeddings(config);
  if (indexEmbedder?.startsWith('openai:') && remote) {
    // The recorded model, unless one is set explicitly (then a different one is a real mismatch).
    const explicit = sources['models.embedding'] !== undefined && sources['models.embedding'] !== 'default';
    const model = explicit ? config.models.embedding : indexEmbedder.slice('openai:'.length);
    return { ...remoteModel(model), reason: `embedProvider auto: the index was built with ${indexEmbedder}` };
  }
  const why = indexEmbedder ? `the index was built with ${indexEmbedder}, but no server is configured` : 'no index yet';
  return remote
    ? { ...remoteModel(config.models.embedding), reason: `embedProvider auto (${why}): follows the configured server` }
    : { remote: false, reason: `embedProvider auto (${why}): offline, as no server is configured` };
}

/**
 * The config with the embedder fixed to `choice` (what createEmbedder reads). The prefixes
 * the index recorded stand in for the model's, side by side, where none is set: a query is
 * embedded the way the documents were. One that is set and differs is refused at search and
 * ingest (src/store/meta.ts), as another model would be.
 */
export function withEmbedder(config: Config, choice: EmbedderChoice): Config {
  const recorded = choice.indexPrefixes;
  return {
    ...config,
    embedProvider: choice.remote ? 'openai' : 'offline',
    models: { ...config.models, embedding: choice.model ?? config.models.embedding },
    embedding: {
      ...config.embedding,
      queryPrefix: config.embedding.queryPrefix ?? recorded?.query,
      documentPrefix: config.embedding.documentPrefix ?? recorded?.document,
    },
  };
}
