// `ragline config show|path` and `ragline doctor` through the CLI run in-process,
// with isolated HOME/XDG folders and a real
// OpenAI-compatible server on 127.0.0.1.

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ingestFolder, openWorkspace } from '../src/app/index.js';
import { DEFAULTS } from '../src/config/index.js';
import { openDatabase } from '../src/store/db.js';
import { isolatedEnv, ragline, runCli, tempDir, writeTinyDocs, type CliResult } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

const ENV_KEY = 'sk-env-SECRET-7f3a9c1e5b2d4086';
const FILE_KEY = 'sk-file-SECRET-0d8e6b4a2c1f9735';

let home: string;
let docs: string;

beforeAll(() => {
  docs = writeTinyDocs();
});

afterAll(() => fs.rmSync(docs, { recursive: true, force: true }));

beforeEach(() => {
  home = tempDir();
});

afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

const configFile = () => path.join(home, 'config', 'ragline', 'config.json');
const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

function writeConfig(value: unknown): void {
  fs.mkdirSync(path.dirname(configFile()), { recursive: true });
  fs.writeFileSync(configFile(), JSON.stringify(value));
}

function run(args: string[], extra: Record<string, string | undefined> = {}): Promise<CliResult> {
  return ragline(args, { env: isolatedEnv(home, extra) });
}

function expectNoSecret(result: CliResult, secret: string): void {
  expect(result.stdout).not.toContain(secret);
  expect(result.stderr).not.toContain(secret);
}

interface DoctorCheck {
  id: string;
  status: 'ok' | 'warn' | 'fail';
  message: string;
  fix?: string;
}

function check(report: { checks: DoctorCheck[] }, id: string): DoctorCheck {
  const found = report.checks.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`no check "${id}" in ${JSON.stringify(report.checks.map((c) => c.id))}`);
  return found;
}

