// `ragline sessions`: list (the default), show, rename, rm, export, fork and judge
// the stored chat sessions. All reads and writes go through src/app/sessions; this
// file parses, confirms and renders. Session names, questions and answers are
// user or model text: sanitised before they reach the terminal.

import fs from 'node:fs';
import type { Command } from 'commander';
import { exportSessionJson, exportSessionMarkdown, exportSessionTasks, forkSession, indexedPaths, judgeSessionTurn, listSessions, removeSession, renameSession, requireSession, sessionTurns, showSession, termShares } from '../../app/sessions.js';
import type { SessionInfo, StoredTurn, Workspace } from '../../app/index.js';
import { decimalNumber } from '../../config/index.js';
import { UserError } from '../../util/errors.js';
import { oneLine } from '../../util/sanitize.js';
import { openWorkspaceFor, settingsFor, wholeNumberFlag } from '../context.js';
import { inCwd, ioOf } from '../io.js';
import { fileSafe, outputFor, toJson, type Output } from '../output.js';
import { topicList } from '../render.js';
import { judgmentText } from '../judgment-view.js';
import { stamp } from '../../util/time.js';
import { count } from '../../util/words.js';

export function registerSessions(program: Command): void {
  const sessions = program
    .command('sessions')
    .description('list, show, rename, remove, export, fork and judge chat sessions')
    .addHelpText(
      'after',
      `
Examples:
  ragline sessions
  ragline sessions show last
  ragline sessions rename s-7f3a2c onboarding
  ragline sessions export onboarding --format md -o onboarding.md
  ragline sessions fork onboarding --at 2 --name onboarding-b
  ragline sessions judge onboarding 2 --relevant guides/authentication.md
  ragline sessions export onboarding --format tasks -o regression.jsonl
  ragline sessions rm onboarding --yes`,
    );

  sessions
    .command('list', { isDefault: true })
    .description('every session, most recently active first')
    .option('--json', 'print as JSON')
    .action((flags: { json?: boolean }, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const listing = await listSessions(workspace);
        if (flags.json) return output.json(listing);
        if (listing.length === 0) {
          output.out('No sessions yet. Start one with `ragline chat`.');
          return;
        }
        const names = new Map(listing.map((s) => [s.id, s.name]));
        const { color } = output;
        // Ids are 8 characters on SQLite, 14 on Postgres (where many users make sessions in one table).
        const idWidth = Math.max(9, ...listing.map((s) => s.id.length + 1));
        output.out(color.dim(`${'id'.padEnd(idWidth)} ${'name'.padEnd(20)} ${'turns'.padStart(5)}  ${'last active'.padEnd(16)}  first question`));
        for (const s of listing) {
          const from = s.parentSessionId ? color.dim(`  (fork of ${oneLine(names.get(s.parentSessionId) ?? s.parentSessionId, 30)} at turn ${s.parentTurn})`) : '';
          output.out(
            `${s.id.padEnd(idWidth)} ${oneLine(s.name ?? '', 20).padEnd(20)} ${String(s.turns).padStart(5)}  ${stamp(s.lastActive).slice(0, 16).padEnd(16)}  ${oneLine(s.firstQuestion ?? '', 60)}${from}`,
          );
        }
      }),
    );

  sessions
    .command('show')
    .description("a session's details: metadata, its turns, tracked topics, where it was forked from")
    .argument('<session>', 'id, name, or `last`')
    .option('--json', 'print as JSON')
    .action((ref: string, flags: { json?: boolean }, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const { session, turns, topics, parent, judgments } = await showSession(workspace, ref);
        if (flags.json) {
          output.json({
            session,
            parent: parent ?? null,
            topics,
            turns: turns.map((t) => ({
              ordinal: t.ordinal,
              createdAt: t.createdAt,
              status: t.status,
              question: t.question,
              standaloneQuery: t.standaloneQuery,
              rewriteDecision: t.rewriteDecision,
              answerKind: t.answerKind,
              error: t.error,
              judgment: judgments.get(t.id) ?? null,
            })),
          });
          return;
        }
        const { color } = output;
        output.out(`${color.bold('session')}  ${session.id}`);
        output.out(`${color.bold('name')}     ${session.name ? oneLine(session.name, 80) : color.dim('(none)')}`);
        output.out(`${color.bold('created')}  ${stamp(session.createdAt)}`);
        output.out(`${color.bold('updated')}  ${stamp(session.updatedAt)}`);
        if (session.parentSessionId) {
          output.out(`${color.bold('forked')}   from ${parent?.name ? `${oneLine(parent.name, 60)} (${session.parentSessionId})` : session.parentSessionId} at turn ${session.parentTurn}`);
        }
        output.out(`${color.bold('topics')}   ${topics.length ? topicList(topics, color, await termShares(workspace)) : color.dim('(none tracked)')}`);
        output.out(`${color.bold('turns')}    ${turns.length}${statusCounts(turns)}${judgments.size ? `, ${judgments.size} judged` : ''}`);
        const indexed = await indexedPaths(workspace);
        for (const turn of turns) {
          const searched = turn.standaloneQuery && turn.standaloneQuery !== turn.question ? color.dim(` → ${oneLine(turn.standaloneQuery, 80)}`) : '';
          const status = turn.status === 'answered' ? '' : color.yellow(` (${turn.status})`);
          output.out(`  ${String(turn.ordinal).padStart(3)}  ${oneLine(turn.question, 80)}${searched}${status}`);
          const judgment = judgments.get(turn.id);
          if (judgment) output.out(`       ${color.dim('judged:')} ${judgmentText(judgment, indexed, color)}`);
        }
      }),
    );

  sessions
    .command('rename')
    .description('give a session a (new) name')
    .argument('<session>', 'id, name, or `last`')
    .argument('<name>', 'the new name')
    .action((ref: string, name: string, _flags: unknown, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const { before: session, after: renamed } = await renameSession(workspace, ref, name);
        output.out(`Renamed ${session.id}${session.name ? ` (was ${oneLine(session.name, 60)})` : ''} to ${oneLine(renamed.name ?? '', 60)}.`);
      }),
    );

  sessions
    .command('rm')
    .alias('remove')
    .description('remove a session with its turns and retrieval rows (forks keep their own copies)')
    .argument('<session>', 'id, name, or `last`')
    .option('-y, --yes', 'do not ask for confirmation')
    .action((ref: string, flags: { yes?: boolean }, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const session = await requireSession(workspace, ref);
        const turns = (await sessionTurns(workspace, session.id)).length;
        const io = ioOf(command);
        const what = `session ${session.name ? `${oneLine(session.name, 60)} (${session.id})` : session.id} and its ${turns} turn${turns === 1 ? '' : 's'}`;
        if (!flags.yes) {
          if (!io.stdin.isTTY || !io.stdout.isTTY) {
            throw new UserError(`Not removing ${what}: there is no terminal to confirm on.`, {
              hint: `Add --yes to remove it without asking: ragline sessions rm ${session.id} --yes`,
              exitCode: 2,
            });
          }
          const ok = await (await import('@inquirer/prompts')).confirm({ message: `Remove ${what}?`, default: false }, { input: io.stdin, output: io.stdout });
          if (!ok) {
            output.out('Nothing removed.');
            return;
          }
        }
        await removeSession(workspace, session.id);
        output.out(`Removed ${what}.`);
      }),
    );

  sessions
    .command('export')
    .description('write a session as Markdown or JSON, or its judged turns as eval tasks (to stdout, or a file with -o)')
    .argument('<session>', 'id, name, or `last`')
    .option('--format <format>', 'md, json, or tasks (judged turns in the tasks.jsonl format `ragline eval` reads)', 'md')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action((ref: string, flags: { format: string; output?: string }, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const format = flags.format.trim().toLowerCase();
        if (format !== 'md' && format !== 'json' && format !== 'markdown' && format !== 'tasks') {
          throw new UserError(`--format must be md, json or tasks, got "${flags.format}".`, { exitCode: 2 });
        }
        const session = await requireSession(workspace, ref);
        const text = format === 'json' ? await exportSessionJson(workspace, session) : format === 'tasks' ? await exportTasks(workspace, session, output) : await exportSessionMarkdown(workspace, session);
        if (flags.output) {
          const target = inCwd(ioOf(command), flags.output);
          const existing = statOf(target);
          if (existing !== undefined && isDatabaseFile(existing, workspace.config.db)) {
            throw new UserError(`${flags.output} is the database this command reads; writing the export there would destroy it.`, {
              hint: 'Give -o another file, e.g. -o session.md.',
              exitCode: 2,
            });
          }
          try {
            writeWhole(target, existing, fileSafe(text));
          } catch (err) {
            throw new UserError(`Cannot write ${flags.output}: ${(err as Error).message}`, { exitCode: 1 });
          }
          output.err(output.errColor.dim(`wrote ${flags.output}`));
        } else {
          output.write(text);
        }
      }),
    );

  sessions
    .command('fork')
    .description('a new session with the first N turns of this one (the original is untouched)')
    .argument('<session>', 'id, name, or `last`')
    .requiredOption('--at <turn>', 'the last turn to copy')
    .option('--name <name>', 'name of the new session')
    .option('--json', 'print the new session as JSON')
    .action((ref: string, flags: { at: string; name?: string; json?: boolean }, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const at = wholeNumberFlag(flags.at, '--at', 1, Number.MAX_SAFE_INTEGER, 'a turn number');
        const { source, fork } = await forkSession(workspace, ref, at, flags.name);
        if (flags.json) return output.json(fork);
        output.out(`Forked ${source.name ? oneLine(source.name, 60) : source.id} at turn ${at}: new session ${fork.name ? `${oneLine(fork.name, 60)} (${fork.id})` : fork.id}.`);
        if (fork.unfinished.length > 0) output.err(output.errColor.dim(`Not copied: ${count(fork.unfinished.length, 'turn')} not finished (${fork.unfinished.join(', ')}): its chat was stopped before the answer was stored.`));
        output.err(output.errColor.dim(`Continue it with: ragline chat --session ${fork.name ?? fork.id}`));
      }),
    );

  sessions
    .command('judge')
    .description("record which documents answer a turn's question, for `eval --from-sessions` and `replay --rerun`")
    .argument('<session>', 'id, name, or `last`')
    .argument('<turn>', 'turn number (see `ragline sessions show <session>`)')
    .option('--relevant <documents...>', 'documents that answer the question: paths as ingested (guides/auth.md), file paths, or file names (with or without extension)')
    .option('--none', 'nothing the turn retrieved was useful (name what should have been found with --relevant)')
    .option('--clear', "remove the turn's judgment")
    .option('--json', 'print the judgment as JSON')
    .addHelpText(
      'after',
      `
Sets the turn's whole judgment (run it again to change it). A document that is not
in the index is kept, and reported as not indexed by eval.

Examples:
  ragline sessions judge onboarding 2 --relevant guides/authentication.md
  ragline sessions judge last 1 --relevant ~/notes/keys.md reference/cli
  ragline sessions judge onboarding 3 --none --relevant guides/webhooks.md
  ragline sessions judge onboarding 3 --clear`,
    )
    .action((ref: string, turnArg: string, flags: { relevant?: string[]; none?: boolean; clear?: boolean; json?: boolean }, command: Command) =>
      withWorkspace(command, async (workspace, output) => {
        const ordinal = decimalNumber(turnArg);
        if (!Number.isInteger(ordinal) || ordinal < 1) throw new UserError(`The turn must be a turn number (1, 2, ...), got "${turnArg}".`, { exitCode: 2 });
        if (!flags.relevant?.length && !flags.none && !flags.clear) {
          throw new UserError('Say what to record: --relevant <document>..., --none, or --clear.', {
            hint: `e.g. ragline sessions judge ${ref} ${ordinal} --relevant guides/authentication.md`,
            exitCode: 2,
          });
        }
        if (flags.clear && (flags.relevant?.length || flags.none)) throw new UserError('--clear goes alone, without --relevant or --none.', { exitCode: 2 });
        const { session, judgment, notIndexed } = await judgeSessionTurn(workspace, ref, ordinal, { relevant: flags.relevant, none: flags.none, clear: flags.clear, cwd: ioOf(command).cwd });
        const label = session.name ?? session.id;
        if (!judgment) {
          if (flags.json) return output.json({ session: session.id, turn: ordinal, judgment: null });
          output.out(`Turn ${ordinal} of ${oneLine(label, 60)} is no longer judged.`);
          return;
        }
        if (flags.json) return output.json({ session: session.id, turn: ordinal, judgment, notIndexed });
        output.out(`Turn ${ordinal} of ${oneLine(label, 60)} judged: ${judgmentText(judgment, await indexedPaths(workspace), output.color)}.`);
        if (notIndexed.length) {
          output.err(output.errColor.yellow(`Not in the index: ${notIndexed.map((p) => oneLine(p, 100)).join(', ')} (kept; eval reports it as not indexed).`));
        }
      }),
    );
}

