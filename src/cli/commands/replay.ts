// `ragline replay <session>`: a stored session as it happened (question, standalone
// query and why, the chunks as retrieved, the answer), and with --rerun, its
// rewrites and retrievals run again with today's configuration and index, shown as a
// diff. The logic lives in src/replay; this file only renders. Every piece of
// document or model text is sanitised before it reaches the terminal.

import type { Command } from 'commander';
import { replay as loadReplay, rerun } from '../../app/replay.js';
import { indexedPaths } from '../../app/sessions.js';
import type { SessionInfo } from '../../app/index.js';
import type { ChatMessage } from '../../domain/index.js';
import {
  describeIndexState,
  rerunOrigin,
  type ReplayChunk,
  type ReplaySession,
  type JudgedCheck,
  type ReplayTurn,
  type RerunChunk,
  type RerunReport,
  type RerunTurn,
  type RewriteSide,
  type SavedRerun,
} from '../../replay/index.js';
import { UserError } from '../../util/errors.js';
import { oneLine, sanitizeForTerminal } from '../../util/sanitize.js';
import { count } from '../../util/words.js';
import { openWorkspaceFor, settingsFor, wholeNumberFlag } from '../context.js';
import { outputFor, type Output } from '../output.js';
import { chunkLine } from '../render.js';
import { judgmentText } from '../judgment-view.js';
import { rewriteLine } from '../turn-view.js';
import { stamp } from '../../util/time.js';

interface ReplayFlags {
  turn?: string;
  full?: boolean;
  json?: boolean;
  rerun?: boolean;
  rewrite?: string;
  save?: boolean;
  name?: string;
}

/** Lines of each answer shown without --full. */
const ANSWER_LINES = 3;

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('show a stored session turn by turn (how each question was searched, what was found, what was answered); --rerun re-runs it against today\'s setup')
    .argument('<session>', 'session id, name, or `last`')
    .option('--turn <n>', 'only this turn')
    .option('--full', 'whole answers, and the rewrite and answer prompts')
    .option('--json', 'print the replay (or the rerun diff) as JSON')
    .option('--rerun', 're-run each rewrite (current rewriter, prompt and policy) and retrieval (current index, same k) and show what changed')
    .option('--rewrite <mode>', 'with --rerun: rewrite policy auto, always or never instead of the configured one')
    .option('--save', 'with --rerun: keep the rerun as a new session named <session>-rerun-<n> (answers copied, not regenerated)')
    .option('--name <name>', 'with --save: name of the new session')
    .addHelpText(
      'after',
      `
Examples:
  ragline replay last
  ragline replay onboarding --turn 2 --full
  ragline replay onboarding --rerun --rewrite never
  ragline replay onboarding --rerun --save

A rerun writes nothing unless --save; the saved session carries the original
answers (not regenerated) with the new standalone queries and chunks.`,
    )
    .action(async (ref: string, flags: ReplayFlags, command: Command) => {
      const turn = flags.turn === undefined ? undefined : parseTurn(flags.turn);
      if (!flags.rerun && (flags.save || flags.rewrite || flags.name)) {
        throw new UserError('--save, --rewrite and --name go with --rerun.', { hint: `Try: ragline replay ${ref} --rerun${flags.rewrite ? ` --rewrite ${flags.rewrite}` : ''}${flags.save ? ' --save' : ''}`, exitCode: 2 });
      }
      if (flags.save && turn !== undefined) {
        throw new UserError('--save keeps a rerun of the whole session; it cannot be combined with --turn.', { exitCode: 2 });
      }
      if (flags.name && !flags.save) throw new UserError('--name goes with --save.', { exitCode: 2 });
      const settings = settingsFor(command, { 'rewrite.policy': flags.rewrite });
      const output = outputFor(command);
      const workspace = openWorkspaceFor(settings);
      try {
        const replay = await loadReplay(workspace, ref, { turn });
        if (!flags.rerun) {
          if (flags.json) output.json(replayJson(replay));
          else renderReplay(replay, output, Boolean(flags.full), await indexedPaths(workspace));
          return;
        }
        const { report, saved } = await rerun(workspace, replay, { save: flags.save, name: flags.name });
        if (flags.json) output.json({ ...report, saved: saved ?? null });
        else renderRerun(report, replay.session, output, Boolean(flags.full), saved);
      } finally {
        await workspace.close();
      }
    });
}

function parseTurn(raw: string): number {
  return wholeNumberFlag(raw, '--turn', 1, Number.MAX_SAFE_INTEGER, 'a turn number');
}

