// `ragline chat`: the REPL (TTY) and the piped mode (one question per line).
// All conversation logic lives in src/chat; this file reads lines, handles
// slash commands and Ctrl-C, and renders the turn's events.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import type { Command } from 'commander';
import { Chat } from '../../app/chat.js';
import { applyRetention } from '../../app/prune.js';
import { listSessions, termShares } from '../../app/sessions.js';
import type { Workspace } from '../../app/index.js';
import { decimalNumber, DEFAULTS, MAX_K, type ResolvedConfig } from '../../config/index.js';
import type { ChunkLocation, RewritePolicy } from '../../domain/index.js';
import { UserError } from '../../util/errors.js';
import { sqliteRuntimeError } from '../../util/sqlite-errors.js';
import { oneLine, sanitizeForTerminal } from '../../util/sanitize.js';
import { count, shellWord } from '../../util/words.js';
import { runTurnWithOutput, warnWhenNothingIngested } from '../chat-session.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { ioOf, onStop, setExitCode, stopExitCode, type CliIo, type StopSignal } from '../io.js';
import { outputFor, type Output } from '../output.js';
import { reportError } from '../report-error.js';
import { describePrune, topicList } from '../render.js';
import { formatLocation } from '../../retrieve/search.js';
import { judgeLastTurn } from '../repl-judge.js';
import { pickSession } from '../pick-session.js';
import { readQuestion } from '../read-question.js';

interface ChatFlags {
  session?: string | boolean;
  continue?: boolean;
  new?: string | boolean;
  k?: string;
  rewrite?: string;
  scope?: string;
  json?: boolean;
}

const HELP = `Commands:
  /help               this list
  /new [name]         start a new session
  /sessions           switch to another session
  /history            this session's questions and how they were searched
  /show N             the whole text of retrieved chunk N of the last answer
  /k N                retrieve N chunks per question
  /rewrite MODE       auto (rewrite follow-ups only), always, or never
  /topics             what this conversation is about (tracked topics)
  /fork N             branch a new session from turn N of this one
  /good [N...]        retrieved chunks N of the last turn were relevant (no N: the ones the answer cited)
  /bad                nothing the last turn retrieved was useful
  /expect DOCUMENT    a document the last question should have found
  /edit [text]        write the question in $VISUAL or $EDITOR, then ask it
  /quit               leave (also /exit, /q, Ctrl-D, or Ctrl-C on an empty line)
Ctrl-C while an answer streams stops it; the turn is kept. Tab completes commands.
A question may start with a path (/etc/hosts format?); to start one with any other
"/" word, type "//" (//help is asked as "/help").`;

/** The slash commands, as /help lists them: what Tab completes. */
const SLASH_COMMANDS = [...HELP.matchAll(/^ {2}(\/[a-z]+)/gm)].map((match) => match[1]!);
/** Every command name a "/" line may give: those /help lists and /quit's aliases. */
const COMMAND_NAMES = new Set([...SLASH_COMMANDS.map((command) => command.slice(1)), 'exit', 'q']);

/**
 * A line that starts with "/": a command, or a question. "//" escapes the slash
 * (the question is the rest, with one "/"); a first word that is no command and
 * looks like a path (a second "/" or a ".") is asked as it is, so
 * "/usr/lib/node_modules is where npm puts globals?" is a question. Any other
 * "/word" is a command (an unknown one is said so).
 */
export function readSlashLine(line: string): { command: string } | { question: string } {
  if (line.startsWith('//')) return { question: line.slice(1) };
  const word = line.slice(1).split(/\s/, 1)[0]!;
  if (!COMMAND_NAMES.has(word) && /[/.]/.test(word)) return { question: line };
  return { command: line };
}

/** readline's completer: a line that starts a slash command completes to the commands it could be. */
export function completeSlashCommand(line: string): [string[], string] {
  if (!line.startsWith('/') || /\s/.test(line)) return [[], line];
  const hits = SLASH_COMMANDS.filter((command) => command.startsWith(line));
  return [hits.length === 1 ? [`${hits[0]} `] : hits, line];
}

