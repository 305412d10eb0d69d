// How a chat starts and what it leaves behind, through the CLI run
// in-process (test/helpers/cli.ts): a new session by default, -c/--continue for the most recent one,
// --session for a given one, --new still accepted; a session is stored with its
// first question, so a chat or an ask that asks nothing leaves no session. One test
// runs the built CLI as a child process, to remove its session while it reads.

import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, isolatedEnv, ragline, tempDir, writeTinyDocs } from './helpers/cli.js';

let home: string;
let docs: string;
let env: NodeJS.ProcessEnv;
const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

function sessionRows(): { id: string; name: string | null; turns: number }[] {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db
      .prepare('SELECT s.id, s.name, (SELECT count(*) FROM turns t WHERE t.session_id = s.id) AS turns FROM sessions s ORDER BY s.rowid')
      .all() as { id: string; name: string | null; turns: number }[];
  } finally {
    db.close();
  }
}

/** Turns of the session that have ended (a turn is stored pending when it starts). */
function finishedTurns(sessionId: string): number {
  const db = new Database(dbFile(), { readonly: true });
  try {
    return db.prepare("SELECT count(*) FROM turns WHERE session_id = ? AND status <> 'pending'").pluck().get(sessionId) as number;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  home = tempDir('ragline-start-');
  docs = writeTinyDocs();
  env = isolatedEnv(home);
  const ingested = await ragline(['ingest', docs], { env });
  expect(ingested.code, ingested.stderr).toBe(0);
});

afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(docs, { recursive: true, force: true });
});

describe('starting a chat', () => {
  it('a chat that asks nothing, piped or with --new, stores no session', async () => {
    for (const args of [['chat'], ['chat', '--new'], ['chat', '--new', 'named'], ['chat', '--json']]) {
      const result = await ragline(args, { env, input: '' });
      expect(result.code, result.stderr).toBe(0);
    }
    const slashOnly = await ragline(['chat'], { env, input: '/history\n/topics\n' });
    expect(slashOnly.code, slashOnly.stderr).toBe(0);
    expect(slashOnly.stdout).toContain('No turns yet in this session.');
    expect(sessionRows()).toEqual([]);
  });

  it('a chat over an index with nothing in it says so, and how to fill it', async () => {
    const emptyHome = tempDir('ragline-empty-');
    try {
      const emptyEnv = isolatedEnv(emptyHome);
      // A database whose only folder was forgotten: it holds no chunk.
      expect((await ragline(['ingest', docs], { env: emptyEnv })).code).toBe(0);
      expect((await ragline(['forget', docs, '--yes'], { env: emptyEnv })).code).toBe(0);
      const result = await ragline(['chat'], { env: emptyEnv, input: 'How do I rotate an API key?\n' });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('yet: every question will find nothing.');
      expect(result.stderr).toContain('Run `ragline ingest <folder>` first');
      // An index with documents: not said.
      expect((await ragline(['chat'], { env, input: '' })).stderr).not.toContain('Nothing is ingested');
    } finally {
      fs.rmSync(emptyHome, { recursive: true, force: true });
    }
  });

  it('an ask that fails before its question is stored leaves no session', async () => {
    // The index was built offline; asking for remote embeddings explicitly is a real mismatch.
    const result = await ragline(['ask', 'How do I rotate an API key?'], {
      env: { ...env, RAGLINE_EMBED_PROVIDER: 'openai', RAGLINE_BASE_URL: 'http://127.0.0.1:9/v1', RAGLINE_MAX_RETRIES: '0' },
    });
    expect(result.code).not.toBe(0);
    expect(sessionRows()).toEqual([]);
  });

  it('each chat is a new session by default; -c continues the most recent; --session a given one; --new still works', async () => {
    const first = await ragline(['chat', '--new', 'keys'], { env, input: 'How do I rotate an API key?\n' });
    expect(first.code, first.stderr).toBe(0);
    const second = await ragline(['chat'], { env, input: 'What header does a webhook carry?\n' });
    expect(second.code, second.stderr).toBe(0);
    const rows = sessionRows();
    expect(rows.map((r) => [r.name, r.turns])).toEqual([
      ['keys', 1],
      [null, 1],
    ]);
    expect(second.stderr).toContain(`session ${rows[1]!.id}`);

    const continued = await ragline(['chat', '-c'], { env, input: 'and where is it?\n' });
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stderr).toContain(`session ${rows[1]!.id}`);
    const longForm = await ragline(['chat', '--continue'], { env, input: 'is it signed?\n' });
    expect(longForm.code, longForm.stderr).toBe(0);

    const given = await ragline(['chat', '--session', 'keys'], { env, input: 'does it expire?\n' });
    expect(given.code, given.stderr).toBe(0);
    expect(sessionRows().map((r) => [r.name, r.turns])).toEqual([
      ['keys', 2],
      [null, 3],
    ]);
  });

  it('refuses -c together with --session or --new, and --session without a value off a terminal', async () => {
    for (const args of [
      ['chat', '-c', '--new'],
      ['chat', '-c', '--session', 'keys'],
    ]) {
      const result = await ragline(args, { env, input: 'anything\n' });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/cannot be used together/);
    }
    const bare = await ragline(['chat', '--session'], { env, input: 'anything\n' });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toMatch(/--session needs a session id or name/);
  });

  it('--new with a taken name refuses before anything is stored', async () => {
    const before = sessionRows();
    const result = await ragline(['chat', '--new', 'keys'], { env, input: 'How do I rotate an API key?\n' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/A session named "keys" exists already/);
    expect(sessionRows()).toEqual(before);
  });
});