function label(session: SessionInfo): string {
  return session.name ? `${oneLine(session.name, 60)} (${session.id})` : session.id;
}

function width(output: Output): number {
  return output.columns ?? 100;
}

/** JSON of a replay: the stored rows as they are (JSON escapes control characters). */
function replayJson(replay: ReplaySession) {
  return { session: replay.session, turns: replay.turns };
}

function renderReplay(replay: ReplaySession, output: Output, full: boolean, indexed: (documentPath: string) => boolean): void {
  const { color } = output;
  const { session } = replay;
  const parent = session.parentSessionId ? ` · fork of ${session.parentSessionId} at turn ${session.parentTurn}` : '';
  output.out(color.bold(`session ${label(session)}`) + color.dim(` · ${count(replay.turnCount, 'turn')} · created ${stamp(session.createdAt)}${parent}`));
  if (replay.turns.length === 0) {
    output.out(color.dim('No turns yet.'));
    return;
  }
  for (const turn of replay.turns) {
    output.out();
    renderTurn(turn, output, full, indexed);
  }
}

function renderTurn(turn: ReplayTurn, output: Output, full: boolean, indexed: (documentPath: string) => boolean): void {
  const { color } = output;
  const status = turn.status === 'answered' ? color.dim(turn.status) : color.yellow(turn.status);
  output.out(`${color.bold(`Turn ${turn.ordinal}`)} · ${status} ${color.dim(`· ${stamp(turn.createdAt)}`)}`);
  output.out(`${color.bold('›')} ${oneLine(turn.question, 500)}`);
  if (turn.standaloneQuery !== null) {
    output.out(rewriteLine({ question: turn.question, standaloneQuery: turn.standaloneQuery, decision: turn.rewriteDecision ?? 'skipped', reason: turn.rewriteReason ?? '' }, color));
    if (turn.rewriteError) output.out(color.dim(`   rewrite error: ${oneLine(turn.rewriteError, 200)}`));
  } else {
    output.out(color.dim('↳ (the turn ended before its question was rewritten)'));
  }
  if (turn.chunks.length > 0) {
    output.out(color.dim(`   retrieved ${turn.chunks.length}${turn.k ? ` of k=${turn.k}` : ''}:`));
    for (const chunk of turn.chunks) output.out(storedChunkLine(chunk, output));
  } else if (turn.rewriteDecision !== 'small_talk' && turn.standaloneQuery !== null) {
    output.out(color.dim('   no chunks retrieved'));
  }
  if (turn.status !== 'answered') {
    output.out(color.yellow(`   status: ${turn.status}${turn.error ? ` — ${oneLine(turn.error, 300)}` : ''}`));
  }
  if (turn.judgment) output.out(`   ${color.bold('judged:')} ${judgmentText(turn.judgment, indexed, color)}`);
  const origin = rerunOrigin(turn.settings);
  if (origin) output.out(color.dim(`   (answer copied from session ${origin.sessionId} turn ${origin.ordinal}; not regenerated against these chunks)`));
  renderAnswer(turn, output, full);
  if (full) {
    renderPrompt('rewrite prompt', turn.rewritePrompt, output);
    renderPrompt('answer prompt', turn.prompt, output);
  }
}

function renderAnswer(turn: ReplayTurn, output: Output, full: boolean): void {
  const { color } = output;
  if (turn.answerKind === 'search' && !turn.answer) {
    output.out(color.dim('   search only: no answer was asked for'));
    return;
  }
  if (!turn.answer) return;
  const kind = [turn.answerKind, turn.models.chat].filter(Boolean).join(', ');
  output.out(color.dim(`   answer${kind ? ` (${oneLine(kind, 80)})` : ''}:`));
  const text = sanitizeForTerminal(turn.answer).trim();
  if (full) {
    for (const line of text.split('\n')) output.out(`   ${line}`);
    return;
  }
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  for (const line of lines.slice(0, ANSWER_LINES)) output.out(`   ${oneLine(line, Math.max(40, width(output) - 3))}`);
  if (lines.length > ANSWER_LINES) output.out(color.dim(`   … ${lines.length - ANSWER_LINES} more line${lines.length - ANSWER_LINES === 1 ? '' : 's'} (--full shows the whole answer)`));
}

function renderPrompt(title: string, messages: ChatMessage[] | null, output: Output): void {
  const { color } = output;
  if (!messages || messages.length === 0) return;
  output.out(color.dim(`   ${title}:`));
  for (const message of messages) {
    output.out(color.magenta(`   [${message.role}]`));
    for (const line of sanitizeForTerminal(message.content).split('\n')) output.out(`   ${line}`);
  }
}