export function registerChat(program: Command): void {
  program
    .command('chat')
    .description('ask questions about your documents, with follow-ups understood (REPL on a terminal, one question per line when piped)')
    .option('-c, --continue', 'continue the most recent session')
    .option('--session [id|name]', 'continue this session (`last` for the most recent); without a value, choose from a list')
    .option('--new [name]', 'start a new session, optionally named (the default: a session is stored at its first question)')
    .option('-k, --k <n>', `chunks to retrieve per question (default ${DEFAULTS['retrieval.k']})`)
    .option('--rewrite <mode>', 'follow-up rewriting: auto, always or never')
    .option('--scope <text>', 'what the assistant is for, e.g. "Orbitly product documentation"')
    .option('--json', 'print each turn as NDJSON events (start, rewrite, retrieval, token, error, done)')
    .addHelpText(
      'after',
      `
Examples:
  ragline chat                       a new session
  ragline chat -c                    continue the most recent session
  ragline chat --session onboarding  continue a given session (--session alone: choose from a list)
  ragline chat --new onboarding --scope "Orbitly product documentation"
  echo "How do I rotate an API key?" | ragline chat --json

${HELP}`,
    )
    .action(async (flags: ChatFlags, command: Command) => {
      const settings = settingsFor(command, { 'retrieval.k': flags.k, 'rewrite.policy': flags.rewrite, 'assistant.scope': flags.scope });
      const output = outputFor(command);
      const io = ioOf(command);
      const workspace = openWorkspaceFor(settings);
      try {
        await warnWhenNothingIngested(workspace, output);
        const interactive = Boolean(io.stdin.isTTY) && !flags.json;
        // A chat session asks many questions: copy the vectors and the keyword index
        // into memory while the user types (the keyword copy is built on a worker
        // thread, beside the vector copy's slices here).
        if (interactive && !workspace.postgres) void workspace.warmInBackground().catch(() => {});
        // A local server loads a model on its first request: start that while the user types.
        if (interactive) void workspace.warmModels().catch(() => {});
        const chat = await chooseSession(workspace, flags, interactive, io);
        if (!chat) {
          // The picker was cancelled (Ctrl-C or Escape): leave quietly.
          setExitCode(command, 130);
          return;
        }
        // Once the session is chosen, so that the one being continued is kept whole, however old.
        // (history.retention is not applied on Postgres yet: prune does not run there.)
        const retention = await applyRetention(workspace, { keepSessionId: chat.planned ? undefined : chat.session.id });
        // Said only when something was removed.
        if (retention && retention.report.turns > 0) output.err(output.errColor.dim(`history.retention ${retention.retention}: ${describePrune(retention.report).toLowerCase()}`));
        const state: ReplState = { chat, lastChunks: [], io };
        const code = interactive ? await repl(settings, workspace, state, output) : await piped(workspace, state, output, Boolean(flags.json));
        if (code !== undefined) setExitCode(command, code);
      } finally {
        await workspace.close();
      }
    });
}

/**
 * The chat a command starts: in a new session (planned, stored at its first
 * question) unless -c/--continue or --session names one. `--session` without a
 * value shows a picker on a terminal. Undefined when the picker was cancelled.
 */
async function chooseSession(workspace: Workspace, flags: ChatFlags, interactive: boolean, io: CliIo): Promise<Chat | undefined> {
  const chosen = [flags.continue && '-c/--continue', flags.session !== undefined && '--session', flags.new !== undefined && '--new'].filter(Boolean);
  if (chosen.length > 1) throw new UserError(`${chosen.join(' and ')} cannot be used together.`, { hint: 'Use -c for the most recent session, --session <id|name> for a given one, or neither for a new one.', exitCode: 2 });
  if (typeof flags.session === 'string') return Chat.open(workspace, { session: flags.session });
  if (flags.session === true) {
    if (!interactive) throw new UserError('--session needs a session id or name when the chat is not on a terminal.', { hint: 'List them with `ragline sessions`; -c continues the most recent one.', exitCode: 2 });
    if ((await listSessions(workspace)).length === 0) throw new UserError('There are no chat sessions yet.', { hint: 'Start one with `ragline chat`.', exitCode: 2 });
    const id = await pickSession(workspace, 'Continue which session?', io);
    return id === undefined ? undefined : Chat.open(workspace, { session: id });
  }
  return Chat.open(workspace, { continueLast: flags.continue, name: typeof flags.new === 'string' ? flags.new : undefined });
}

/** Mutable REPL state: the chat (its session), per-session settings and the last retrieval. */
interface ReplState {
  chat: Chat;
  k?: number;
  rewritePolicy?: RewritePolicy;
  lastChunks: (ChunkLocation & { text: string; heading: string })[];
  /** The run's streams, environment and signals. */
  io: CliIo;
}

