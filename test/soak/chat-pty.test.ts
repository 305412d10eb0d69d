// The REPL as a person meets it: `ragline chat` in a real pseudo-terminal
// (util-linux `script`), offline over fixtures/docs, driven by keystrokes and read
// back from the screen with escape sequences stripped. Then the rows the REPL wrote
// are checked in the SQLite file. Build first: npx tsc -p .

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURE_DOCS, isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { KEY, ptyUnavailable, spawnRaglineInPty, type PtySession } from '../helpers/pty.js';
import { startOpenAIServer } from '../helpers/openai-server.js';

const unavailable = ptyUnavailable();
if (unavailable) console.warn(`chat-pty.test.ts skipped: ${unavailable}`);

const PROMPT = '› ';

let home: string;
let env: NodeJS.ProcessEnv;
const sessions: PtySession[] = [];
const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

beforeAll(async () => {
  if (!fs.existsSync(path.resolve('dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  home = tempDir('ragline-pty-');
  env = isolatedEnv(home);
  const ingested = await runCli(['ingest', FIXTURE_DOCS], { env });
  expect(ingested.code, ingested.stderr).toBe(0);
});

afterEach(() => {
  for (const session of sessions.splice(0)) session.kill();
});

afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

function sessionCount(): number {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db.prepare('SELECT count(*) FROM sessions').pluck().get() as number;
  } finally {
    db.close();
  }
}

function start(args: string[], extraEnv: NodeJS.ProcessEnv = {}): PtySession {
  const session = spawnRaglineInPty(args, { env: { ...env, ...extraEnv } });
  sessions.push(session);
  return session;
}

/** Types a line and waits for what it printed, up to the next prompt. */
async function say(pty: PtySession, line: string): Promise<string> {
  pty.type(line + KEY.enter);
  // The echo of the line ends at the first newline; the reply ends at the next prompt.
  await pty.expect(line);
  return pty.expect(PROMPT);
}

describe.skipIf(unavailable !== undefined)('ragline chat in a pseudo-terminal', () => {
  it('answers, shows the rewrite of a follow-up, runs slash commands, recalls with the up-arrow and saves on Ctrl-D', async () => {
    const pty = start(['chat', '--new', 'pty-demo']);
    const banner = await pty.expect(PROMPT);
    expect(banner).toMatch(/session pty-demo · .*ragline\.db · \/help for commands, Ctrl-D to leave/);

    const first = await say(pty, 'How do I create an API key?');
    expect(first).toContain('↳ not rewritten (first turn');
    expect(first).toMatch(/^\s+1\s+\d\.\d{4}\s+guides\/authentication\.md:\d+-\d+/m);
    expect(first).toContain('Extractive answer (no language model configured):');
    expect(first).toMatch(/\[1\] guides\/authentication\.md:\d+-\d+/);

    // /show N prints the whole chunk N of the last answer, with its location.
    const shown = await say(pty, '/show 1');
    expect(shown).toMatch(/^guides\/authentication\.md:\d+-\d+ {2}Authentication > API keys$/m);
    expect(shown).toContain('### Expiry'); // the whole text, not the one-line snippet
    expect(await say(pty, '/show 99')).toMatch(/Give a chunk number from 1 to 5\./);

    expect(await say(pty, '/k 3')).toContain('retrieving 3 chunks per question');

    const followUp = await say(pty, 'does it expire?');
    expect(followUp).toMatch(/↳ searching for: .*\bAPI key\b.*\(rewritten: /);
    const ranks = [...followUp.matchAll(/^\s+(\d+)\s+\d\.\d{4}\s+\S+:\d+-\d+/gm)].map((m) => Number(m[1]));
    expect(ranks).toEqual([1, 2, 3]); // /k 3 took effect
    expect(followUp).toMatch(/Extractive answer [\s\S]*\[1\] guides\/authentication\.md:\d+-\d+/);

    // Up-arrow brings back the last question; Enter asks it again.
    pty.type(KEY.up);
    await pty.expect(`${PROMPT}does it expire?`);
    pty.type(KEY.enter);
    const again = await pty.expect(PROMPT);
    expect(again).toContain('↳ searching for:');

    const history = await say(pty, '/history');
    expect(history).toMatch(/^\s+1 {2}How do I create an API key\?$/m);
    expect(history).toMatch(/^\s+2 {2}does it expire\? → .*API key/m);
    expect(history).toMatch(/^\s+3 {2}does it expire\? → /m);

    const topics = await say(pty, '/topics');
    // Which topic ranks first is the topic tracker's business; the REPL shows the list with one active.
    expect(topics).toMatch(/^\S.* \(active\)/m);
    expect(topics.match(/\(active\)/g)).toHaveLength(1);
    expect(topics).toContain('API key');

    pty.type(KEY.ctrlD);
    await pty.expect(/session pty-demo saved\. Replay it with: ragline replay pty-demo/);
    expect(await pty.exited).toEqual({ code: 0, signal: null });

    const db = new Database(dbFile(), { readonly: true });
    try {
      const rows = db
        .prepare(
          `SELECT t.ordinal, t.question, t.status, t.rewrite_decision AS decision, t.settings_json AS settings,
                  (SELECT count(*) FROM turn_chunks c WHERE c.turn_id = t.id) AS chunks
           FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-demo' ORDER BY t.ordinal`,
        )
        .all() as { ordinal: number; question: string; status: string; decision: string; settings: string; chunks: number }[];
      expect(rows.map(({ ordinal, question, status, decision, chunks }) => ({ ordinal, question, status, decision, chunks }))).toEqual([
        { ordinal: 1, question: 'How do I create an API key?', status: 'answered', decision: 'skipped', chunks: 5 },
        { ordinal: 2, question: 'does it expire?', status: 'answered', decision: 'rewritten', chunks: 3 },
        { ordinal: 3, question: 'does it expire?', status: 'answered', decision: 'rewritten', chunks: 3 },
      ]);
      expect(JSON.parse(rows[1]!.settings).k).toBe(3);
    } finally {
      db.close();
    }
  });

  it('Ctrl-C on an empty line leaves; Ctrl-C on a typed line only clears it; a chat with no question stores no session', async () => {
    const before = sessionCount();
    const pty = start(['chat', '--new']);
    expect(await pty.expect(PROMPT)).toMatch(/new session s-[0-9a-f]{6} · /);
    pty.type('half a question');
    await pty.expect('half a question');
    pty.type(KEY.ctrlC);
    await pty.expect(PROMPT); // a fresh prompt, still running
    pty.type(KEY.ctrlC);
    await pty.expect('No question asked: nothing saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });
    expect(pty.text()).not.toMatch(/↳/); // the cleared line was never asked
    expect(sessionCount()).toBe(before);
  });

  it('chat starts a new session by default and -c continues the most recent one', async () => {
    const first = start(['chat']);
    expect(await first.expect(PROMPT)).toMatch(/new session s-[0-9a-f]{6} · /);
    await say(first, 'How do I create an API key?');
    first.type(KEY.ctrlD);
    const saved = await first.expect(/session (s-[0-9a-f]{6}) saved\./);
    const id = /session (s-[0-9a-f]{6}) saved/.exec(saved)![1]!;
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const again = start(['chat', '-c']);
    expect(await again.expect(PROMPT)).toContain(`session ${id} (1 earlier turn) · `);
    again.type(KEY.ctrlD);
    await again.expect(`session ${id} saved.`);
    expect(await again.exited).toEqual({ code: 0, signal: null });
  });

  it('a question that starts with a path is asked; "//" escapes a leading slash; /hepl is an unknown command', async () => {
    const pty = start(['chat', '--new', 'pty-slash']);
    await pty.expect(PROMPT);
    expect(await say(pty, '/etc/hosts format?')).toMatch(/↳ [\s\S]*Extractive answer/);
    expect(await say(pty, '//k is a key?')).toMatch(/↳ [\s\S]*Extractive answer/);
    const unknown = await say(pty, '/hepl');
    expect(unknown).toContain('Unknown command /hepl. Type /help for the list.');
    expect(unknown).not.toContain('↳');
    pty.type(KEY.ctrlD);
    await pty.expect('session pty-slash saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });
    const db = new Database(dbFile(), { readonly: true });
    try {
      const questions = db
        .prepare(`SELECT t.question FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-slash' ORDER BY t.ordinal`)
        .pluck()
        .all();
      expect(questions).toEqual(['/etc/hosts format?', '/k is a key?']);
    } finally {
      db.close();
    }
  });

  it('a session removed by another process while the REPL is open: said, and the question asked in a new session', async () => {
    const first = start(['chat', '--new', 'pty-removed']);
    await first.expect(PROMPT);
    await say(first, 'How do I create an API key?');
    first.type(KEY.ctrlD);
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const pty = start(['chat', '--session', 'pty-removed']);
    await pty.expect(PROMPT);
    const removed = await runCli(['sessions', 'rm', 'pty-removed', '--yes'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    const reply = await say(pty, 'does it expire?');
    const started = /Session pty-removed was removed by another process; this question starts a new session, (s-[0-9a-f]{6})\./.exec(reply);
    expect(started, reply).not.toBeNull();
    expect(reply).toContain('Extractive answer');
    pty.type(KEY.ctrlD);
    await pty.expect(`session ${started![1]} saved.`);
    expect(await pty.exited).toEqual({ code: 0, signal: null });
    const db = new Database(dbFile(), { readonly: true });
    try {
      expect(db.prepare('SELECT question FROM turns WHERE session_id = ?').pluck().all(started![1])).toEqual(['does it expire?']);
    } finally {
      db.close();
    }
  });

  it('a session picker cancelled with Ctrl-C or Escape is quiet: exit 130 at start-up, back to the REPL inside it', async () => {
    // At start-up (`--session` without a value): Ctrl-C leaves with 130 and no error.
    const atStart = start(['chat', '--session']);
    await atStart.expect('Continue which session?');
    atStart.type(KEY.ctrlC);
    expect(await atStart.exited).toEqual({ code: 130, signal: null });
    expect(atStart.text()).not.toMatch(/error|force closed/i);

    // Escape, too.
    const escaped = start(['chat', '--session']);
    await escaped.expect('Continue which session?');
    escaped.type(KEY.escape);
    expect(await escaped.exited).toEqual({ code: 130, signal: null });
    expect(escaped.text()).not.toMatch(/error|aborted/i);

    // Inside the REPL: /sessions, then Ctrl-C or Escape, and the REPL goes on in the same session.
    const pty = start(['chat', '--new', 'pty-picker']);
    await pty.expect(PROMPT);
    pty.type('/sessions' + KEY.enter);
    await pty.expect('Switch to session');
    pty.type(KEY.ctrlC);
    await pty.expect(PROMPT);
    pty.type('/sessions' + KEY.enter);
    await pty.expect('Switch to session');
    pty.type(KEY.escape);
    await pty.expect(PROMPT);
    const answer = await say(pty, 'How do I create an API key?');
    expect(answer).toContain('Extractive answer');
    pty.type(KEY.ctrlD);
    await pty.expect('session pty-picker saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });
    expect(pty.text()).not.toMatch(/error|force closed|aborted/i);
  });

  it('choosing in the picker continues that session', async () => {
    const pty = start(['chat', '--session']);
    await pty.expect('Continue which session?');
    pty.type(KEY.enter); // the first: the most recent
    const banner = await pty.expect(PROMPT);
    expect(banner).toMatch(/session \S+ \(\d+ earlier turns?\) · /);
    pty.type(KEY.ctrlD);
    await pty.expect('saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });
  });

  it('a multi-line paste without a final newline, bracketed or not, is one editable question that only Enter submits', async () => {
    const pty = start(['chat', '--new', 'pty-paste']);
    await pty.expect(PROMPT);
    // Not bracketed: the lines arrive in one read, the last one without a newline.
    pty.type('How do I list\rthe files in a directory\rrecursively?');
    await pty.expect('recursively?');
    await new Promise((resolve) => setTimeout(resolve, 400)); // well past any paste timer
    expect(pty.text()).not.toMatch(/↳/); // nothing was submitted
    // Still editable: rub out the "?" and type "!", then Enter.
    pty.type('\u007f!');
    await pty.expect('recursively!');
    pty.type(KEY.enter);
    await pty.expect('↳');
    await pty.expect(PROMPT);

    // Bracketed (the terminal wraps the paste), ending with a newline that is kept too.
    pty.type('\u001b[200~Where are webhooks\rsigned?\r\u001b[201~');
    await pty.expect('signed?');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(pty.text().match(/↳/g)).toHaveLength(1);
    pty.type('and verified' + KEY.enter);
    await pty.expect('↳');
    await pty.expect(PROMPT);
    pty.type(KEY.ctrlD);
    await pty.expect('session pty-paste saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });

    const db = new Database(dbFile(), { readonly: true });
    try {
      const questions = db
        .prepare(`SELECT t.question FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-paste' ORDER BY t.ordinal`)
        .pluck()
        .all();
      expect(questions).toEqual(['How do I list\nthe files in a directory\nrecursively!', 'Where are webhooks\nsigned?\nand verified']);
    } finally {
      db.close();
    }
  });

  it('text pasted or typed in one read in the middle of a line is inserted at the cursor, in order', async () => {
    const pty = start(['chat', '--new', 'pty-insert']);
    await pty.expect(PROMPT);
    pty.type('How rotate key?');
    await pty.expect('key?');
    // Cursor back before "rotate", then a paste there (bracketed, then not).
    pty.type('\u001b[D'.repeat('rotate key?'.length));
    await new Promise((resolve) => setTimeout(resolve, 100));
    pty.type('\u001b[200~do I \u001b[201~');
    await new Promise((resolve) => setTimeout(resolve, 100));
    pty.type('often ');
    await new Promise((resolve) => setTimeout(resolve, 100));
    pty.type(KEY.enter);
    await pty.expect('↳');
    await pty.expect(PROMPT);
    pty.type(KEY.ctrlD);
    await pty.expect('session pty-insert saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });

    const db = new Database(dbFile(), { readonly: true });
    try {
      const questions = db
        .prepare(`SELECT t.question FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-insert'`)
        .pluck()
        .all();
      expect(questions).toEqual(['How do I often rotate key?']);
    } finally {
      db.close();
    }
  });

  it('a tab inside pasted text is kept as a space, not taken as the completion key', async () => {
    const pty = start(['chat', '--new', 'pty-tab']);
    await pty.expect(PROMPT);
    pty.type('\u001b[200~col1\tcol2\r/s\tx\u001b[201~'); // bracketed
    await pty.expect('/s x');
    pty.type('why\tnot'); // not bracketed: the tab came in one read with text
    await pty.expect('why not');
    pty.type(KEY.enter);
    await pty.expect('↳');
    await pty.expect(PROMPT);
    pty.type(KEY.ctrlD);
    await pty.expect('session pty-tab saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });

    const db = new Database(dbFile(), { readonly: true });
    try {
      const questions = db
        .prepare(`SELECT t.question FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-tab'`)
        .pluck()
        .all();
      expect(questions).toEqual(['col1 col2\n/s xwhy not']);
    } finally {
      db.close();
    }
  });

  it('answers wrap at the terminal width; Tab completes slash commands; /edit asks what the editor saved', async () => {
    const editor = path.join(home, 'fake-editor.sh');
    // An editor that writes a two-line question into the file it is given.
    fs.writeFileSync(editor, `#!/bin/sh\nprintf 'How do I create\\nan API key?\\n' > "$1"\n`, { mode: 0o755 });
    const pty = spawnRaglineInPty(['chat', '--new', 'pty-narrow'], { env: { ...env, EDITOR: editor, VISUAL: '' }, cols: 60 });
    sessions.push(pty);
    await pty.expect(PROMPT);

    // Tab: "/his" completes to "/history".
    pty.type('/his' + KEY.tab);
    await pty.expect('/history');
    pty.type(KEY.enter);
    await pty.expect('No turns yet in this session.');
    await pty.expect(PROMPT);

    pty.type('/edit' + KEY.enter);
    await pty.expect('› How do I create an API key?'); // echoed on one line
    await pty.expect('Extractive answer');
    const answer = await pty.expect(/\n› /); // the answer, its citations, the next prompt
    const answerLines = answer.split('\n').filter((line) => line.trim() !== '');
    expect(answerLines.length).toBeGreaterThan(3);
    for (const line of answerLines) expect(line.length, line).toBeLessThanOrEqual(60);
    pty.type(KEY.ctrlD);
    await pty.expect('session pty-narrow saved.');
    expect(await pty.exited).toEqual({ code: 0, signal: null });

    const db = new Database(dbFile(), { readonly: true });
    try {
      const question = db
        .prepare(`SELECT t.question FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-narrow'`)
        .pluck()
        .get();
      expect(question).toBe('How do I create\nan API key?');
    } finally {
      db.close();
    }
  });

  it('Ctrl-C while an answer streams stops it, keeps the turn with the partial answer, and the REPL goes on', async () => {
    const server = await startOpenAIServer();
    try {
      const words = Array.from({ length: 60 }, (_, i) => `word${i} `);
      server.onChat(() => ({ chunks: words, chunkDelayMs: 80 }));
      const pty = start(['chat', '--new', 'pty-interrupt'], {
        RAGLINE_BASE_URL: server.baseURL,
        RAGLINE_EMBED_PROVIDER: 'offline',
        RAGLINE_MAX_RETRIES: '0',
      });
      await pty.expect(PROMPT);
      pty.type('How do I create an API key?' + KEY.enter);
      await pty.expect('word2 ');
      pty.type(KEY.ctrlC);
      await pty.expect('(answer interrupted; the turn is kept)');
      await pty.expect(PROMPT); // still running
      pty.type(KEY.ctrlD);
      await pty.expect('session pty-interrupt saved.');
      expect(await pty.exited).toEqual({ code: 0, signal: null });

      const db = new Database(dbFile(), { readonly: true });
      try {
        const turn = db
          .prepare(`SELECT t.status, t.answer FROM turns t JOIN sessions s ON s.id = t.session_id WHERE s.name = 'pty-interrupt'`)
          .get() as { status: string; answer: string };
        expect(turn.status).toBe('interrupted');
        expect(turn.answer).toMatch(/^word0 word1 word2 /);
        expect(words.join('').startsWith(turn.answer)).toBe(true);
        expect(turn.answer.length).toBeLessThan(words.join('').length);
      } finally {
        db.close();
      }
    } finally {
      await server.close();
    }
  });
});