describe('the REPL', () => {
  it("names the --db it was started with in its parting hint, shell-quoted, so the replay opens that database", async () => {
    const { run } = await import('../src/cli/main.js');
    const other = path.join(home, 'other dir', "team's.db");
    fs.mkdirSync(path.dirname(other));
    expect((await ragline(['--db', other, 'ingest', docs], { env })).code).toBe(0);
    /** A terminal: the REPL reads keys from it, one question, then Ctrl-D. */
    const repl = async (args: string[]) => {
      const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin }) as unknown as NodeJS.ReadStream;
      const stdout = new PassThrough();
      let shown = '';
      stdout.on('data', (chunk: Buffer) => (shown += chunk.toString()));
      const running = run(args, { stdin, stdout: stdout as unknown as NodeJS.WriteStream, stderr: new PassThrough() as unknown as NodeJS.WriteStream, env, signals: new EventEmitter(), exit: () => {} });
      const prompts = () => shown.split('› ').length - 1;
      const until = async (done: () => boolean) => {
        for (let waited = 0; !done(); waited += 20) {
          if (waited > 20_000) throw new Error(`no prompt: ${shown}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      await until(() => prompts() >= 1);
      stdin.write('How do I rotate an API key?\r');
      await until(() => prompts() >= 2);
      stdin.write('\u0004');
      expect(await running).toBe(0);
      return shown;
    };
    const named = await repl(['--db', other, 'chat', '--new', 'keys rotation']);
    const hint = named.match(/Replay it with: (.*)/)?.[1];
    expect(hint).toBe(`ragline --db '${other.replace("'", "'\\''")}' replay 'keys rotation'`);
    // What the hint says, run as a shell would split it, replays the session.
    const words = [...hint!.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!));
    const replayed = await ragline(words.slice(1), { env });
    expect(replayed.code, replayed.stderr).toBe(0);
    // Without --db (the default database, or RAGLINE_DB), the hint has none.
    expect(await repl(['chat'])).toMatch(/Replay it with: ragline replay s-[0-9a-f]+\n/);
  });
});

describe('ask and piped chat for scripts and transcripts', () => {
  it('ask reads the question from stdin when none is given', async () => {
    const result = await ragline(['ask'], { env, input: 'How do I rotate an API key?\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/↳ not rewritten/);
    expect(result.stdout).toMatch(/^\s+1\s+\d\.\d{4}\s+keys\.md:\d+-\d+/m);
    expect(result.stdout).toContain('dashboard under Settings > Keys');
    const empty = await ragline(['ask'], { env, input: '  \n' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/The question is empty\.\n.*echo "How do I \.\.\.\?" \| ragline ask/);
    // A log piped in by mistake is refused whole, not searched and stored.
    const pasted = await ragline(['ask'], { env, input: 'error: out of memory\n'.repeat(600) });
    expect(pasted.code).toBe(2);
    expect(pasted.stderr).toContain('The question is 12,599 characters long; at most 10,000 are taken.');
    // Refused before any database is looked for; characters counted as a person counts them (an emoji is one).
    const nowhere = { ...env, RAGLINE_DB: path.join(os.tmpdir(), `ragline-missing-${process.pid}`, 'none.db') };
    const long = await ragline(['ask'], { env: nowhere, input: 'x'.repeat(10_001) });
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('The question is 10,001 characters long');
    const emoji = await ragline(['search', '🙂'.repeat(6_000)], { env: nowhere });
    expect(emoji.stderr).not.toContain('characters long');
    expect(emoji.stderr).toContain('No database at');
    const tooMany = await ragline(['search', '🙂'.repeat(10_001)], { env: nowhere });
    expect(tooMany.code).toBe(2);
    expect(tooMany.stderr).toContain('The query is 10,001 characters long');
  });

  it('ask -q prints only the answer and its citations', async () => {
    for (const args of [['ask', '-q', 'How do I rotate an API key?'], ['ask', '--quiet']]) {
      const result = await ragline(args, { env, input: 'How do I rotate an API key?' });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).not.toMatch(/↳/);
      expect(result.stdout).not.toMatch(/^\s+1\s+\d\.\d{4}\s/m);
      expect(result.stdout).not.toContain('Extractive answer');
      // The answer opens with its first quoted passage: its citation and section title, then the passage.
      expect(result.stdout).toMatch(/^\[1\] API keys\n.*dashboard under Settings > Keys/);
      expect(result.stdout).toMatch(/^\[1\] keys\.md:\d+-\d+$/m);
      expect(result.stdout).toMatch(/\S\n$/); // it ends with its last line, no blank one after
    }
  });

  it('one-off asks share one session, "asks", searched as asked; ask --session last follows up on the last of them', async () => {
    const asksHome = tempDir('ragline-asks-');
    try {
      const asksEnv = isolatedEnv(asksHome, { RAGLINE_DB: path.join(asksHome, 'asks.db') });
      expect((await ragline(['ingest', docs], { env: asksEnv })).code).toBe(0);
      const sessions = async () => JSON.parse((await ragline(['sessions', '--json'], { env: asksEnv })).stdout) as { name: string | null; turns: number }[];
      for (const question of ['How do I rotate an API key?', 'What header does a webhook carry?', 'does it expire?']) {
        const asked = await ragline(['ask', question], { env: asksEnv });
        expect(asked.code, asked.stderr).toBe(0);
        expect(asked.stderr).toContain('session asks');
        // No follow-up of the ask before it: "does it expire?" is searched as asked.
        expect(asked.stdout).toMatch(/↳ not rewritten/);
      }
      expect((await sessions()).map((s) => [s.name, s.turns])).toEqual([['asks', 3]]);
      const followUp = await ragline(['ask', '--session', 'last', 'is it signed?'], { env: asksEnv });
      expect(followUp.code, followUp.stderr).toBe(0);
      expect(followUp.stdout).toMatch(/↳ searching for: .*\(rewritten: /);
      // --session <name> still asks in that session only, and a chat is a session of its own.
      expect((await ragline(['chat', '--new', 'keys'], { env: asksEnv, input: 'How do I rotate an API key?\n' })).code).toBe(0);
      expect((await ragline(['ask', '--session', 'keys', 'does it expire?'], { env: asksEnv })).code).toBe(0);
      expect((await ragline(['ask', 'What header does a webhook carry?'], { env: asksEnv })).code).toBe(0);
      expect((await sessions()).map((s) => [s.name, s.turns])).toEqual([['asks', 5], ['keys', 2]]);
    } finally {
      fs.rmSync(asksHome, { recursive: true, force: true });
    }
  });

  it('ask -q with --json is refused as a usage error, not settled silently', async () => {
    const result = await ragline(['ask', '-q', '--json', 'How do I rotate an API key?'], { env });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('-q/--quiet and --json cannot be used together.');
  });

  it('/k takes the same range as -k (1 to 1,000)', async () => {
    const result = await ragline(['chat'], { env, input: '/k 500\n/k 1001\n/k 0x10\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain('retrieving 500 chunks per question');
    expect(result.stderr.match(/Usage: \/k N \(1-1,000, as -k\)/g)).toHaveLength(2);
  });

  it('piped chat echoes each question before its turn, so the transcript reads in order', async () => {
    const result = await ragline(['chat'], { env, input: 'How do I rotate an API key?\nWhat header does a webhook carry?\n' });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n');
    const asked = lines.flatMap((line, i) => (line.startsWith('› ') ? [[i, line]] : [])) as [number, string][];
    expect(asked.map(([, line]) => line)).toEqual(['› How do I rotate an API key?', '› What header does a webhook carry?']);
    // Each echo comes before its own turn's rewrite line, the second after the first answer.
    expect(lines[asked[0]![0] + 1]).toMatch(/^↳ /);
    expect(lines[asked[1]![0] + 1]).toMatch(/^↳ /);
    expect(lines.slice(asked[0]![0], asked[1]![0]).join('\n')).toContain('Settings > Keys');
    // --json stays NDJSON: no echo.
    const json = await ragline(['chat', '--json'], { env, input: 'How do I rotate an API key?\n' });
    expect(json.stdout.split('\n').filter(Boolean).every((line) => line.startsWith('{'))).toBe(true);
  });

  it('chat --json gives each retrieved chunk its location, as search --json does', async () => {
    const chat = await ragline(['chat', '--json'], { env, input: 'How do I rotate an API key?\n' });
    expect(chat.code, chat.stderr).toBe(0);
    const retrieval = chat.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((event) => event.type === 'retrieval');
    const search = JSON.parse((await ragline(['search', '--json', 'How do I rotate an API key?'], { env })).stdout);
    expect(retrieval.chunks.length).toBeGreaterThan(0);
    for (const chunk of retrieval.chunks) expect(chunk.location).toBe(`${chunk.documentPath}:${chunk.startLine}-${chunk.endLine}`);
    expect(retrieval.chunks[0].location).toBe(search.results[0].location);
    expect(retrieval.chunks[0].location).toMatch(/^keys\.md:\d+-\d+$/);
  });

  it('a question that starts with a path is asked, "//" escapes a leading slash, and an unknown /word is still an unknown command', async () => {
    const before = new Set(sessionRows().map((row) => row.id));
    const input = ['/usr/lib/node_modules is where npm puts globals?', '/etc/hosts format?', '//help is a command?', '/hepl', '/k 3', 'keys.md rotate?', ''].join('\n');
    const result = await ragline(['chat'], { env, input });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('› /usr/lib/node_modules is where npm puts globals?\n↳ ');
    expect(result.stdout).toContain('› /etc/hosts format?\n↳ ');
    expect(result.stdout).toContain('› /help is a command?\n↳ ');
    expect(result.stderr).toMatch(/^Unknown command \/hepl\. Type \/help for the list\.\nsession s-\w+\n$/);
    expect(result.stdout).toContain('retrieving 3 chunks per question');
    const [session] = sessionRows().filter((row) => !before.has(row.id));
    const db = new Database(dbFile(), { readonly: true });
    try {
      expect(db.prepare('SELECT question FROM turns WHERE session_id = ? ORDER BY ordinal').pluck().all(session!.id)).toEqual([
        '/usr/lib/node_modules is where npm puts globals?',
        '/etc/hosts format?',
        '/help is a command?',
        'keys.md rotate?',
      ]);
    } finally {
      db.close();
    }
    const help = await ragline(['chat'], { env, input: '/help\n' });
    expect(help.stdout).toContain('type "//" (//help is asked as "/help")');
  });

  it('piped chat whose session another process removes says so and asks the next question in a new session, losing nothing', async () => {
    expect((await ragline(['chat', '--new', 'removed-midway'], { env, input: 'How do I rotate an API key?\n' })).code).toBe(0);
    const [removed] = sessionRows().filter((row) => row.turns === 1 && row.name === 'removed-midway');
    const child = spawn(process.execPath, [BIN, 'chat', '--session', 'removed-midway'], { env, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (data) => (stdout += data));
    child.stderr.on('data', (data) => (stderr += data));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      child.stdin.write('does it expire?\n');
      for (let waited = 0; finishedTurns(removed!.id) < 2; waited += 20) {
        if (waited > 20_000) throw new Error(`the first answer did not come: ${stdout}${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const rm = await ragline(['sessions', 'rm', 'removed-midway', '--yes'], { env });
      expect(rm.code, rm.stderr).toBe(0);
      child.stdin.end('how long do keys last?\n');
      expect(await exited, stderr).toBe(0);
    } finally {
      child.kill();
    }
    const started = /Session removed-midway was removed by another process; this question starts a new session, (s-\w+)\./.exec(stderr);
    expect(started, stderr).not.toBeNull();
    const replacement = started![1]!;
    expect(sessionRows().find((row) => row.id === replacement)).toEqual({ id: replacement, name: null, turns: 1 });
    expect(sessionRows().find((row) => row.id === removed!.id)).toBeUndefined();
    expect(stdout).toContain('› how long do keys last?\n↳ ');
    expect(stderr).toMatch(new RegExp(`session ${replacement}\\n$`));
  });

  it('/show prints a run of blank lines once and takes only a plain chunk number', async () => {
    const folder = tempDir('ragline-show-docs-');
    fs.writeFileSync(path.join(folder, 'gaps.md'), `# Gaps\n\nThe quartz widget turns slowly.${'\n'.repeat(12)}The quartz widget stops at night.\n`);
    const showEnv = isolatedEnv(tempDir('ragline-show-'));
    expect((await ragline(['ingest', folder], { env: showEnv })).code).toBe(0);
    const result = await ragline(['chat'], { env: showEnv, input: 'How does the quartz widget turn?\n/show 1\n/show 0x1\n' });
    expect(result.stdout).toContain('The quartz widget turns slowly.\n\nThe quartz widget stops at night.');
    expect(result.stderr).toContain('Give a chunk number from 1 to 1.');
  });
});