/** Asks each line of stdin; returns the exit code when it is not 0 (130 interrupted, 1 a turn failed). */
async function piped(workspace: Workspace, state: ReplState, output: Output, json: boolean): Promise<number | undefined> {
  const { chat, io } = state;
  // Providers and prepared statements are made once; each turn names its session.
  // Before the lines are read: their iterator sees no line that comes earlier.
  await chat.prepare();
  const lines = readline.createInterface({ input: io.stdin, crlfDelay: Infinity, terminal: false });
  // With --json, stdout carries NDJSON events only: what slash commands print goes to stderr.
  const commandOutput: Output = json ? { ...output, color: output.errColor, isTTY: output.errIsTTY, out: output.err } : output;
  // Ctrl-C (or SIGTERM, SIGHUP) stops the answer in progress (stored `interrupted` with
  // what arrived, as in `ask` and the REPL) and reads no further questions.
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const stopListening = onStop(io.signals, (signal) => {
    stoppedBy ??= signal;
    controller.abort();
    lines.close();
  });
  let failed = false;
  try {
    for await (const raw of lines) {
      if (controller.signal.aborted) break;
      let line = raw.trim();
      if (!line) continue;
      if (line.startsWith('/')) {
        const read = readSlashLine(line);
        if ('command' in read) {
          try {
            if (await slashCommand(read.command, state, workspace, commandOutput, false)) break;
          } catch (err) {
            // A write that failed (a full disk, a read-only file): said, and the next line is read.
            if (!isLineError(err)) throw err;
            reportError(err, output, io.env);
            failed = true;
          }
          continue;
        }
        line = read.question;
      }
      // A transcript of several questions reads like the REPL: each question, then its turn.
      if (!json) output.out(`${output.color.bold('›')} ${oneLine(line, 500)}`);
      let result;
      try {
        result = await runTurnWithOutput(chat, line, output, {
          k: state.k,
          rewritePolicy: state.rewritePolicy,
          json,
          signal: controller.signal,
        });
      } catch (err) {
        // A turn that could not be kept (its session removed meanwhile, a full disk): said, and the next line is read.
        if (!isLineError(err)) throw err;
        reportError(err, output, io.env);
        failed = true;
        continue;
      }
      state.lastChunks = result.chunks;
      if (result.status === 'failed') failed = true;
      if (controller.signal.aborted) break;
    }
  } finally {
    stopListening();
    lines.close();
  }
  if (!json && !chat.planned) output.err(output.errColor.dim(`session ${chat.session.name ?? chat.session.id}`));
  if (controller.signal.aborted) return stopExitCode(stoppedBy);
  if (failed) return 1;
  return undefined;
}

