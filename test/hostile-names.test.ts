// Names from outside the program reach the terminal only through the one
// sanitiser: file and folder names, paths, model ids and session exports. Each
// output path gets a hostile name (OSC title, ESC, C1 CSI/OSC, bidi override,
// newline) and must print no ESC, C1 or bidi control on stdout or stderr.
// Through the CLI, in-process.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isolatedEnv, ragline, tempDir, type CliResult } from './helpers/cli.js';
import { startOpenAIServer, type FakeOpenAI } from './helpers/openai-server.js';
import { sessionChoices } from '../src/cli/pick-session.js';

// ESC, C1 controls, bidi embeddings/overrides/isolates.
const FORBIDDEN = /[\u001b\u0080-\u009f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE = 'x-\u001b]0;PWNED\u0007-\u009b31m-\u009d2;T\u009c-\u202etxt.md\u202c-\nsecond line';

let home: string;
let docs: string;
let dbFile: string;
const env = () => isolatedEnv(home);

function expectClean(result: CliResult, what: string): void {
  expect(result.stdout, `${what} stdout`).not.toMatch(FORBIDDEN);
  expect(result.stderr, `${what} stderr`).not.toMatch(FORBIDDEN);
}

beforeAll(async () => {
  home = tempDir();
  // The folder's own name is hostile too (stats shows it).
  docs = path.join(home, 'docs-\u001b[31m-\u202e-dir');
  fs.mkdirSync(docs);
  fs.writeFileSync(path.join(docs, 'plain.md'), '# Plain\n\nNothing to see here about lanterns.\n');
  fs.writeFileSync(path.join(docs, `${HOSTILE}.md`), '# Hostile\n\nThe zebra lantern protocol is described here.\n');
  fs.writeFileSync(path.join(docs, `empty-${HOSTILE}.md`), '');
  fs.writeFileSync(path.join(docs, `bin-\u009b2J-${HOSTILE}.md`), Buffer.from([0, 1, 2, 3, 0, 0, 255]));
  dbFile = path.join(home, 'r.db');
  const made = await ragline(['--db', dbFile, 'ingest', docs], { env: env() });
  expect(made.code, made.stderr).toBe(0);
});

afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('hostile names through every output path', () => {
  test('ingest --verbose lists skipped files by name, sanitised', async () => {
    fs.writeFileSync(path.join(docs, `new-empty-${HOSTILE}.md`), '');
    const result = await ragline(['--db', dbFile, 'ingest', docs, '--verbose'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/empty: .*empty-x----txt\.md- second line\.md/); // listed, escapes removed, on one line
    expect(result.stdout).toMatch(/binary: bin-/);
    expectClean(result, 'ingest --verbose');
  });

  test('stats shows the folder path sanitised', async () => {
    const result = await ragline(['--db', dbFile, 'stats'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/last ingest .* from .*docs-/);
    expectClean(result, 'stats');
  });

  test('search and the chat REPL\'s /show print the location sanitised, on one line', async () => {
    const search = await ragline(['--db', dbFile, 'search', 'zebra lantern protocol'], { env: env() });
    expect(search.code, search.stderr).toBe(0);
    expectClean(search, 'search');
    const chat = await ragline(['--db', dbFile, 'chat'], { env: env(), input: 'zebra lantern protocol\n/show 1\n/exit\n' });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toContain('The zebra lantern protocol is described here.');
    // /show's location line: the escapes removed, the newline in the name did not break the line
    expect(chat.stdout).toMatch(/^x----txt\.md- second line\.md:\d+-\d+ {2}Hostile$/m);
    expectClean(chat, 'chat /show');
  });

  test('sessions export --format json writes C1 and bidi characters as \\u escapes (the same JSON value)', async () => {
    const result = await ragline(['--db', dbFile, 'sessions', 'export', 'last', '--format', 'json'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expectClean(result, 'sessions export json');
    expect(result.stdout).toContain('\\u202e');
    const parsed = JSON.parse(result.stdout);
    expect(JSON.stringify(parsed)).toContain('\u202e'); // the value itself is kept
    const markdown = await ragline(['--db', dbFile, 'sessions', 'export', 'last'], { env: env() });
    expectClean(markdown, 'sessions export md');
  });

  test('error messages quote paths sanitised', async () => {
    const result = await ragline(['--db', dbFile, 'ingest', path.join(home, `missing-${HOSTILE}`)], { env: env() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('No such file or folder');
    expectClean(result, 'ingest error');
  });

  test("a chat turn shows the server's error message sanitised", async () => {
    const server: FakeOpenAI = await startOpenAIServer();
    try {
      server.queueFailure({ route: 'chat', status: 400, body: { error: { message: 'bad \u001b]0;PWNED\u0007 request \u009b2J \u202eevil' } } });
      const result = await ragline(['--db', dbFile, 'ask', 'zebra lantern protocol'], {
        env: isolatedEnv(home, { RAGLINE_BASE_URL: server.baseURL, RAGLINE_MAX_RETRIES: '0' }),
      });
      expect(result.stderr).toContain('bad');
      expect(result.stderr).toContain('request');
      expectClean(result, 'ask error');
    } finally {
      await server.close();
    }
  });

  test("eval prints a tasks file's ids, groups and relevant names sanitised, and its JSON escapes them", async () => {
    const tasks = path.join(home, 'hostile-tasks.jsonl');
    const task = { id: `t-${HOSTILE}`, group: `g-${HOSTILE}`, question: 'zebra lantern protocol', relevant: [`doc-${HOSTILE}`] };
    fs.writeFileSync(tasks, JSON.stringify(task) + '\n');
    const text = await ragline(['--db', dbFile, 'eval', tasks, '--variants', 'raw'], { env: env() });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^g-x----txt\.md- second line {2}raw/m); // the group's row, on one line
    expect(text.stderr).toContain('doc-x');
    expectClean(text, 'eval');
    const json = await ragline(['--db', dbFile, 'eval', tasks, '--variants', 'raw', '--json', '--per-task'], { env: env() });
    expect(json.code, json.stderr).toBe(0);
    expectClean(json, 'eval --json');
    expect(Object.keys(JSON.parse(json.stdout).variants[0].groups)).toEqual([task.group]); // the same value, escaped
  });

  test('eval --from-sessions prints a name judged into a session sanitised', async () => {
    const asked = await ragline(['--db', dbFile, 'chat', '--new', 'judged-hostile'], { env: env(), input: 'zebra lantern protocol\n/exit\n' });
    expect(asked.code, asked.stderr).toBe(0);
    const judged = await ragline(['--db', dbFile, 'sessions', 'judge', 'judged-hostile', '1', '--relevant', 'doc\u001b]0;PWN\u0007.md'], { env: env() });
    expect(judged.code, judged.stderr).toBe(0);
    const result = await ragline(['--db', dbFile, 'eval', '--from-sessions', 'judged-hostile', '--variants', 'raw'], { env: env() });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('doc.md');
    expectClean(result, 'eval --from-sessions');
  });

  test("doctor shows the server's model ids sanitised", async () => {
    const server: FakeOpenAI = await startOpenAIServer({ models: ['good-model', `evil-\u001b]0;PWNED\u0007-\u009b2J-\u202emodel`] });
    try {
      const result = await ragline(['--db', dbFile, 'doctor'], {
        env: isolatedEnv(home, { RAGLINE_BASE_URL: server.baseURL, RAGLINE_CHAT_MODEL: 'missing-model', RAGLINE_EMBED_MODEL: 'good-model' }),
      });
      expect(result.stdout).toContain('evil-');
      expectClean(result, 'doctor');
    } finally {
      await server.close();
    }
  });
});

describe('the session picker', () => {
  test('shows a session name read from the database sanitised, on one line (the prompt writes to the terminal itself)', () => {
    const [choice] = sessionChoices([{ id: 's1', name: HOSTILE, turns: 2, lastActive: '2026-01-02T03:04:05Z', firstQuestion: `why ${HOSTILE}` }]);
    expect(choice!.name).not.toMatch(FORBIDDEN);
    expect(choice!.name).not.toContain('\n');
    expect(choice!.name).toMatch(/^x----txt\.md- second line {2}2 turns, 2026-01-02 03:04 {2}why x/);
    expect(choice!.value).toBe('s1');
  });
});