function storedChunkLine(chunk: ReplayChunk, output: Output): string {
  const note = describeIndexState(chunk.indexState);
  const line = chunkLine(chunk, output.color, width(output));
  if (note) return `${line}  ${output.color.yellow(`(${note})`)}`;
  return chunk.indexedAs ? `${line}  ${output.color.dim(`(now ${oneLine(chunk.indexedAs, 200)})`)}` : line;
}

// ---- rerun ---------------------------------------------------------------

function renderRerun(report: RerunReport, session: SessionInfo, output: Output, full: boolean, saved?: SavedRerun): void {
  const { color } = output;
  output.out(
    color.bold(`rerun of ${label(session)}`) +
      color.dim(` · rewriter ${oneLine(report.rewriter, 60)}, policy ${report.policy} · index embedder ${oneLine(report.embedder, 60)}`),
  );
  for (const turn of report.turns) {
    output.out();
    renderRerunTurn(turn, output, full);
  }
  output.out();
  renderSummary(report, output, saved);
}

function rewriteText(side: RewriteSide): string {
  const query = side.decision === 'small_talk' ? '(no search)' : oneLine(side.standaloneQuery, 300);
  return `${query}  ${`(${side.decision}${side.reason ? `: ${oneLine(side.reason, 100)}` : ''})`}`;
}

function renderRerunTurn(turn: RerunTurn, output: Output, full: boolean): void {
  const { color } = output;
  const judgedChanges = turn.judged?.documents.map((doc) => doc.change) ?? [];
  const marks = [
    turn.rewriteChanged ? color.yellow('rewrite changed') : '',
    turn.retrieval.changed ? color.yellow('retrieval changed') : '',
    judgedChanges.includes('left') ? color.red('judged document left') : '',
    judgedChanges.includes('entered') ? color.green('judged document entered') : '',
  ].filter(Boolean);
  output.out(`${color.bold(`Turn ${turn.ordinal}`)}${marks.length ? ' · ' + marks.join(' · ') : color.dim(' · unchanged')}`);
  output.out(`${color.bold('›')} ${oneLine(turn.question, 500)}`);
  output.out(`   ${color.dim('old')} ${turn.before ? rewriteText(turn.before) : color.dim('(never rewritten: the turn ended first)')}`);
  const after = rewriteText(turn.after);
  output.out(`   ${turn.rewriteChanged ? color.yellow('new') : color.dim('new')} ${turn.rewriteChanged ? after : color.dim(after)}${turn.rewriteChanged ? color.yellow('  ← changed') : ''}`);
  if (turn.after.error) output.out(color.dim(`       rewrite error: ${oneLine(turn.after.error, 200)}`));

  const { retrieval } = turn;
  const overlap = retrieval.overlap === null ? 'no retrieval either time' : `top-${turn.k} overlap ${retrieval.shared}/${turn.k}`;
  output.out(color.dim(`   ${overlap}`));
  // A chunk whose document was edited since leaves and enters at the same place: shown once, as edited.
  const edited = editedPairs(retrieval.left, retrieval.entered);
  for (const [before, now] of edited) {
    output.out(`   ${color.yellow('≈')}${chunkLine(now, color, width(output) - 4)}  ${color.yellow(`(its text changed since; rank ${before.rank} → ${now.rank})`)}`);
  }
  const pairedNew = new Set(edited.map(([, now]) => now));
  const pairedOld = new Set(edited.map(([before]) => before));
  for (const chunk of retrieval.entered) {
    if (!pairedNew.has(chunk)) output.out(`   ${color.green('+')}${chunkLine(chunk, color, width(output) - 4)}  ${color.green('(entered)')}`);
  }
  for (const chunk of retrieval.left.filter((left) => !pairedOld.has(left))) {
    const note = describeIndexState(chunk.indexState) ?? (chunk.indexedAs ? `now ${oneLine(chunk.indexedAs, 200)}` : undefined);
    output.out(`   ${color.red('-')}${chunkLine(chunk, color, width(output) - 4)}  ${color.red(`(left; was ${chunk.rank}${note ? `; ${note}` : ''})`)}`);
  }
  for (const move of retrieval.moved) {
    output.out(`   ${color.cyan('~')}${chunkLine(move.chunk, color, width(output) - 4)}  ${color.cyan(`(rank ${move.oldRank} → ${move.newRank})`)}`);
  }
  if (turn.judged) renderJudged(turn.judged, turn.k, output);
  // Stored chunks that are stale but still matched can't happen (identity includes the text hash),
  // so every stale chunk shows among those that left.
  if (full) {
    if (turn.fusedWith) output.out(color.dim(`   (searched beside the question as asked, fused with weight ${turn.fusedWith.weight})`));
    output.out(color.dim('   new top k:'));
    for (const chunk of turn.newChunks) output.out(`    ${chunkLine(chunk, color, width(output) - 4)}`);
    renderPrompt('new rewrite prompt', turn.after.prompt ?? null, output);
  }
}

