// The recipes in docs/models.md, run: each recipe's `export` lines, with its server's
// address pointed at the loopback server behaving as that server, must ingest, answer
// and pass `doctor`. A recipe edited into something that no longer works fails here.

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FIXTURE_DOCS, ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI, type Flavor } from './helpers/openai-server.js';

const FLAVORS: Record<string, Flavor> = { Ollama: 'ollama', 'llama.cpp (`llama-server`)': 'llama.cpp', 'LM Studio': 'lmstudio', vLLM: 'vllm', OpenAI: 'openai' };

/** Each recipe's heading and the variables its `export` lines set. */
function recipes(): Array<{ name: string; variables: Record<string, string> }> {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'models.md'), 'utf8');
  const section = text.slice(text.indexOf('## Recipes'));
  return [...section.matchAll(/^### (.+)\n([\s\S]*?)(?=^### |(?![\s\S]))/gm)]
    .filter((match) => FLAVORS[match[1]!.trim()])
    .map((match) => {
      const variables: Record<string, string> = {};
      for (const line of match[2]!.split('\n')) {
        const exported = /^export\s+(.*?)\s*(?:#.*)?$/.exec(line.trim());
        if (!exported) continue;
        for (const pair of exported[1]!.split(/\s+/)) {
          const [name, ...value] = pair.split('=');
          variables[name!] = value.join('=');
        }
      }
      return { name: match[1]!.trim(), variables };
    });
}

let server: FakeOpenAI | undefined;
let home = '';
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (home) fs.rmSync(home, { recursive: true, force: true });
});

describe('docs/models.md recipes', () => {
  it('has one for each server', () => {
    expect(recipes().map((recipe) => recipe.name)).toEqual(Object.keys(FLAVORS));
  });

  it.each(recipes().map((recipe) => [recipe.name, recipe] as const))('%s', async (name, recipe) => {
    const { variables } = recipe;
    const models = [variables.RAGLINE_CHAT_MODEL, variables.RAGLINE_EMBED_MODEL].filter((model): model is string => Boolean(model));
    expect(models, 'a recipe names its chat and embedding models').toHaveLength(2);
    const flavor = FLAVORS[name]!;
    server = await startOpenAIServer({ flavor, models, loaded: models, contextTokens: 8192 });
    home = tempDir();
    const env = isolatedEnv(home, {
      ...variables,
      // The recipe's addresses, pointed here; OpenAI's API is reached through the same variable.
      RAGLINE_BASE_URL: server.baseURL,
      ...(variables.RAGLINE_EMBED_BASE_URL ? { RAGLINE_EMBED_BASE_URL: server.baseURL } : {}),
      ...(variables.OPENAI_API_KEY ? { OPENAI_API_KEY: 'sk-test-recipe' } : {}),
      RAGLINE_TOPICS: 'local',
    });
    const ingest = await ragline(['ingest', FIXTURE_DOCS], { env });
    expect(ingest.code, ingest.stderr).toBe(0);
    const ask = await ragline(['ask', 'How do I create an API key?'], { env });
    expect(ask.code, ask.stderr).toBe(0);
    expect(server.requestsTo('chat').some((request) => request.body.model === variables.RAGLINE_CHAT_MODEL)).toBe(true);
    expect(server.requestsTo('embeddings').every((request) => request.body.model === variables.RAGLINE_EMBED_MODEL)).toBe(true);
    const doctor = await ragline(['doctor', '--json'], { env });
    const report = JSON.parse(doctor.stdout);
    expect(report.checks.filter((check: any) => check.status === 'fail')).toEqual([]);
    expect(report.provider.roles[0]).toMatchObject({ role: 'answer', model: variables.RAGLINE_CHAT_MODEL, serverKind: flavor === 'openai' ? 'unknown' : flavor });
    if (flavor !== 'openai') expect(report.provider.roles[0].contextTokens).toBe(8192);
  });
});