async function repl(settings: ResolvedConfig, workspace: Workspace, state: ReplState, output: Output): Promise<number | undefined> {
  const { chat, io } = state;
  const { session } = chat;
  const { color } = output;
  const earlier = await chat.turns();
  const turns = earlier.length;
  output.out(
    color.dim(
      `${chat.planned ? 'new ' : ''}session ${session.name ?? session.id}${turns ? ` (${turns} earlier ${turns === 1 ? 'turn' : 'turns'})` : ''} · ${settings.config.db} · /help for commands, Ctrl-D to leave`,
    ),
  );
  const inputHistory: string[] = earlier.map((t) => t.question).reverse();
  await chat.prepare();
  /** Set when termination or a closed terminal stopped an answer: the REPL then ends after keeping the turn. */
  let leaving: StopSignal | undefined;
  for (;;) {
    const line = await readQuestion({ history: inputHistory, prompt: color.bold('› '), completer: completeSlashCommand, stdin: io.stdin, stdout: io.stdout });
    if (line === null) break;
    let question = line.trim();
    if (question === '/edit' || question.startsWith('/edit ')) {
      // A long question, written in the user's editor; asked as it is when saved non-empty.
      question = editQuestion(question.slice('/edit'.length).trim(), output, io);
      if (question) output.out(`${color.bold('›')} ${oneLine(question, 500)}`);
    }
    if (!question) continue;
    if (question.startsWith('/')) {
      const read = readSlashLine(question);
      if ('command' in read) {
        try {
          if (await slashCommand(read.command, state, workspace, output, true)) break;
        } catch (err) {
          // A prompt cancelled with Ctrl-C, or a store error (a full disk: in the CLI's words): report it, keep the REPL.
          if (isLineError(err)) reportError(err, output, io.env);
          else output.err(`${output.errColor.red('error:')} ${oneLine((err as Error).message)}`);
        }
        continue;
      }
      question = read.question;
    }
    // Ctrl-C stops this answer and keeps the REPL; SIGTERM and SIGHUP stop it too (the
    // turn is kept, interrupted), and then the REPL.
    const controller = new AbortController();
    const stopListening = onStop(io.signals, (signal) => {
      if (signal !== 'SIGINT') leaving = signal;
      controller.abort();
    });
    try {
      // in the chat's session: /new, /sessions and /fork switch it
      const result = await runTurnWithOutput(chat, question, output, {
        k: state.k,
        rewritePolicy: state.rewritePolicy,
        json: false,
        signal: controller.signal,
      });
      state.lastChunks = result.chunks;
    } catch (err) {
      // The REPL stays alive: a turn's failure is reported (a failed write as the CLI words it), the session kept.
      if (isLineError(err)) reportError(err, output, io.env);
      else if (!controller.signal.aborted) output.err(`${output.errColor.red('error:')} ${oneLine((err as Error).message)}`);
    } finally {
      stopListening();
    }
    if (leaving) break;
  }
  if (chat.planned) output.out(color.dim('No question asked: nothing saved.'));
  else output.out(color.dim(`session ${chat.session.name ?? chat.session.id} saved. Replay it with: ${replayCommand(chat.session.name ?? chat.session.id, settings)}`));
  return leaving ? stopExitCode(leaving) : undefined;
}

/**
 * A failure that ends one line of the chat and not the chat: a UserError (a session
 * removed meanwhile, a name taken) or SQLite failing a write (a full disk, a read-only
 * file), which reportError says in the CLI's words. The next line is read.
 */
function isLineError(err: unknown): boolean {
  return err instanceof UserError || sqliteRuntimeError(err) !== undefined;
}

/**
 * The command that replays `session`, shell-quoted: with the --db the chat was
 * started with, since a replay without it opens the default database instead.
 */
export function replayCommand(session: string, settings: Pick<ResolvedConfig, 'config' | 'sources'>): string {
  const db = settings.sources['db'] === 'flag' ? ['--db', settings.config.db] : [];
  return ['ragline', ...db, 'replay', session].map(shellWord).join(' ');
}

/**
 * Opens $VISUAL or $EDITOR (else vi) on a temporary file holding `initial`, waits
 * for it, and returns what was saved, trimmed; empty when nothing was written or
 * the editor failed (said on stderr). The file is removed.
 */
