// Configuration resolution: flags > environment > config file > defaults, with the
// source of every value, and errors that name the setting at fault. Every test
// passes its own env object and a temp config home, so the developer's setup is
// never read.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { redacted, resolveConfig, usesRemoteChat, usesRemoteEmbeddings, DEFAULTS } from '../src/config/index.js';
import { describeSettings, EXAMPLE_CONFIG } from '../src/cli/commands/config.js';
import { openAISettings } from '../src/providers/index.js';
import { UserError } from '../src/util/errors.js';
import { redactSecrets } from '../src/util/secrets.js';

let home: string;
let configFile: string;

beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-config-'));
  configFile = path.join(home, 'config', 'ragline', 'config.json');
});

afterEach(() => {
  fs.rmSync(home, { recursive: true, force: true });
});

/** An environment with nothing but the temp homes and `extra`. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { HOME: home, XDG_CONFIG_HOME: path.join(home, 'config'), XDG_DATA_HOME: path.join(home, 'data'), ...extra };
}

function writeConfig(value: unknown, file = configFile): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
}

function resolveError(run: () => unknown): UserError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return error as UserError;
  }
  throw new Error('expected a UserError');
}

describe('credentials inside configured URLs', () => {
  it('are secrets from the moment the settings are read: a server echoing one is redacted', () => {
    resolveConfig({ env: env({ RAGLINE_BASE_URL: 'http://admin:Chat9Pass@127.0.0.1:9/v1', RAGLINE_EMBED_BASE_URL: 'http://embedder:Emb3d%23Pass@127.0.0.1:8/v1' }) });
    expect(redactSecrets('401: wrong password Chat9Pass; Emb3d#Pass rejected')).toBe('401: wrong password [redacted]; [redacted] rejected');
  });
});

describe('precedence', () => {
  it('uses defaults when nothing is set, and says so', () => {
    const { config, sources, configFile: read } = resolveConfig({ env: env() });
    expect(config.models.chat).toBe(DEFAULTS['models.chat']);
    expect(config.chunk.size).toBe(DEFAULTS['chunk.size']);
    expect(config.db).toBe(path.join(home, 'data', 'ragline', 'ragline.db'));
    expect(sources['models.chat']).toBe('default');
    expect(sources.db).toBe('default');
    expect(config.apiKey).toBeUndefined();
    expect(config.baseURL).toBeUndefined();
    expect(read).toBeUndefined();
  });

  it('finds the default config file and database under the HOME of the env it is given', () => {
    const bare = { HOME: home };
    fs.mkdirSync(path.join(home, '.config', 'ragline'), { recursive: true });
    fs.writeFileSync(path.join(home, '.config', 'ragline', 'config.json'), JSON.stringify({ retrieval: { k: 4 } }));
    const { config } = resolveConfig({ env: bare });
    expect(config.retrieval.k).toBe(4);
    expect(config.db).toBe(path.join(home, '.local', 'share', 'ragline', 'ragline.db'));
  });

  it('takes the config file over defaults and records the file as the source', () => {
    writeConfig({ models: { chat: 'from-file' }, retrieval: { k: 9 } });
    const { config, sources, configFile: read } = resolveConfig({ env: env() });
    expect(config.models.chat).toBe('from-file');
    expect(config.retrieval.k).toBe(9);
    expect(sources['models.chat']).toBe(`file:${configFile}`);
    expect(sources['retrieval.k']).toBe(`file:${configFile}`);
    expect(sources['chunk.size']).toBe('default');
    expect(read).toBe(configFile);
  });

  it('takes the environment over the config file', () => {
    writeConfig({ models: { chat: 'from-file' }, retrieval: { k: 9 } });
    const { config, sources } = resolveConfig({ env: env({ RAGLINE_CHAT_MODEL: 'from-env', RAGLINE_K: '3' }) });
    expect(config.models.chat).toBe('from-env');
    expect(config.retrieval.k).toBe(3);
    expect(sources['models.chat']).toBe('env:RAGLINE_CHAT_MODEL');
    expect(sources['retrieval.k']).toBe('env:RAGLINE_K');
  });

  it('takes flags over the environment and the config file', () => {
    writeConfig({ models: { chat: 'from-file' } });
    const { config, sources } = resolveConfig({
      env: env({ RAGLINE_CHAT_MODEL: 'from-env' }),
      flags: { 'models.chat': 'from-flag', 'retrieval.k': 7 },
    });
    expect(config.models.chat).toBe('from-flag');
    expect(config.retrieval.k).toBe(7);
    expect(sources['models.chat']).toBe('flag');
    expect(sources['retrieval.k']).toBe('flag');
  });

  it('treats blank environment variables and blank flags as unset', () => {
    writeConfig({ models: { chat: 'from-file' } });
    const { config, sources } = resolveConfig({
      env: env({ RAGLINE_CHAT_MODEL: '   ', OPENAI_API_KEY: '', RAGLINE_BASE_URL: '' }),
      flags: { 'models.chat': '' },
    });
    expect(config.models.chat).toBe('from-file');
    expect(sources['models.chat']).toBe(`file:${configFile}`);
    expect(config.apiKey).toBeUndefined();
    expect(config.baseURL).toBeUndefined();
    expect(usesRemoteChat(config)).toBe(false);
  });

  it('honours OPENAI_API_KEY and OPENAI_BASE_URL', () => {
    const { config, sources } = resolveConfig({
      env: env({ OPENAI_API_KEY: 'sk-openai', OPENAI_BASE_URL: 'http://localhost:11434/v1/' }),
    });
    expect(config.apiKey).toBe('sk-openai');
    expect(config.baseURL).toBe('http://localhost:11434/v1');
    expect(sources.apiKey).toBe('env:OPENAI_API_KEY');
    expect(sources.baseURL).toBe('env:OPENAI_BASE_URL');
    expect(usesRemoteChat(config)).toBe(true);
    expect(usesRemoteEmbeddings(config)).toBe(true);
  });

  it('prefers RAGLINE_* over OPENAI_* when both are set', () => {
    const { config, sources } = resolveConfig({
      env: env({
        OPENAI_API_KEY: 'sk-openai',
        RAGLINE_API_KEY: 'sk-ragline',
        OPENAI_BASE_URL: 'http://openai.example/v1',
        RAGLINE_BASE_URL: 'http://ragline.example/v1',
      }),
    });
    expect(config.apiKey).toBe('sk-ragline');
    expect(config.baseURL).toBe('http://ragline.example/v1');
    expect(sources.apiKey).toBe('env:RAGLINE_API_KEY');
    expect(sources.baseURL).toBe('env:RAGLINE_BASE_URL');
  });

  it('falls back to OPENAI_* when the RAGLINE_* variable is blank', () => {
    const { config, sources } = resolveConfig({ env: env({ RAGLINE_API_KEY: ' ', OPENAI_API_KEY: 'sk-openai' }) });
    expect(config.apiKey).toBe('sk-openai');
    expect(sources.apiKey).toBe('env:OPENAI_API_KEY');
  });

  it('lets the rewrite model follow the chat model unless it is set itself', () => {
    const follows = resolveConfig({ env: env({ RAGLINE_CHAT_MODEL: 'llama3.1' }) });
    expect(follows.config.models.rewrite).toBe('llama3.1');
    expect(follows.sources['models.rewrite']).toBe('env:RAGLINE_CHAT_MODEL');
    const own = resolveConfig({ env: env({ RAGLINE_CHAT_MODEL: 'llama3.1', RAGLINE_REWRITE_MODEL: 'qwen2.5:0.5b' }) });
    expect(own.config.models.rewrite).toBe('qwen2.5:0.5b');
    expect(own.sources['models.rewrite']).toBe('env:RAGLINE_REWRITE_MODEL');
  });

  it('reads the file named by RAGLINE_CONFIG, and the explicit --config file over it', () => {
    const viaEnv = path.join(home, 'elsewhere.json');
    const viaFlag = path.join(home, 'flagged.json');
    writeConfig({ retrieval: { k: 11 } }, viaEnv);
    writeConfig({ retrieval: { k: 12 } }, viaFlag);
    expect(resolveConfig({ env: env({ RAGLINE_CONFIG: viaEnv }) }).config.retrieval.k).toBe(11);
    const flagged = resolveConfig({ env: env({ RAGLINE_CONFIG: viaEnv }), configFile: viaFlag });
    expect(flagged.config.retrieval.k).toBe(12);
    expect(flagged.sources['retrieval.k']).toBe(`file:${viaFlag}`);
  });

  it('accepts dotted keys in the file as well as nested objects', () => {
    writeConfig({ 'models.embedding': 'nomic-embed-text', chunk: { size: 1000, overlap: 100 } });
    const { config } = resolveConfig({ env: env() });
    expect(config.models.embedding).toBe('nomic-embed-text');
    expect(config.chunk).toEqual({ size: 1000, overlap: 100 });
  });
});

describe('search paths and retry tuning', () => {
  it('default to auto, two vector threads and a 500 ms first backoff', () => {
    const { config, sources } = resolveConfig({ env: env() });
    expect(config.search).toEqual({ vector: 'auto', keyword: 'auto', vectorThreads: 2 });
    expect(config.request.retryBaseMs).toBe(500);
    expect(sources['search.keyword']).toBe('default');
  });

  it('keep their environment names, above the config file', () => {
    writeConfig({ search: { vector: 'memory', keyword: 'memory', vectorThreads: 2 }, request: { retryBaseMs: 100 } });
    const { config, sources } = resolveConfig({
      env: env({ RAGLINE_VECTOR_SEARCH: 'vec0', RAGLINE_KEYWORD_SEARCH: 'FTS5', RAGLINE_VECTOR_THREADS: '1', RAGLINE_RETRY_BASE_MS: '1' }),
    });
    expect(config.search).toEqual({ vector: 'vec0', keyword: 'fts5', vectorThreads: 1 });
    expect(config.request.retryBaseMs).toBe(1);
    expect(sources['search.vector']).toBe('env:RAGLINE_VECTOR_SEARCH');
    expect(sources['search.keyword']).toBe('env:RAGLINE_KEYWORD_SEARCH');
    expect(sources['search.vectorThreads']).toBe('env:RAGLINE_VECTOR_THREADS');
    expect(sources['request.retryBaseMs']).toBe('env:RAGLINE_RETRY_BASE_MS');
  });

  it('are read from the config file, and listed by `config show`', () => {
    writeConfig({ search: { keyword: 'memory' }, request: { retryBaseMs: 250 } });
    const resolved = resolveConfig({ env: env() });
    expect(resolved.config.search.keyword).toBe('memory');
    expect(resolved.config.request.retryBaseMs).toBe(250);
    const shown = describeSettings(resolved);
    expect(shown['search.keyword']).toEqual({ value: 'memory', source: `file:${configFile}` });
    expect(shown['request.retryBaseMs']).toEqual({ value: 250, source: `file:${configFile}` });
    expect(shown['search.vector']).toEqual({ value: 'auto', source: 'default' });
    expect(shown['search.vectorThreads']).toEqual({ value: 2, source: 'default' });
  });

  it('refuse a value that is not one of the paths, naming the variable', () => {
    const error = resolveError(() => resolveConfig({ env: env({ RAGLINE_VECTOR_SEARCH: 'faiss' }) }));
    expect(error.message).toContain('RAGLINE_VECTOR_SEARCH');
    expect(error.message).toMatch(/auto, vec0, memory/);
    expect(resolveError(() => resolveConfig({ env: env({ RAGLINE_VECTOR_THREADS: '3' }) })).message).toContain('RAGLINE_VECTOR_THREADS');
    expect(resolveError(() => resolveConfig({ env: env({ RAGLINE_RETRY_BASE_MS: '-1' }) })).message).toContain('RAGLINE_RETRY_BASE_MS');
  });

  it('reach the providers: the retry tuning is what the OpenAI-compatible models back off by', () => {
    const { config } = resolveConfig({ env: env({ RAGLINE_BASE_URL: 'http://127.0.0.1:9/v1', RAGLINE_RETRY_BASE_MS: '7' }) });
    expect(openAISettings(config, config.models.chat).retry?.baseDelayMs).toBe(7);
  });
});

describe('invalid configuration', () => {
  it('names the environment variable holding an invalid value', () => {
    const error = resolveError(() => resolveConfig({ env: env({ RAGLINE_K: 'five' }) }));
    expect(error.message).toContain('RAGLINE_K');
    expect(error.message).toContain('"five"');
    expect(error.exitCode).toBe(2);
  });

  it('names the setting and the file for an invalid value in the config file', () => {
    writeConfig({ request: { maxRetries: -1 } });
    const error = resolveError(() => resolveConfig({ env: env() }));
    expect(error.message).toContain('request.maxRetries');
    expect(error.message).toContain(configFile);
  });

  it('names the flag for an invalid flag value', () => {
    const error = resolveError(() => resolveConfig({ env: env(), flags: { provider: 'anthropic' } }));
    expect(error.message).toContain('--provider');
    expect(error.message).toMatch(/auto, offline, openai/);
  });

  it('refuses a base URL that is not http(s)', () => {
    const error = resolveError(() => resolveConfig({ env: env({ OPENAI_BASE_URL: 'localhost:11434' }) }));
    expect(error.message).toContain('OPENAI_BASE_URL');
  });

  it('refuses an unknown key in the config file and lists the known ones', () => {
    writeConfig({ models: { chat: 'x', embed: 'typo' } });
    const error = resolveError(() => resolveConfig({ env: env() }));
    expect(error.message).toContain('models.embed');
    expect(error.message).toContain(configFile);
    expect(error.hint).toContain('models.embedding');
  });

  it('refuses a config file that is not JSON, naming the file', () => {
    writeConfig('{ "models": ');
    const error = resolveError(() => resolveConfig({ env: env() }));
    expect(error.message).toContain(configFile);
    expect(error.message).toMatch(/not valid JSON/);
  });

  it('refuses a missing file named explicitly, but not a missing default file', () => {
    expect(() => resolveConfig({ env: env() })).not.toThrow();
    const error = resolveError(() => resolveConfig({ env: env(), configFile: path.join(home, 'missing.json') }));
    expect(error.message).toContain('missing.json');
  });

  it('refuses an overlap that is not smaller than the chunk size', () => {
    const error = resolveError(() => resolveConfig({ env: env({ RAGLINE_CHUNK_SIZE: '100', RAGLINE_CHUNK_OVERLAP: '100' }) }));
    expect(error.message).toContain('chunk.overlap');
  });
});

describe('the example config file in `ragline config --help`', () => {
  it('uses only known settings with valid values', () => {
    writeConfig(EXAMPLE_CONFIG);
    const { config, sources } = resolveConfig({ env: env() });
    expect(config.baseURL).toBe('http://localhost:11434/v1');
    expect(config.models.embedding).toBe('nomic-embed-text');
    expect(config.history.retention).toBe('30d');
    expect(sources['request.timeoutMs']).toBe(`file:${configFile}`);
  });
});

describe('redaction', () => {
  it('replaces the API key when the config is printed or stored', () => {
    const { config } = resolveConfig({ env: env({ OPENAI_API_KEY: 'sk-secret-value-123' }) });
    expect(JSON.stringify(redacted(config))).not.toContain('sk-secret-value-123');
  });
});