describe('ragline config show', () => {
  it('reports each value with its source: flag, env, file, default', async () => {
    writeConfig({ retrieval: { k: 8 }, models: { embedding: 'nomic-embed-text' } });
    const result = await run(['--chat-model', 'from-flag', 'config', 'show', '--json'], { RAGLINE_REWRITE: 'never' });
    expect(result.code).toBe(0);
    const shown = JSON.parse(result.stdout);
    expect(shown.configFile).toBe(configFile());
    expect(shown.configFileRead).toBe(true);
    expect(shown.settings['models.chat']).toEqual({ value: 'from-flag', source: 'flag' });
    expect(shown.settings['rewrite.policy']).toEqual({ value: 'never', source: 'env:RAGLINE_REWRITE' });
    expect(shown.settings['retrieval.k']).toEqual({ value: 8, source: `file:${configFile()}` });
    expect(shown.settings['models.embedding']).toEqual({ value: 'nomic-embed-text', source: `file:${configFile()}` });
    expect(shown.settings['chunk.size']).toEqual({ value: DEFAULTS['chunk.size'], source: 'default' });
    expect(shown.settings.baseURL).toEqual({ value: null, source: 'unset' });
    expect(shown.settings.apiKey).toEqual({ value: null, source: 'unset', set: false });
  });

  it('never prints an API key given through the environment', async () => {
    for (const args of [['config', 'show', '--json'], ['config', 'show']]) {
      const result = await run(args, { OPENAI_API_KEY: ENV_KEY });
      expect(result.code).toBe(0);
      expectNoSecret(result, ENV_KEY);
      expect(result.stdout).toContain('env:OPENAI_API_KEY');
    }
    const shown = JSON.parse((await run(['config', 'show', '--json'], { OPENAI_API_KEY: ENV_KEY })).stdout);
    expect(shown.settings.apiKey).toEqual({ value: 'redacted', source: 'env:OPENAI_API_KEY', set: true });
  });

  it('never prints an API key given through the config file', async () => {
    writeConfig({ apiKey: FILE_KEY, baseURL: 'http://127.0.0.1:9999/v1' });
    for (const args of [['config', 'show', '--json'], ['config', 'show']]) {
      const result = await run(args);
      expect(result.code).toBe(0);
      expectNoSecret(result, FILE_KEY);
    }
    const shown = JSON.parse((await run(['config', 'show', '--json'])).stdout);
    expect(shown.settings.apiKey).toEqual({ value: 'redacted', source: `file:${configFile()}`, set: true });
    expect(shown.settings.baseURL.value).toBe('http://127.0.0.1:9999/v1');
  });

  it('never prints a password inside a base URL: config show, --json and an error quoting the URL', async () => {
    const env = { RAGLINE_BASE_URL: 'http://admin:Pa55w0rd@127.0.0.1:9999/v1', RAGLINE_EMBED_BASE_URL: 'http://embed:Emb3d%40Pass@127.0.0.1:9998/v1' };
    for (const args of [['config', 'show', '--json'], ['config', 'show']]) {
      const result = await run(args, env);
      expect(result.code, result.stderr).toBe(0);
      for (const secret of ['Pa55w0rd', 'Emb3d%40Pass', 'Emb3d@Pass']) expectNoSecret(result, secret);
      expect(result.stdout).toContain('http://admin:[redacted]@127.0.0.1:9999/v1'); // the rest of the URL is shown
    }
    const shown = JSON.parse((await run(['config', 'show', '--json'], env)).stdout);
    expect(shown.settings.baseURL.value).toBe('http://admin:[redacted]@127.0.0.1:9999/v1');
    // Refused before the settings are read: the message quotes the URL, the writer still removes its password.
    const refused = await run(['config', 'show'], { RAGLINE_BASE_URL: 'ftp://admin:Ftp4ssw0rd@files.example/v1', RAGLINE_DEBUG: '1' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('ftp://admin:[redacted]@files.example/v1');
    expectNoSecret(refused, 'Ftp4ssw0rd');
  });

  it('stops on an invalid value, naming the setting, with exit code 2', async () => {
    const result = await run(['config', 'show'], { RAGLINE_MAX_RETRIES: 'lots' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('RAGLINE_MAX_RETRIES');
    expect(result.stderr.trim().split('\n')[0]).toMatch(/^error: /);
  });

  it('refuses an unknown key in the config file', async () => {
    writeConfig({ model: 'gpt-4o' });
    const result = await run(['config', 'show']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Unknown setting in ${configFile()}: model.`);
  });

  it('shows an example config file in its help', async () => {
    const result = await run(['config', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('"baseURL": "http://localhost:11434/v1"');
    expect(result.stdout).toContain('OPENAI_API_KEY');
  });
});

describe('a config file that is not a regular file', () => {
  // As a process: a FIFO blocked the read of the settings of every command, /dev/zero was read until memory ran out.
  it('a FIFO or a device as the config file (--config, RAGLINE_CONFIG or the default path) is refused with exit 2, not read', async () => {
    const fifo = path.join(home, 'config.fifo');
    execFileSync('mkfifo', [fifo]);
    fs.mkdirSync(path.dirname(configFile()), { recursive: true });
    execFileSync('mkfifo', [configFile()]);
    const cases: Array<[string[], Record<string, string>, string, string]> = [
      [['--config', fifo, 'stats'], {}, fifo, 'a FIFO'],
      [['stats'], { RAGLINE_CONFIG: fifo }, fifo, 'a FIFO'],
      [['search', 'webhooks'], {}, configFile(), 'a FIFO'],
      [['--config', '/dev/zero', 'stats'], {}, '/dev/zero', 'a device'],
    ];
    for (const [args, extra, file, what] of cases) {
      const result = await runCli(args, { env: isolatedEnv(home, extra), timeoutMs: 10_000 });
      expect(result.code, `${args.join(' ')}: ${result.signal ?? ''} ${result.stderr}`).toBe(2);
      expect(result.stderr).toContain(`error: The config file ${file} is ${what}, not a regular file.`);
      expect(result.stderr).toContain('Point --config or RAGLINE_CONFIG at a JSON file');
    }
  });
});

describe('ragline --version and --help', () => {
  it('prints the version alone, and the help lists every command', async () => {
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const command of ['ingest', 'chat', 'ask', 'search', 'eval', 'stats', 'documents', 'forget', 'prune', 'replay', 'sessions', 'config', 'doctor']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
  });
});

describe('ragline config path', () => {
  it('prints the default location, or the one given by RAGLINE_CONFIG or --config', async () => {
    const byDefault = await run(['config', 'path']);
    expect(byDefault.code).toBe(0);
    expect(byDefault.stdout.trim()).toBe(configFile());
    expect(byDefault.stderr).toContain('does not exist yet');

    const other = path.join(home, 'other.json');
    fs.writeFileSync(other, '{}');
    const viaEnv = await run(['config', 'path'], { RAGLINE_CONFIG: other });
    expect(viaEnv.stdout.trim()).toBe(other);
    expect(viaEnv.stderr).toBe('');
    const viaFlag = await run(['--config', '/tmp/flagged.json', 'config', 'path'], { RAGLINE_CONFIG: other });
    expect(viaFlag.stdout.trim()).toBe('/tmp/flagged.json');
  });
});

describe('ragline doctor, offline', () => {
  it('says clearly that no database exists yet, without creating one', async () => {
    const result = await run(['doctor', '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(true);
    expect(check(report, 'database')).toMatchObject({ status: 'warn', message: `No database exists yet at ${dbFile()}.` });
    expect(check(report, 'database').fix).toContain('ragline ingest');
    expect(check(report, 'provider').status).toBe('ok');
    expect(report.provider.mode).toBe('offline');
    expect(report.versions.sqlite).toMatch(/^3\.\d+/);
    expect(report.versions.sqliteVec).toMatch(/^v\d+\.\d+/);
    expect(fs.existsSync(dbFile())).toBe(false);

    const text = await run(['doctor']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/warn\s+database\s+No database exists yet/);
    expect(text.stdout).toContain('fix: Run `ragline ingest <folder>`');
  });

  it('reports schema, fingerprint and matching counts of an ingested database', async () => {
    expect((await run(['ingest', docs])).code).toBe(0);
    const result = await run(['doctor', '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.database).toMatchObject({ path: dbFile(), exists: true, schemaVersion: report.database.expectedSchemaVersion });
    expect(report.index.counts.documents).toBe(2);
    const { chunks, ftsRows, vectors } = report.index.counts;
    expect(chunks).toBeGreaterThan(0);
    expect([ftsRows, vectors]).toEqual([chunks, chunks]);
    expect(report.index.fingerprint.embedder).toMatch(/^offline:/);
    expect(check(report, 'index').status).toBe('ok');
    expect(check(report, 'embedder')).toMatchObject({ status: 'ok' });
  });

  it('warns of a rebuild left unfinished and of the lock of an ingest whose process is gone, each with what to do; a running ingest is only said', async () => {
    const other = path.join(home, 'other');
    fs.mkdirSync(other);
    fs.writeFileSync(path.join(other, 'bees.md'), '# Bees\n\nBees make honey.\n');
    expect((await run(['ingest', docs])).code).toBe(0);
    expect((await run(['ingest', other])).code).toBe(0);
    // A rebuild stopped once the folder given is read: the other folder is still to be rebuilt.
    const workspace = openWorkspace({ db: dbFile() });
    try {
      const controller = new AbortController();
      const stopped = await ingestFolder(workspace, docs, {
        reindex: true,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.filesTotal > 0 && p.filesDone === p.filesTotal) controller.abort();
        },
      });
      expect(stopped.interrupted).toBe(true);
    } finally {
      await workspace.close();
    }
    const setLock = (pid: number, startedAt: string) => {
      const db = openDatabase(dbFile());
      db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('ingest.lock', ?)").run(JSON.stringify({ pid, startedAt }));
      db.close();
    };
    const doctor = async () => {
      const result = await run(['doctor', '--json']);
      return { code: result.code, report: JSON.parse(result.stdout) as { checks: DoctorCheck[] } };
    };
    const gone = spawnSync(process.execPath, ['-e', '']).pid!; // a process that has ended
    const now = new Date().toISOString();

    setLock(gone, now);
    let { code, report } = await doctor();
    expect(code).toBe(0);
    expect(check(report, 'rebuild')).toMatchObject({ status: 'warn' });
    expect(check(report, 'rebuild').message).toContain(`has 1 folder to read again: ${fs.realpathSync(other)} (1 document)`);
    expect(check(report, 'rebuild').fix).toContain('Run `ragline ingest <folder> --reindex` again');
    expect(check(report, 'lock')).toMatchObject({ status: 'warn' });
    expect(check(report, 'lock').message).toContain(`An ingest (pid ${gone}, started ${now}) did not finish (its process is gone`);
    expect(check(report, 'lock').fix).toContain('it takes the lock over');

    // A live process other than this one: an ingest at work, whose rebuild is under way.
    setLock(process.ppid, now);
    ({ code, report } = await doctor());
    expect(code).toBe(0);
    expect(check(report, 'lock')).toMatchObject({ status: 'ok', message: `An ingest (pid ${process.ppid}, started ${now}) is writing to this database now: the counts may change until it finishes.` });
    expect(check(report, 'rebuild')).toMatchObject({ status: 'ok' });

    // Taken before the system started: the pid is another process's now, and ingest would wait for it forever.
    setLock(process.ppid, '2001-01-01T00:00:00.000Z');
    ({ code, report } = await doctor());
    expect(code).toBe(1);
    expect(check(report, 'lock')).toMatchObject({ status: 'fail' });
    expect(check(report, 'lock').fix).toContain(`sqlite3 ${dbFile()} "DELETE FROM meta WHERE key = 'ingest.lock'"`);
    expect(check(report, 'rebuild')).toMatchObject({ status: 'warn' });

    // What the warnings say to do clears them.
    setLock(gone, now);
    expect((await run(['ingest', docs, '--reindex'])).code).toBe(0);
    ({ code, report } = await doctor());
    expect(code).toBe(0);
    expect(report.checks.map((c) => c.id)).not.toContain('lock');
    expect(report.checks.map((c) => c.id)).not.toContain('rebuild');
  });

  it('fails on a damaged keyword index, which a question then reports as a damaged file, not an unexpected error', async () => {
    expect((await run(['ingest', docs])).code).toBe(0);
    expect((await run(['doctor', '--json'])).stdout).not.toContain('"keywords"');
    const db = openDatabase(dbFile());
    db.unsafeMode(true); // SQLite's defensive mode forbids writing an index's own tables
    db.exec('DELETE FROM chunks_fts_data WHERE id = (SELECT max(id) FROM chunks_fts_data)'); // a page of it lost
    db.unsafeMode(false);
    db.close();
    const result = await run(['doctor', '--json']);
    expect(result.code).toBe(1);
    const keywords = check(JSON.parse(result.stdout), 'keywords');
    expect(keywords.status).toBe('fail');
    expect(keywords.message).toContain('The keyword index cannot be read whole');
    expect(keywords.fix).toContain('--reindex');
    const asked = await run(['ask', 'How do I rotate an API key?']);
    // (A file this small is refused at open; a large one, which is not checked whole at open, fails at the search.)
    expect(asked.stderr).toMatch(/corrupted/);
    expect(asked.code).not.toBe(0);
    expect(asked.stderr).not.toContain('Unexpected error');
  });

  it('fails when the index counts disagree, with the --reindex fix', async () => {
    expect((await run(['ingest', docs])).code).toBe(0);
    const db = openDatabase(dbFile());
    db.exec('DELETE FROM vec_chunks WHERE rowid = (SELECT min(id) FROM chunks)');
    db.close();
    const result = await run(['doctor', '--json']);
    expect(result.code).toBe(1);
    const index = check(JSON.parse(result.stdout), 'index');
    expect(index.status).toBe('fail');
    expect(index.message).toMatch(/inconsistent: \d+ chunks? but \d+ vectors?/);
    expect(index.fix).toContain('--reindex');
  });

  it('fails on a keyword index of an earlier text version or an earlier offline embedder, with what fixes each', async () => {
    expect((await run(['ingest', docs])).code).toBe(0);
    const db = openDatabase(dbFile());
    const fingerprint = JSON.parse(db.prepare("SELECT value FROM meta WHERE key = 'index.fingerprint'").pluck().get() as string);
    const { text: _text, ...older } = fingerprint;
    db.prepare("UPDATE meta SET value = ? WHERE key = 'index.fingerprint'").run(JSON.stringify({ ...older, embedder: 'offline:hash-v1-384' }));
    db.close();
    const result = await run(['doctor', '--json']);
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(check(report, 'keywords')).toMatchObject({ status: 'fail' });
    expect(check(report, 'keywords').fix).toContain('Run `ragline ingest <folder>` once');
    expect(check(report, 'embedder').fix).toBe('Rebuild it with `ragline ingest <folder> --reindex` (sessions are kept).');
  });

  it('warns on a keyword index of text version 2 (camelCase names whole): searched, rewritten by the next ingest', async () => {
    expect((await run(['ingest', docs])).code).toBe(0);
    const db = openDatabase(dbFile());
    const fingerprint = JSON.parse(db.prepare("SELECT value FROM meta WHERE key = 'index.fingerprint'").pluck().get() as string);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'index.fingerprint'").run(JSON.stringify({ ...fingerprint, text: 2 }));
    db.close();
    const report = JSON.parse((await run(['doctor', '--json'])).stdout);
    expect(check(report, 'keywords')).toMatchObject({ status: 'warn' });
    expect(check(report, 'keywords').message).toContain('camelCase');
    expect((await run(['search', 'API key', '--json'])).code).toBe(0);
    expect((await run(['ingest', docs])).code).toBe(0);
    expect(JSON.parse((await run(['doctor', '--json'])).stdout).checks.some((c: { id: string }) => c.id === 'keywords')).toBe(false);
  });

  it('fails when the configured embedder is not the one that built the index', async () => {
    const server = await startOpenAIServer();
    try {
      expect((await run(['ingest', docs])).code).toBe(0);
      const result = await run(['doctor', '--json'], { RAGLINE_EMBED_PROVIDER: 'openai', OPENAI_BASE_URL: server.baseURL, RAGLINE_EMBED_MODEL: 'fake-embed-model' });
      expect(result.code).toBe(1);
      const embedder = check(JSON.parse(result.stdout), 'embedder');
      expect(embedder.status).toBe('fail');
      expect(embedder.message).toContain('openai:fake-embed-model');
      expect(embedder.fix).toContain('--reindex');
    } finally {
      await server.close();
    }
  });
});

describe('ragline doctor, with a server', () => {
  let server: FakeOpenAI;
  beforeEach(async () => {
    server = await startOpenAIServer({ models: ['fake-chat-model', 'fake-embed-model', 'other-model'] });
  });
  afterEach(() => server.close());

  const remote = (extra: Record<string, string> = {}) => ({
    OPENAI_BASE_URL: server.baseURL,
    OPENAI_API_KEY: ENV_KEY,
    RAGLINE_CHAT_MODEL: 'fake-chat-model',
    RAGLINE_EMBED_MODEL: 'fake-embed-model',
    ...extra,
  });

  it('reaches the server, shows its model list and finds the configured models', async () => {
    const result = await run(['doctor', '--json'], remote());
    expect(result.code).toBe(0);
    expectNoSecret(result, ENV_KEY);
    const report = JSON.parse(result.stdout);
    expect(report.provider).toMatchObject({ mode: 'openai', baseURL: server.baseURL, reachable: true, apiKeySet: true });
    expect(report.provider.serverModels).toEqual(['fake-chat-model', 'fake-embed-model', 'other-model']);
    expect(check(report, 'server').status).toBe('ok');
    expect(check(report, 'model.chat').status).toBe('ok');
    expect(check(report, 'model.embedding').status).toBe('ok');
    // Besides the model list: what the server says of itself (GETs), one timed reply from the answer model,
    // and one query and one document embedded (the embeddings round trip).
    expect(server.requests.every((request) => request.method === 'GET' || request.route === 'chat' || request.route === 'embeddings')).toBe(true);
    expect(server.requestsTo('chat')).toHaveLength(1);
    expect(server.requestsTo('embeddings')).toHaveLength(2);
    expect(check(report, 'embeddings').status).toBe('ok');
    expect(server.requestsTo('chat')[0]!.body).toMatchObject({ max_tokens: 16, stream: true });
    expect(server.requests.every((request) => request.headers.authorization === `Bearer ${ENV_KEY}`)).toBe(true);
    expect(report.provider.roles).toEqual([
      expect.objectContaining({ role: 'answer', model: 'fake-chat-model', serverKind: 'unknown', contextTokens: null, roundTripMs: expect.any(Number) }),
    ]);
    // A bare server says nothing of the context window: the fix is the setting.
    expect(check(report, 'roundtrip.answer')).toMatchObject({ status: 'warn', fix: expect.stringContaining('RAGLINE_CONTEXT_TOKENS') });
  });

  it("shows each role's server, context window and round trip (Ollama)", async () => {
    const ollama = await startOpenAIServer({ models: ['qwen3:8b', 'llama3.2:3b', 'nomic-embed-text'], flavor: 'ollama', contextTokens: 8192, loaded: ['qwen3:8b', 'llama3.2:3b'] });
    try {
      const result = await run(['doctor', '--json'], remote({ RAGLINE_BASE_URL: ollama.baseURL, RAGLINE_CHAT_MODEL: 'qwen3:8b', RAGLINE_REWRITE_MODEL: 'llama3.2:3b', RAGLINE_EMBED_MODEL: 'nomic-embed-text' }));
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout);
      expect(report.provider.roles.map((role: any) => [role.role, role.model, role.serverKind, role.contextTokens])).toEqual([
        ['answer', 'qwen3:8b', 'ollama', 8192],
        ['rewrite', 'llama3.2:3b', 'ollama', 8192],
      ]);
      expect(check(report, 'roundtrip.rewrite').message).toMatch(/^The rewrite model "llama3\.2:3b" at .* \(ollama\) replied in \d+ ms; context 8,192 tokens \(Ollama \/api\/ps\)\.$/);
    } finally {
      await ollama.close();
    }
  });

  it('warns about a configured model the server does not list, naming it and the fix', async () => {
    const result = await run(['doctor', '--json'], remote({ RAGLINE_EMBED_MODEL: 'nomic-embed-text' }));
    expect(result.code).toBe(0);
    const embedding = check(JSON.parse(result.stdout), 'model.embedding');
    expect(embedding.status).toBe('warn');
    expect(embedding.message).toContain('"nomic-embed-text"');
    expect(embedding.message).toContain('fake-embed-model');
    expect(embedding.fix).toContain('RAGLINE_EMBED_MODEL');

    const text = await run(['doctor'], remote({ RAGLINE_EMBED_MODEL: 'nomic-embed-text' }));
    expect(text.stdout).toMatch(/warn\s+model\.embedding\s+The embedding model "nomic-embed-text" is not in the server's model list/);
  });

  it('fails when the server rejects the key, without printing the key', async () => {
    server.queueFailure({ route: 'models', status: 401, body: { error: { message: `Incorrect API key provided: ${ENV_KEY}` } } });
    const result = await run(['doctor'], remote());
    expect(result.code).toBe(1);
    expectNoSecret(result, ENV_KEY);
    expect(result.stdout).toContain(`fail  server`);
    expect(result.stdout).toContain(`The server at ${server.baseURL} rejected the API key (401).`);
  });

  it('warns, not fails, when the server answers but has no model list', async () => {
    server.queueFailure({ route: 'models', status: 404, body: { error: { message: 'Not found' } } });
    const result = await run(['doctor', '--json'], remote());
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(check(report, 'server').status).toBe('warn');
    expect(report.provider.reachable).toBe(true);
  });

  it('fails with "connection refused" naming the base URL when nothing listens there', async () => {
    const closed = server.baseURL;
    await server.close();
    server = await startOpenAIServer(); // for afterEach
    const result = await run(['doctor', '--json'], remote({ OPENAI_BASE_URL: closed }));
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout);
    expect(report.provider.reachable).toBe(false);
    expect(check(report, 'server')).toMatchObject({ status: 'fail', message: `Could not connect to ${closed}: connection refused.` });
    expect(check(report, 'server').fix).toMatch(/server running/);
  });

  it('gives up on a server that does not answer within --timeout', async () => {
    // An answer a minute away: had doctor waited for it, the test would run past its timeout.
    server.queueFailure({ route: 'models', status: 200, delayMs: 60_000 });
    const result = await run(['doctor', '--json', '--timeout', '300'], remote());
    expect(result.code).toBe(1);
    expect(check(JSON.parse(result.stdout), 'server').message).toMatch(/did not answer .* within 0\.3 s/);
  });
});
