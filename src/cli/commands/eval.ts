// `ragline eval <tasks.jsonl>`: R@5, R@10, MRR@10, nDCG@10 per query variant,
// per group, overall, and on the turns whose reference rewrite differs.
// `ragline eval --from-sessions [<session>...]` makes the tasks of judged turns
// (one group per session).

import type { Command } from 'commander';
import { EVAL_VARIANTS as VARIANTS, evaluate, parseTasks, sessionTasks } from '../../app/eval.js';
import type { EvalTask, MetricsRow, SessionTasks } from '../../app/index.js';
import { MAX_K } from '../../config/index.js';
import { UserError } from '../../util/errors.js';
import { readRegularFile } from '../../util/regular-file.js';
import { oneLine } from '../../util/sanitize.js';
import { count } from '../../util/words.js';
import { numberFlag, openWorkspaceFor, settingsFor, wholeNumberFlag } from '../context.js';
import { inCwd, ioOf } from '../io.js';
import { outputFor, ProgressLine, type Output } from '../output.js';

export function registerEval(program: Command): void {
  program
    .command('eval')
    .description('measure retrieval over judged multi-turn conversations (R@5, R@10, MRR@10, nDCG@10)')
    .argument('[input...]', 'a tasks file (one judged turn per line; see the README), or with --from-sessions the sessions to use')
    .option('--from-sessions', 'make the tasks from judged turns of the named sessions (none named: every session with judged turns)')
    .option('--variants <list>', `comma-separated query variants: ${VARIANTS.join(', ')}`, VARIANTS.join(','))
    .option('--max-per-document <n>', 'at most n chunks of one document in the top k (0 = no limit)', '0')
    .option('--raw-weight <w>', 'weight of the raw question fused beside a rewrite (variant ragline+raw; default: retrieval.rawWeight)')
    .option('--per-task', 'include every task result in the JSON output')
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      `
Each line: {"id": "c1::2", "group": "cloud", "question": "carthage?",
  "history": [{"user": "...", "assistant": "..."}],
  "reference_rewrite": "What about using Carthage?", "relevant": ["ibmcld_10817-7-1802"]}

Judged turns of your own sessions (judge them in the chat with /good, /bad and
/expect, or with \`ragline sessions judge\`) are tasks too: the question, the
session's earlier turns as history, the judged documents as relevant.

Examples:
  ragline eval tasks.jsonl --variants raw,ragline+raw
  ragline eval --from-sessions
  ragline eval --from-sessions onboarding billing --json
  ragline sessions export onboarding --format tasks -o regression.jsonl && ragline eval regression.jsonl`,
    )
    .action(async (inputs: string[], flags: { fromSessions?: boolean; variants: string; maxPerDocument: string; rawWeight?: string; perTask?: boolean; json?: boolean }, command: Command) => {
      const output = outputFor(command);
      let tasks: EvalTask[] = [];
      if (!flags.fromSessions) {
        if (inputs.length !== 1) {
          throw new UserError(inputs.length === 0 ? 'Name a tasks file, or use --from-sessions.' : `One tasks file at a time (got ${inputs.length}).`, {
            hint: 'e.g. ragline eval tasks.jsonl, or ragline eval --from-sessions to score your judged turns',
            exitCode: 2,
          });
        }
        const file = inputs[0]!;
        let read: ReturnType<typeof readRegularFile>;
        try {
          read = readRegularFile(inCwd(ioOf(command), file));
        } catch (err) {
          throw new UserError(`Cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { exitCode: 2 });
        }
        // A FIFO or a device would be read forever; refused before the read.
        if (!Buffer.isBuffer(read)) {
          throw new UserError(`${file} is ${read.is}, not a tasks file.`, {
            hint: 'Give a file of tasks, one JSON object a line (see `ragline eval --help`), e.g. ragline eval tasks.jsonl.',
            exitCode: 2,
          });
        }
        tasks = parseTasks(read.toString('utf8'), file);
      }
      const wanted = flags.variants.split(',').map((v) => v.trim()).filter(Boolean);
      for (const name of wanted) {
        if (!(VARIANTS as readonly string[]).includes(name)) throw new UserError(`Unknown variant "${name}".`, { hint: `Choose from ${VARIANTS.join(', ')}.`, exitCode: 2 });
      }
      const settings = settingsFor(command);
      const workspace = openWorkspaceFor(settings);
      const progress = new ProgressLine(ioOf(command).stderr);
      try {
        let fromSessions: SessionTasks | undefined;
        if (flags.fromSessions) {
          fromSessions = await sessionTasks(workspace, inputs);
          tasks = fromSessions.tasks;
        }
        await workspace.searchIndex();
        const maxPerDocument = wholeNumberFlag(flags.maxPerDocument, '--max-per-document', 0, MAX_K);
        const rawWeight = flags.rawWeight !== undefined ? numberFlag(flags.rawWeight, '--raw-weight', 0, 100) : undefined;
        const report = await evaluate(workspace, {
          tasks,
          variants: wanted,
          maxPerDocument,
          rawWeight,
          onProgress: (done, total) => progress.update(`eval ${done}/${total}`),
        });
        progress.clear();
        const sessions = fromSessions ? { sessions: fromSessions.sessions, unscored: fromSessions.unscored, duplicates: fromSessions.duplicates } : {};
        if (flags.json) {
          output.json({ ...report, ...sessions, results: flags.perTask ? report.results : undefined });
          return;
        }
        const fmt = (m: MetricsRow) => `${String(m.n).padStart(4)}  ${m.recall5.toFixed(3)}  ${m.recall10.toFixed(3)}  ${m.mrr10.toFixed(3)}  ${m.ndcg10.toFixed(3)}`;
        // Tasks without a group form one named "all": its rows are the overall rows, shown once.
        const groupNames = Object.keys(report.variants[0]?.groups ?? {});
        const groups = groupNames.length === 1 && groupNames[0] === 'all' ? [] : groupNames;
        // A group is named by the tasks file: shown as one safe line.
        const shownName = (subset: string) => (groups.includes(subset) ? oneLine(subset, 40) : subset);
        // Columns as wide as their longest entry, so the numbers line up.
        const subsetWidth = Math.max('subset'.length, ...[...groups, 'rewrite differs'].map((name) => shownName(name).length));
        const variantWidth = Math.max('variant'.length, ...report.variants.map((variant) => variant.name.length));
        output.out(output.color.bold(`${'subset'.padEnd(subsetWidth)}  ${'variant'.padEnd(variantWidth)}    n    R@5   R@10  MRR@10 nDCG@10`));
        for (const subset of [...groups, 'all', 'rewrite differs']) {
          for (const variant of report.variants) {
            const m = subset === 'all' ? variant.overall : subset === 'rewrite differs' ? variant.rewriteDiffers : variant.groups[subset]!;
            if (m.n === 0) continue;
            output.out(`${shownName(subset).padEnd(subsetWidth)}  ${variant.name.padEnd(variantWidth)} ${fmt(m)}`);
          }
        }
        for (const variant of report.variants) {
          if (!variant.decisions) continue;
          const total = Object.values(variant.decisions).reduce((a, b) => a + b, 0);
          const parts = Object.entries(variant.decisions).map(([d, n]) => `${d} ${n} (${((100 * n) / total).toFixed(0)}%)`);
          output.out(`${variant.name}: ${parts.join(', ')}`);
        }
        for (const variant of report.variants) {
          const added = variant.addedTerms;
          if (!added || (added.recallN === 0 && added.precisionN === 0)) continue;
          output.out(
            `${variant.name}: added-term recall ${added.recall.toFixed(2)} (${count(added.recallN, 'turn')}), precision ${added.precision.toFixed(2)} (${count(added.precisionN, 'turn')}) against the reference rewrite`,
          );
        }
        if (report.missing.length > 0) {
          output.err(`${count(report.missing.length, 'relevant document')} named by the tasks ${report.missing.length === 1 ? 'is' : 'are'} not indexed (not in the database; ${report.missing.length === 1 ? 'it counts' : 'they count'} as not found), e.g. ${report.missing.slice(0, 3).map((m) => `${oneLine(m.document, 80)} (${oneLine(m.task, 40)})`).join(', ')}.`);
        }
        if (fromSessions) describeSessionTasks(fromSessions, output);
      } finally {
        progress.clear();
        await workspace.close();
      }
    });
}

function describeSessionTasks(found: SessionTasks, output: Output): void {
  const used = found.sessions.filter((s) => s.tasks > 0).length;
  output.err(output.errColor.dim(`${found.tasks.length} judged turn${found.tasks.length === 1 ? '' : 's'} from ${used} session${used === 1 ? '' : 's'}`));
  if (found.unscored.length > 0) {
    output.err(
      `${count(found.unscored.length, 'judged turn')} ${found.unscored.length === 1 ? 'names' : 'name'} no relevant document and ${found.unscored.length === 1 ? 'is' : 'are'} not scored (${found.unscored.slice(0, 3).map((u) => `${oneLine(u.session, 40)} turn ${u.turn}`).join(', ')}); name what should have been found with /expect or --relevant.`,
    );
  }
  if (found.duplicates > 0) output.err(output.errColor.dim(`${count(found.duplicates, 'turn')} copied into forks counted once`));
}
