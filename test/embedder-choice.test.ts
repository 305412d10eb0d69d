// Which embedder a command uses: chosen explicitly (embedProvider offline or
// openai), or left auto, when an existing index keeps the embedder it was built
// with, so that configuring a server for answers does not make an index built
// offline unusable. In process for the rules; through the CLI
// (run in-process) against the test server for what a user sees.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEmbedder, resolveConfig } from '../src/config/index.js';
import { isolatedEnv, ragline, tempDir, writeTinyDocs } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';

function resolved(env: Record<string, string | undefined>) {
  return resolveConfig({ env: { HOME: '/nonexistent', ...env }, flags: {} });
}

describe('chooseEmbedder', () => {
  it('auto keeps an offline index offline when only a base URL or a key is set', () => {
    for (const env of [{ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }, { OPENAI_API_KEY: 'sk-x' }]) {
      const choice = chooseEmbedder(resolved(env), 'offline:hash-v2-384');
      expect(choice.remote).toBe(false);
      expect(choice.reason).toMatch(/auto: the index was built with offline:hash-v2-384/);
    }
  });

  it('auto follows the server for a new index, and a remote index keeps its own model unless one is set', () => {
    expect(chooseEmbedder(resolved({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }), undefined)).toMatchObject({ remote: true, model: 'text-embedding-3-small' });
    expect(chooseEmbedder(resolved({}), undefined).remote).toBe(false);
    expect(chooseEmbedder(resolved({ OPENAI_BASE_URL: 'http://h/v1' }), 'openai:nomic-embed-text')).toMatchObject({ remote: true, model: 'nomic-embed-text' });
    expect(chooseEmbedder(resolved({ OPENAI_BASE_URL: 'http://h/v1', RAGLINE_EMBED_MODEL: 'other' }), 'openai:nomic-embed-text')).toMatchObject({ remote: true, model: 'other' });
  });

  it('an explicit choice wins over the index', () => {
    const choice = chooseEmbedder(resolved({ OPENAI_BASE_URL: 'http://h/v1', RAGLINE_EMBED_PROVIDER: 'openai' }), 'offline:hash-v2-384');
    expect(choice).toMatchObject({ remote: true, reason: 'embedProvider is openai (env:RAGLINE_EMBED_PROVIDER)' });
    expect(chooseEmbedder(resolved({ RAGLINE_EMBED_PROVIDER: 'offline' }), 'openai:m').remote).toBe(false);
  });
});

describe('an index built offline, then a server configured', () => {
  let home: string;
  let docs: string;
  let server: FakeOpenAI;
  let offlineEnv: NodeJS.ProcessEnv;
  let serverEnv: NodeJS.ProcessEnv;

  beforeAll(async () => {
    home = tempDir('ragline-embedder-');
    docs = writeTinyDocs();
    server = await startOpenAIServer();
    offlineEnv = isolatedEnv(home);
    // Only a base URL, as a user setting up a local model server would.
    serverEnv = isolatedEnv(home, { OPENAI_BASE_URL: server.baseURL, RAGLINE_MAX_RETRIES: '0', RAGLINE_TOPICS: 'local' });
    const ingested = await ragline(['ingest', docs], { env: offlineEnv });
    expect(ingested.code, ingested.stderr).toBe(0);
  });

  afterAll(async () => {
    await server.close();
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(docs, { recursive: true, force: true });
  });

  it('ask works: the server answers, the index is searched with its own offline embedder', async () => {
    server.onChat(() => 'Rotate it from the dashboard [1].');
    const result = await ragline(['ask', 'How do I rotate an API key?'], { env: serverEnv });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Rotate it from the dashboard [1].');
    expect(result.stdout).toMatch(/\[1\] keys\.md:\d+-\d+/);
    expect(server.requestsTo('embeddings')).toHaveLength(0);
    expect(server.requestsTo('chat').length).toBeGreaterThan(0);
  });

  it('incremental ingest and search keep working', async () => {
    fs.writeFileSync(path.join(docs, 'billing.md'), '# Billing\n\nInvoices are sent on the first day of the month.\n');
    const ingested = await ragline(['ingest', docs], { env: serverEnv });
    expect(ingested.code, ingested.stderr).toBe(0);
    const search = await ragline(['search', 'invoices'], { env: serverEnv });
    expect(search.code, search.stderr).toBe(0);
    expect(search.stdout).toContain('billing.md');
    expect(server.requestsTo('embeddings')).toHaveLength(0);
  });

  it('config show and doctor tell which embedder is used and why', async () => {
    const shown = await ragline(['config', 'show'], { env: serverEnv });
    expect(shown.stdout).toMatch(/^embedder in use offline \(built-in\) {2}embedProvider auto: the index was built with offline:hash-v2-384$/m);
    const json = JSON.parse((await ragline(['config', 'show', '--json'], { env: serverEnv })).stdout);
    expect(json.embedder).toMatchObject({ remote: false });
    const doctor = await ragline(['doctor'], { env: serverEnv });
    expect(doctor.stdout).toMatch(/ok +embedder +The embedder offline:hash-v2-384 matches the index \(embedProvider auto: the index was built with offline:hash-v2-384\)/);
  });

  it('a real mismatch (the remote embedder chosen explicitly) is refused with RAGLINE_EMBED_PROVIDER in the fix', async () => {
    const env = { ...serverEnv, RAGLINE_EMBED_PROVIDER: 'openai' };
    for (const args of [['search', 'invoices'], ['ingest', docs]]) {
      const result = await ragline(args, { env });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/built with the embedder offline:hash-v2-384/);
      expect(result.stderr).toContain('RAGLINE_EMBED_PROVIDER=offline');
    }
  });
});