/**
 * Chunks that left and entered at the same place of the same document, whose text
 * changed there since (`document_changed`): each left chunk with the first entered
 * chunk of its document whose lines overlap its own.
 */
function editedPairs(left: readonly ReplayChunk[], entered: readonly RerunChunk[]): [ReplayChunk, RerunChunk][] {
  const pairs: [ReplayChunk, RerunChunk][] = [];
  const taken = new Set<RerunChunk>();
  for (const before of left) {
    if (before.indexState !== 'document_changed') continue;
    const name = before.indexedAs ?? before.documentPath;
    const now = entered.find((chunk) => !taken.has(chunk) && chunk.documentPath === name && chunk.startLine <= before.endLine && before.startLine <= chunk.endLine);
    if (!now) continue;
    taken.add(now);
    pairs.push([before, now]);
  }
  return pairs;
}

/** Each judged document: still in the top k, entered, left, or in it neither time. */
function renderJudged(check: JudgedCheck, k: number, output: Output): void {
  const { color } = output;
  if (check.noneUseful) output.out(`   ${color.bold('judged:')} nothing retrieved was useful`);
  for (const doc of check.documents) {
    const name = `${color.bold('judged')} ${color.cyan(oneLine(doc.documentPath, 200))}`;
    if (doc.change === 'kept') {
      const ranks = doc.before === doc.now ? `rank ${doc.now}` : `rank ${doc.before} → ${doc.now}`;
      output.out(`   ${name}: still in the top ${k} (${ranks})`);
    } else if (doc.change === 'entered') {
      output.out(`   ${name}: ${color.green(`entered the top ${k} (now rank ${doc.now})`)}`);
    } else if (doc.change === 'left') {
      output.out(`   ${name}: ${color.red(`left the top ${k} (was rank ${doc.before})`)}`);
    } else {
      output.out(`   ${name}: ${color.yellow(`not in the top ${k}, then or now${doc.indexed ? '' : ' (not indexed)'}`)}`);
    }
  }
}

function renderSummary(report: RerunReport, output: Output, saved?: SavedRerun): void {
  const { color } = output;
  const { summary } = report;
  const list = (ordinals: number[]) => (ordinals.length ? ` (turn${ordinals.length === 1 ? '' : 's'} ${ordinals.join(', ')})` : '');
  output.out(color.bold('summary'));
  output.out(`  rewrites changed:    ${summary.rewritesChanged.length} of ${summary.turns}${list(summary.rewritesChanged)}`);
  output.out(`  retrievals changed:  ${summary.retrievalsChanged.length} of ${summary.turns}${list(summary.retrievalsChanged)}`);
  output.out(`  mean top-k overlap:  ${summary.meanOverlap === null ? 'n/a (no turn retrieved)' : summary.meanOverlap.toFixed(2)}`);
  const stale = summary.staleChunks;
  if (stale.removed || stale.documentChanged) {
    output.out(`  stored chunks no longer in the index: ${stale.removed}; document changed since: ${stale.documentChanged}`);
  }
  const { judged } = summary;
  if (judged.turns > 0) {
    const docs = `${judged.documents} judged document${judged.documents === 1 ? '' : 's'}`;
    output.out(`  judged turns:        ${judged.turns} (${docs})`);
    output.out(`  found before:        ${judged.foundBefore} of ${judged.documents} in the top k`);
    const delta = judged.foundNow - judged.foundBefore;
    const moved = delta > 0 ? color.green(` (+${delta})`) : delta < 0 ? color.red(` (${delta})`) : '';
    output.out(`  found now:           ${judged.foundNow} of ${judged.documents}${moved}`);
  }
  output.out(color.dim(`  re-ran in ${Math.round(summary.ms)} ms`));
  if (saved) {
    output.out(`saved as session ${label(saved)} (answers copied from the original, not regenerated)`);
    if (saved.unfinished.length > 0) output.out(color.dim(`not saved: ${saved.unfinished.length === 1 ? 'turn' : 'turns'} ${saved.unfinished.join(', ')}, not finished (still being answered, or stopped before it ended)`));
  }
  else output.out(color.dim('nothing was saved (add --save to keep this rerun as a new session)'));
}
