// ragline used from another program: the package imported by its name (Node's
// package self-reference, through package.json `exports`, so the built dist/ and
// its declarations), a folder ingested, a question and a follow-up asked, their
// events read. Offline: no key, no network. The README's example is the file this
// test runs, word for word.

import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { FIXTURE_DOCS, ROOT, isolatedEnv, tempDir } from './helpers/cli.js';

const EXAMPLE = path.join(ROOT, 'examples', 'library.mjs');

/** A folder of a few documents to ingest. */
function docsFolder(): string {
  const folder = tempDir('ragline-lib-docs-');
  fs.cpSync(path.join(FIXTURE_DOCS, 'guides'), path.join(folder, 'guides'), { recursive: true });
  fs.copyFileSync(path.join(FIXTURE_DOCS, 'faq.md'), path.join(folder, 'faq.md'));
  return folder;
}

describe('the library API', () => {
  test('imported by name, it ingests a folder, asks a question and a follow-up, and yields the turn events', async () => {
    const ragline = await import('ragline');
    const folder = docsFolder();
    const db = path.join(tempDir('ragline-lib-db-'), 'lib.db');
    const workspace = ragline.openWorkspace({ db, settings: { 'retrieval.k': 3 } });
    try {
      expect(workspace).toBeInstanceOf(ragline.Workspace);
      expect(workspace.config.retrieval.k).toBe(3);
      const summary = await ragline.ingestFolder(workspace, folder);
      expect(summary.files.added).toBeGreaterThan(0);
      expect(summary.embedder).toMatch(/^offline:/);

      const chat = ragline.Chat.start(workspace);
      expect(chat.planned).toBe(true);
      const turns: import('ragline').TurnEvent[][] = [];
      for (const question of ['How do I rotate an API key?', 'does it expire?']) {
        const events: import('ragline').TurnEvent[] = [];
        for await (const event of chat.ask(question)) events.push(event);
        turns.push(events);
      }
      const [first, followUp] = turns;
      expect(first!.map((e) => e.type)).toEqual(expect.arrayContaining(['start', 'rewrite', 'retrieval', 'done']));
      expect(first!.at(-1)).toMatchObject({ type: 'done', status: 'answered', ordinal: 1, answerKind: 'extractive' });
      // The follow-up is read against the first question: "it" is the API key.
      const rewrite = followUp!.find((e) => e.type === 'rewrite');
      expect(rewrite).toMatchObject({ question: 'does it expire?', decision: 'rewritten' });
      expect((rewrite as { standaloneQuery: string }).standaloneQuery).toMatch(/API key/i);
      const retrieval = followUp!.find((e) => e.type === 'retrieval') as import('ragline').RetrievalEvent;
      expect(retrieval.chunks).toHaveLength(3);
      expect(retrieval.chunks[0]!.documentPath).toBe('guides/authentication.md');
      const done = followUp!.at(-1) as import('ragline').DoneEvent;
      expect(done).toMatchObject({ status: 'answered', ordinal: 2 });
      expect(done.answer).toMatch(/expire/i);

      // Both turns are stored in one session, as the CLI stores them.
      expect(chat.planned).toBe(false);
      const stored = await ragline.listSessions(workspace);
      expect(stored).toHaveLength(1);
      expect(stored[0]).toMatchObject({ id: chat.session.id, turns: 2 });
    } finally {
      await workspace.close();
    }
    expect(workspace.isOpen).toBe(false);
  });

  test('globs that would remove every stored document of a folder and add none are refused unless confirmRemoval says yes', async () => {
    const ragline = await import('ragline');
    const folder = docsFolder();
    const workspace = ragline.openWorkspace({ db: path.join(tempDir('ragline-lib-db-'), 'lib.db') });
    try {
      const { added } = (await ragline.ingestFolder(workspace, folder)).files;
      const refused = await ragline.ingestFolder(workspace, folder, { include: ['*.mdd'] }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ragline.RemovalRefused);
      expect(refused).toBeInstanceOf(ragline.UserError);
      const removal = { root: fs.realpathSync(folder), stored: added, leftOut: added, remaining: 0 };
      expect((refused as InstanceType<typeof ragline.RemovalRefused>).removal).toMatchObject(removal);
      const asked: unknown[] = [];
      const declined = ragline.ingestFolder(workspace, folder, { include: ['*.mdd'], confirmRemoval: (r) => (asked.push(r), false) });
      await expect(declined).rejects.toBeInstanceOf(ragline.RemovalRefused);
      const summary = await ragline.ingestFolder(workspace, folder, { include: ['*.mdd'], confirmRemoval: (r) => (asked.push(r), true) });
      expect(summary.files.removed).toBe(added);
      expect(asked).toEqual([expect.objectContaining(removal), expect.objectContaining(removal)]);
    } finally {
      await workspace.close();
    }
  });

  test('ingestPaths ingests several folders in turn, each once, refuses a missing one before writing, and stops at an abort', async () => {
    const ragline = await import('ragline');
    const [first, second, third] = [docsFolder(), docsFolder(), docsFolder()];
    const db = path.join(tempDir('ragline-lib-db-'), 'lib.db');
    const workspace = ragline.openWorkspace({ db });
    try {
      const missing = path.join(first, 'no-such-folder');
      const refused = await ragline.ingestPaths(workspace, [first, missing]).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ragline.UserError);
      expect(refused).toMatchObject({ message: `No such file or folder: ${missing}`, exitCode: 2 });
      expect(ragline.stats(workspace).documents).toBe(0);

      const seen: string[] = [];
      const result = await ragline.ingestPaths(workspace, [first, second, first], { onPathDone: (done) => seen.push(done.path) });
      expect(seen).toEqual([first, second]);
      expect(result.paths.map((done) => [done.path, done.summary.root])).toEqual([first, second].map((folder) => [folder, fs.realpathSync(folder)]));
      expect(result.covered).toEqual([{ path: first, by: first, reason: 'same' }]);
      expect(result.notIngested).toEqual([]);
      const added = result.paths[0]!.summary.files.added;
      expect(result.total).toMatchObject({ paths: 2, files: { added: 2 * added }, interrupted: false });
      expect(ragline.stats(workspace).documents).toBe(2 * added);

      // An abort once the first path is done: the others are not started.
      const controller = new AbortController();
      const stopped = await ragline.ingestPaths(workspace, [first, third, second], { signal: controller.signal, onPathDone: () => controller.abort() });
      expect(stopped.paths.map((done) => done.path)).toEqual([first]);
      expect(stopped.notIngested).toEqual([third, second]);
      expect(stopped.total).toMatchObject({ paths: 1, files: { unchanged: added }, interrupted: true });
      expect(ragline.stats(workspace).documents).toBe(2 * added);
    } finally {
      await workspace.close();
    }
  });

  test('settings are checked as the CLI checks them, and nothing is read from the environment unless passed', async () => {
    const { openWorkspace, resolveSettings, UserError } = await import('ragline');
    expect(() => openWorkspace({ db: ':memory:', settings: { 'retrieval.k': 0 } })).toThrow(UserError);
    expect(() => openWorkspace({ db: ':memory:', settings: { 'retrieval.k': 0 } })).toThrow(/settings\['retrieval\.k'\]/);
    const env = { HOME: tempDir('ragline-lib-home-'), RAGLINE_K: '7' };
    expect(resolveSettings({ db: ':memory:' }).config.retrieval.k).toBe(5);
    expect(resolveSettings({ db: ':memory:', env }).config.retrieval.k).toBe(7);
    expect(resolveSettings({ db: ':memory:', env, settings: { 'retrieval.k': 9 } }).sources['retrieval.k']).toBe('flag');
  });

  test('a misspelt setting, an empty query or question and a k out of range are refused, as the CLI refuses them', async () => {
    const ragline = await import('ragline');
    expect(() => ragline.openWorkspace({ db: ':memory:', settings: { 'retrieval.kk': 3 } })).toThrow(/Unknown setting: settings\['retrieval.kk'\]/);
    let misspelt: unknown;
    try {
      ragline.openWorkspace({ db: ':memory:', settings: { provder: 'offline' } });
    } catch (error) {
      misspelt = error;
    }
    expect(misspelt).toBeInstanceOf(ragline.UserError);
    expect((misspelt as InstanceType<typeof ragline.UserError>).hint).toBe("'provder': did you mean 'provider'?");
    const folder = docsFolder();
    const workspace = ragline.openWorkspace({ db: path.join(tempDir('ragline-lib-db-'), 'lib.db') });
    try {
      await ragline.ingestFolder(workspace, folder);
      await expect(ragline.search(workspace, '  ')).rejects.toThrow('The query is empty.');
      await expect(ragline.search(workspace, 'api key', { k: 0 })).rejects.toThrow('k must be a whole number from 1 to 1,000, got "0".');
      await expect(ragline.search(workspace, 'api key', { k: 100000 })).rejects.toThrow(/from 1 to 1,000/);
      expect((await ragline.search(workspace, 'api key', { k: 2 })).results).toHaveLength(2);
      const chat = ragline.Chat.start(workspace);
      await expect(chat.ask(' ').next()).rejects.toThrow('The question is empty.');
      // A document pasted by mistake is refused as the MCP server refuses it, and nothing is stored.
      await expect(chat.ask('api key '.repeat(2000)).next()).rejects.toThrow('The question is 15,999 characters long; at most 10,000 are taken.');
      await expect(ragline.search(workspace, 'x'.repeat(10_001))).rejects.toThrow('The query is 10,001 characters long; at most 10,000 are taken.');
      // The limit itself is taken.
      await expect(ragline.search(workspace, 'x'.repeat(10_000))).resolves.toBeDefined();
      expect(await ragline.listSessions(workspace)).toEqual([]);
    } finally {
      await workspace.close();
    }
  });

  test('a program that waits for warmInBackground after a search gets it, and goes on to close', async () => {
    const home = tempDir('ragline-lib-warm-');
    const script = path.join(home, 'warm.mjs');
    fs.writeFileSync(
      script,
      [
        `import { ingestFolder, openWorkspace, search } from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist', 'index.js')).href)};`,
        `const ws = openWorkspace({ db: ${JSON.stringify(path.join(home, 'warm.db'))}, create: true });`,
        `await ingestFolder(ws, ${JSON.stringify(docsFolder())});`,
        "await search(ws, 'rotate an API key');",
        'await ws.warmInBackground();',
        "console.log('warmed');",
        'await ws.close();',
        "console.log('closed');",
      ].join('\n'),
    );
    // Before: the load a search schedules waits on a timer that keeps no process alive, so
    // the await never settled and Node exited with code 13, nothing after it run.
    const { stdout } = await promisify(execFile)(process.execPath, [script], { cwd: home, env: isolatedEnv(home) });
    expect(stdout.trim().split('\n')).toEqual(['warmed', 'closed']);
  });

  test("the README's example is examples/library.mjs, and it runs as another program would", async () => {
    const code = fs.readFileSync(EXAMPLE, 'utf8');
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(code.trim());
    const folder = docsFolder();
    const home = tempDir('ragline-lib-home-');
    const { stdout } = await promisify(execFile)(process.execPath, [EXAMPLE, folder, path.join(home, 'example.db')], { cwd: ROOT, env: isolatedEnv(home) });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ingested \d+ files, \d+ chunks$/);
    expect(lines).toContain('searched as: does the API key expire? (rewritten)');
    expect(stdout).toMatch(/answer \(answered\): .*\n\[1\] Expiry\nAPI keys expire after 90 days/);
  });
});