function editQuestion(initial: string, output: Output, io: CliIo): string {
  const editor = io.env.VISUAL?.trim() || io.env.EDITOR?.trim() || 'vi';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-edit-'));
  const file = path.join(dir, 'question.md');
  try {
    fs.writeFileSync(file, initial ? `${initial}\n` : '', { mode: 0o600 });
    // Through the shell: EDITOR may carry arguments ("code --wait").
    const run = spawnSync(`${editor} "${file}"`, { shell: true, stdio: 'inherit', env: io.env, cwd: io.cwd });
    if (run.error || run.status !== 0) {
      output.err(`${output.errColor.red('error:')} the editor (${editor}) ${run.error ? `could not start: ${run.error.message}` : `exited with ${run.status ?? run.signal}`}; nothing was asked.`);
      output.err(output.errColor.dim('Set VISUAL or EDITOR to an editor that waits until you close the file, e.g. EDITOR=nano.'));
      return '';
    }
    const text = fs.readFileSync(file, 'utf8').trim();
    if (!text) output.out(output.color.dim('(empty: nothing asked)'));
    return text;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Handles a slash command; returns true when the REPL should end. */
async function slashCommand(line: string, state: ReplState, workspace: Workspace, output: Output, interactive: boolean): Promise<boolean> {
  const [name, ...args] = line.slice(1).split(/\s+/);
  const arg = args.join(' ').trim();
  const { color } = output;
  const { chat } = state;
  switch (name) {
    case 'quit':
    case 'exit':
    case 'q':
      return true;
    case 'help':
      output.out(HELP);
      return false;
    case 'new':
      try {
        const session = await chat.startNew(arg || undefined);
        state.lastChunks = [];
        output.out(color.dim(`new session ${session.name ?? session.id}`));
      } catch (err) {
        output.err((err as Error).message);
      }
      return false;
    case 'sessions': {
      const sessions = await listSessions(workspace);
      if (!interactive) {
        for (const s of sessions) output.out(`${s.id}  ${s.name ?? ''}  ${count(s.turns, 'turn')}  ${oneLine(s.firstQuestion ?? '', 60)}`);
        return false;
      }
      if (sessions.length === 0) {
        output.out('No sessions yet.');
        return false;
      }
      const id = await pickSession(workspace, 'Switch to session', state.io);
      if (id === undefined) return false; // cancelled: stay where we were
      const session = await chat.switchTo(id);
      state.lastChunks = [];
      output.out(color.dim(`session ${session.name ?? session.id}`));
      return false;
    }
    case 'history': {
      const turns = await chat.turns();
      if (turns.length === 0) output.out('No turns yet in this session.');
      for (const turn of turns) {
        const searched = turn.standaloneQuery && turn.standaloneQuery !== turn.question ? color.dim(` → ${oneLine(turn.standaloneQuery, 80)}`) : '';
        output.out(`${String(turn.ordinal).padStart(3)}  ${oneLine(turn.question, 80)}${searched}${turn.status !== 'answered' ? color.yellow(` (${turn.status})`) : ''}`);
      }
      return false;
    }
    case 'show': {
      const n = decimalNumber(arg);
      const chunk = state.lastChunks[n - 1];
      if (!Number.isInteger(n) || !chunk) {
        output.err(state.lastChunks.length ? `Give a chunk number from 1 to ${state.lastChunks.length}.` : 'No chunks retrieved yet in this session.');
        return false;
      }
      output.out(color.cyan(oneLine(formatLocation(chunk))) + (chunk.heading ? '  ' + color.bold(oneLine(chunk.heading, 80)) : ''));
      // Runs of blank lines (the Node.js docs' change-log comments, blanked to keep line numbers) shown as one.
      output.out(sanitizeForTerminal(chunk.text.replace(/\n(?:[ \t]*\n){2,}/g, '\n\n')));
      return false;
    }
    case 'k': {
      const k = decimalNumber(arg);
      if (!Number.isInteger(k) || k < 1 || k > MAX_K) output.err(`Usage: /k N (1-${MAX_K.toLocaleString('en-US')}, as -k)`);
      else {
        state.k = k;
        output.out(color.dim(`retrieving ${count(k, 'chunk')} per question`));
      }
      return false;
    }
    case 'rewrite':
      if (!['auto', 'always', 'never'].includes(arg)) output.err('Usage: /rewrite auto|always|never');
      else {
        state.rewritePolicy = arg as RewritePolicy;
        output.out(color.dim(`rewrite policy: ${arg}`));
      }
      return false;
    case 'topics': {
      const topics = await chat.topics();
      if (topics.length === 0) output.out('No topics tracked yet.');
      else output.out(topicList(topics, color, await termShares(workspace)));
      return false;
    }
    case 'fork': {
      const n = decimalNumber(arg);
      // Turn numbers, as /history lists them: after `prune` they need not start at 1.
      const ordinals = (await chat.turns()).map((turn) => turn.ordinal);
      if (!Number.isInteger(n) || !ordinals.includes(n)) {
        output.err(ordinals.length ? `Usage: /fork N, with N the number of a turn of this session (${ordinals[0]} to ${ordinals.at(-1)}; /history lists them): the last turn to keep.` : 'Nothing to fork yet: this session has no turns. Use /new instead.');
        return false;
      }
      const fork = await chat.fork(n);
      state.lastChunks = [];
      const kept = ordinals.filter((ordinal) => ordinal <= n).length - fork.unfinished.length;
      output.out(color.dim(`forked: new session ${fork.id} with ${count(kept, 'turn')}, through turn ${n}`));
      return false;
    }
    case 'good':
    case 'bad':
    case 'expect':
      await judgeLastTurn(workspace, name, arg, chat.session.id, output, state.io.cwd);
      return false;
    case 'edit':
      output.err('/edit opens an editor: it works in the REPL on a terminal.');
      return false;
    default:
      output.err(`Unknown command /${name}. Type /help for the list.`);
      return false;
  }
}