async function withWorkspace(command: Command, run: (workspace: Workspace, output: Output) => void | Promise<void>): Promise<void> {
  const output = outputFor(command);
  const workspace = openWorkspaceFor(settingsFor(command));
  try {
    await run(workspace, output);
  } finally {
    await workspace.close();
  }
}

function statusCounts(turns: StoredTurn[]): string {
  const counts = new Map<string, number>();
  for (const turn of turns) counts.set(turn.status, (counts.get(turn.status) ?? 0) + 1);
  const parts = [...counts].filter(([status]) => status !== 'answered').map(([status, n]) => `${n} ${status}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** The judged turns as eval tasks, one JSON object a line; a session without judged turns is a UserError (exit 2). */
async function exportTasks(workspace: Workspace, session: SessionInfo, output: Output): Promise<string> {
  const found = await exportSessionTasks(workspace, session);
  if (found.unscored.length > 0) {
    output.err(`${count(found.unscored.length, 'judged turn')} ${found.unscored.length === 1 ? 'names' : 'name'} no relevant document and ${found.unscored.length === 1 ? 'is' : 'are'} left out (turn ${found.unscored.map((u) => u.turn).join(', ')}).`);
  }
  return found.tasks.map((task) => toJson(task)).join('\n') + '\n';
}

/** The file's stat, or undefined when there is none. */
function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

/** Whether `target` (its stat) is the database file or one of its -wal, -shm or -journal files: the same file on disk. */
function isDatabaseFile(target: fs.Stats, database: string): boolean {
  return ['', '-wal', '-shm', '-journal'].some((suffix) => {
    const stat = statOf(database + suffix);
    return stat !== undefined && stat.dev === target.dev && stat.ino === target.ino;
  });
}

/**
 * Writes `text` to `file` (`existing`: its stat, if there is one) whole or not at all:
 * a regular file is written beside it and renamed over it (a full disk leaves the
 * previous export as it was), readable by its owner only, whatever the umask, since it
 * holds the conversation. A device (-o /dev/stdout, /dev/null) is written to as it is.
 */
function writeWhole(file: string, existing: fs.Stats | undefined, text: string): void {
  if (existing !== undefined && !existing.isFile()) {
    fs.writeFileSync(file, text);
    return;
  }
  const real = existing === undefined ? file : fs.realpathSync(file);
  const temporary = `${real}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temporary, real);
  } catch (err) {
    fs.rmSync(temporary, { force: true });
    throw err;
  }
}
