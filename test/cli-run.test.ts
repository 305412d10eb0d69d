// The CLI run in-process: run(args, io) writes to the streams it is given, reads
// the environment it is given, returns the exit code, and leaves this process's
// exitCode as it found it.

import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { run } from '../src/cli/main.js';
import { FIXTURE_DOCS, isolatedEnv, runCliInProcess, tempDir, writeTinyDocs } from './helpers/cli.js';

function capture(): { stream: NodeJS.WriteStream; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

async function ragline(args: string[], env: NodeJS.ProcessEnv) {
  const stdout = capture();
  const stderr = capture();
  const code = await run(args, { stdout: stdout.stream, stderr: stderr.stream, env });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

describe('run(args, io)', () => {
  test('ingests and searches with the given environment, printing to the given streams', async () => {
    const home = tempDir('ragline-run-');
    const env = isolatedEnv(home, { RAGLINE_DB: path.join(home, 'run.db') });
    const before = process.exitCode;
    const ingested = await ragline(['ingest', FIXTURE_DOCS, '--json'], env);
    expect(ingested.code).toBe(0);
    expect(JSON.parse(ingested.stdout)).toMatchObject({ db: path.join(home, 'run.db'), files: { added: expect.any(Number) } });
    const found = await ragline(['search', '--json', '-k', '2', 'rotate an API key'], env);
    expect(found.code).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject({ query: 'rotate an API key', k: 2, results: [{ documentPath: 'guides/authentication.md' }, expect.anything()] });
    // Piped, the lines are as wide as COLUMNS says (100 without it).
    const widest = async (extra: Record<string, string>) =>
      Math.max(...(await ragline(['search', '-k', '5', 'rotate an API key'], { ...env, ...extra })).stdout.split('\n').map((line) => line.length));
    expect(await widest({})).toBeLessThanOrEqual(100);
    expect(await widest({ COLUMNS: '180' })).toBeGreaterThan(100);
    expect(await widest({ COLUMNS: '180' })).toBeLessThanOrEqual(180);
    // Every result carries every score part, null where a side did not find it (no chunk holds the word).
    const vectorOnly = JSON.parse((await ragline(['search', '--json', '-k', '3', 'qwzxv'], env)).stdout).results;
    expect(vectorOnly).toHaveLength(3);
    for (const result of vectorOnly) expect(result).toMatchObject({ vectorRank: expect.any(Number), keywordRank: null, bm25: null });
    expect(process.exitCode).toBe(before);
  });

  test('a terminal that reports 0 columns (or too few to use) is laid out as piped output is: 100 columns, or COLUMNS', async () => {
    const home = tempDir('ragline-run-');
    const env = isolatedEnv(home, { RAGLINE_DB: path.join(home, 'run.db') });
    expect((await ragline(['ingest', writeTinyDocs()], env)).code).toBe(0);
    const piped = (await ragline(['search', '-k', '1', 'rotate an API key'], env)).stdout;
    expect(piped).toMatch(/keys\.md:1-3 +API keys +v1 k1 +“Rotate an API key/);
    const onTerminal = async (columns: number, extra: Record<string, string> = {}) => {
      const stdout = capture();
      Object.assign(stdout.stream, { isTTY: true, columns });
      const code = await run(['search', '-k', '1', 'rotate an API key'], { stdout: stdout.stream, stderr: capture().stream, env: { ...env, ...extra } });
      expect(code).toBe(0);
      return stdout.text();
    };
    for (const columns of [0, 1, Number.NaN]) expect(await onTerminal(columns)).toBe(piped);
    expect(await onTerminal(0, { COLUMNS: '180' })).toBe((await ragline(['search', '-k', '1', 'rotate an API key'], { ...env, COLUMNS: '180' })).stdout);
    // A width a terminal does report is kept: at 40 columns the heading has no room, the snippet goes below.
    expect(await onTerminal(40)).toMatch(/^ +1 +[\d.]+ +keys\.md:1-3 +v1 k1\n +“Rotate an API key/);
  });

  test('a search that finds nothing while another process ingests into the database says so', async () => {
    const home = tempDir('ragline-run-');
    const dbFile = path.join(home, 'run.db');
    const env = isolatedEnv(home, { RAGLINE_DB: dbFile });
    // A database whose only folder was forgotten: it holds no chunk.
    const docs = writeTinyDocs();
    expect((await ragline(['ingest', docs], env)).code).toBe(0);
    expect((await ragline(['forget', docs, '--yes'], env)).code).toBe(0);
    expect((await ragline(['search', 'rotate an API key'], env)).stderr).toMatch(/^No chunks matched\. Is anything ingested\?/);
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const db = new Database(dbFile);
      db.prepare("INSERT INTO meta (key, value) VALUES ('ingest.lock', ?)").run(JSON.stringify({ pid: other.pid, startedAt: '2026-01-01T00:00:00.000Z' }));
      db.close();
      const found = await ragline(['search', 'rotate an API key'], env);
      expect(found.code).toBe(0);
      expect(found.stderr.trim()).toBe(`No chunks matched while an ingest (pid ${other.pid}, started 2026-01-01T00:00:00.000Z) is writing to this database; search again when it is done.`);
      expect(JSON.parse((await ragline(['search', '--json', 'rotate an API key'], env)).stdout)).toMatchObject({ results: [], ingestRunning: { pid: other.pid } });
    } finally {
      other.kill();
    }
    // A lock no process could have written holds nothing: the plain message, no error.
    const db = new Database(dbFile);
    db.prepare("UPDATE meta SET value = '{oops' WHERE key = 'ingest.lock'").run();
    db.close();
    const broken = await ragline(['search', 'rotate an API key'], env);
    expect(broken.code).toBe(0);
    expect(broken.stderr).toMatch(/^No chunks matched\. Is anything ingested\?/);
  });

  test('usage errors and failures come back as exit codes, their messages on the given stderr', async () => {
    const home = tempDir('ragline-run-');
    const env = isolatedEnv(home);
    const unknown = await ragline(['bogus'], env);
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toContain("unknown command 'bogus'");
    const missing = await ragline(['--db', path.join(home, 'none.db'), 'stats'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('No database at');
    // A command's help and usage errors end the run, not the process running it.
    const help = await ragline(['config', 'show', '--help'], env);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage: ragline config show');
    const badOption = await ragline(['stats', '--bogus'], env);
    expect(badOption).toMatchObject({ code: 2, stdout: '' });
    expect(badOption.stderr).toContain("unknown option '--bogus'");
    expect(badOption.stderr).not.toContain('put -- before it');
    // Text that starts with "-" is read as an option; the error says how to give it as text.
    const dashed = await ragline(['search', '--leak-check=full'], env);
    expect(dashed).toMatchObject({ code: 2, stdout: '' });
    expect(dashed.stderr).toContain('To search for text that starts with "-", put -- before it: ragline search -- "--leak-check=full"');
    const misspelt = await ragline(['ask', '--jsn', 'question'], env);
    expect(misspelt.stderr).toContain('Did you mean --json?');
    expect(misspelt.stderr).not.toContain('put -- before it');
    // An empty --db is not the default database; ":memory:" would keep nothing.
    const blank = await ragline(['--db', ' ', 'stats'], env);
    expect(blank).toMatchObject({ code: 2, stdout: '' });
    expect(blank.stderr).toContain('--db was given an empty path.');
    const memory = await ragline(['--db', ':memory:', 'ingest', home], env);
    expect(memory.code).toBe(2);
    expect(memory.stderr).toContain('--db :memory: is a database that ends with the command');
    const version = await ragline(['--version'], env);
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0\n' });
    expect(process.exitCode).toBeUndefined();
  });

  test('runs leave nothing behind: no file open on the database (it can be deleted), no listener on the process or its streams, no handle, exitCode and cwd as found', async () => {
    const home = tempDir('ragline-run-');
    const db = path.join(home, 'leak.db');
    const env = isolatedEnv(home, { RAGLINE_DB: db });
    const attached = () => ({
      sigint: process.listenerCount('SIGINT'),
      sigterm: process.listenerCount('SIGTERM'),
      stdoutError: process.stdout.listenerCount('error'),
      stderrError: process.stderr.listenerCount('error'),
      stdin: process.stdin.listenerCount('data') + process.stdin.listenerCount('end') + process.stdin.listenerCount('keypress'),
      exitCode: process.exitCode,
      cwd: process.cwd(),
      // Handles that keep a process alive (workers, sockets, files being watched); timers are the test runner's.
      resources: process.getActiveResourcesInfo().filter((kind) => kind !== 'Timeout').sort(),
    });
    const openOnDb = () => (fs.existsSync('/proc/self/fd') ? fs.readdirSync('/proc/self/fd').map((fd) => { try { return fs.readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } }).filter((target) => target.startsWith(db)) : []);
    const before = attached();
    const runs: [string[], string?][] = [
      [['ingest', FIXTURE_DOCS]],
      [['search', 'rotate an API key']],
      [['ask', 'How do I rotate an API key?']],
      [['chat', '--new', 'leak'], 'How do I rotate an API key?\n/history\n'],
      [['sessions', 'list']],
      [['replay', 'leak']],
      [['stats']],
      [['doctor']],
      [['prune', '--older-than', '30d']],
      [['ingest', FIXTURE_DOCS, '--reindex']],
    ];
    for (const [args, input] of runs) {
      const result = await runCliInProcess(args, { env, input });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      // Checked after each run: an unclosed database would be closed when collected.
      expect(openOnDb(), args.join(' ')).toEqual([]);
    }
    expect(attached()).toEqual(before);
    fs.rmSync(home, { recursive: true });
    expect(fs.existsSync(db)).toBe(false);
  });

  test('Ctrl-C between two of several paths stops there: the paths ingested are kept and said, those not reached are named, exit 130', async () => {
    const home = tempDir('ragline-run-');
    const env = isolatedEnv(home, { RAGLINE_DB: path.join(home, 'run.db') });
    const [first, second, third] = ['first', 'second', 'third'].map((name) => {
      fs.mkdirSync(path.join(home, name));
      fs.writeFileSync(path.join(home, name, `${name}.md`), `# ${name}\n\nThe ${name} folder.\n`);
      return path.join(home, name);
    }) as [string, string, string];
    const signals = new EventEmitter();
    const stdout = capture();
    const stderr = capture();
    // Ctrl-C as soon as the first path's summary line is out.
    stdout.stream.on('data', (chunk: Buffer) => {
      if (chunk.toString().startsWith(`Ingested ${first}:`)) signals.emit('SIGINT');
    });
    const code = await run(['ingest', first, second, third], { stdout: stdout.stream, stderr: stderr.stream, env, signals, exit: () => {} });
    expect(code).toBe(130);
    // The signal came while the first path's summary was written: the second was not started.
    expect(stdout.text().split('\n')).toEqual([
      expect.stringMatching(new RegExp(`^Ingested ${first}: 1 added, 0 changed, 0 unchanged, 0 removed, skipped none; 1 chunk written`)),
      expect.stringMatching(/^Total for 1 path \(interrupted\): 1 added, /),
      '',
    ]);
    expect(stderr.text()).toBe(`Interrupted: what was written is kept; run the same command again to finish.\nNot ingested: ${second}, ${third}.\n`);
    const db = new Database(path.join(home, 'run.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT DISTINCT root FROM documents').pluck().all()).toEqual([fs.realpathSync(first)]);
    } finally {
      db.close();
    }
    // The same command again finishes the job.
    const again = await ragline(['ingest', first, second, third], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^Total for 3 paths: 2 added, 0 changed, 1 unchanged, /m);
  });

  test('--json, Ctrl-C between two of several paths: the document says the total was interrupted and names the paths not ingested', async () => {
    const home = tempDir('ragline-run-');
    const env = isolatedEnv(home, { RAGLINE_DB: path.join(home, 'run.db') });
    const [first, second, third] = ['first', 'second', 'third'].map((name) => {
      fs.mkdirSync(path.join(home, name));
      if (name !== 'first') fs.writeFileSync(path.join(home, name, `${name}.md`), `# ${name}\n\nThe ${name} folder.\n`);
      return path.join(home, name);
    }) as [string, string, string];
    const signals = new EventEmitter();
    const stdout = capture();
    const stderr = capture();
    // Ctrl-C as soon as the first path (an empty folder) has said it found nothing: --json prints nothing before the end.
    stderr.stream.on('data', (chunk: Buffer) => {
      if (chunk.toString().startsWith(`No files found in ${first}`)) signals.emit('SIGINT');
    });
    const code = await run(['ingest', first, second, third, '--json'], { stdout: stdout.stream, stderr: stderr.stream, env, signals, exit: () => {} });
    expect(code).toBe(130);
    const document = JSON.parse(stdout.text());
    expect(document).toMatchObject({ paths: [{ path: first, interrupted: false }], notIngested: [second, third], total: { paths: 1, interrupted: true } });
    expect(stderr.text()).toContain(`Interrupted: what was written is kept; run the same command again to finish.\nNot ingested: ${second}, ${third}.\n`);
  });

  test('relative paths (--db, --config, the folder to ingest, a tasks file) are read against the run\'s working directory, not the process\'s', async () => {
    const home = tempDir('ragline-run-');
    const env = isolatedEnv(home);
    fs.mkdirSync(path.join(home, 'docs'));
    fs.writeFileSync(path.join(home, 'docs', 'keys.md'), '# API keys\n\nRotate an API key from the dashboard under Settings > Keys.\n');
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ 'retrieval.k': 1 }));
    fs.writeFileSync(path.join(home, 'tasks.jsonl'), JSON.stringify({ question: 'How do I rotate an API key?', relevant: ['keys.md'] }) + '\n');
    const ingested = await runCliInProcess(['--db', 'rel.db', 'ingest', 'docs', '--json'], { env, cwd: home });
    expect(ingested.code, ingested.stderr).toBe(0);
    expect(JSON.parse(ingested.stdout)).toMatchObject({ db: path.join(home, 'rel.db'), files: { added: 1 } });
    expect(fs.existsSync(path.join(home, 'rel.db'))).toBe(true);
    expect(fs.existsSync(path.resolve('rel.db'))).toBe(false);
    const found = await runCliInProcess(['--db', 'rel.db', '--config', 'settings.json', 'search', '--json', 'rotate'], { env, cwd: home });
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout)).toMatchObject({ k: 1, results: [{ documentPath: 'keys.md' }] });
    const evaluated = await runCliInProcess(['--db', 'rel.db', 'eval', 'tasks.jsonl', '--json', '--variants', 'raw'], { env, cwd: home });
    expect(evaluated.code, evaluated.stderr).toBe(0);
  });
});
