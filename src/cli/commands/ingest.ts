// `ragline ingest <path...>`: progress on a TTY, a one-line summary per path (and a
// total for several), --json for scripts.

import type { Command } from 'commander';
import {
  checkIngestPaths,
  DEFAULT_INGEST_WAIT_MS,
  formatWait,
  fileTypesIn,
  ingestPaths,
  leftOutWords,
  MASS_REMOVAL_MIN,
  planCheckedPaths,
  READ_KINDS,
  RemovalRefused,
  sumTruncated,
  type GlobRemoval,
  pathsIngested,
  type IngestPathsPlan,
  type IngestPathsSummary,
  type IngestTotal,
  type PathIngested,
} from '../../app/ingest.js';
import type { IngestSummary } from '../../app/index.js';
import { openWorkspaceFor, settingsFor, wholeNumberFlag } from '../context.js';
import { ioOf, setExitCode } from '../io.js';
import { outputFor, formatBytes, formatDuration, ProgressLine } from '../output.js';
import { reportError } from '../report-error.js';
import { oneLine } from '../../util/sanitize.js';
import { DEFAULTS } from '../../config/index.js';
import { count, fewOf } from '../../util/words.js';

interface IngestFlags {
  include?: string[];
  exclude?: string[];
  chunkSize?: string;
  chunkOverlap?: string;
  maxFileSize?: string;
  reindex?: boolean;
  checksum?: boolean;
  verbose?: boolean;
  json?: boolean;
  yes?: boolean;
  /** Seconds, as given; false with --no-wait. */
  wait?: string | false;
}

/** Names of the errors @inquirer/prompts rejects with when a prompt is cancelled (Ctrl-C). */
const CANCELLED = new Set(['ExitPromptError', 'AbortPromptError', 'CancelPromptError']);

export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description('chunk, embed and index folders of documents (Markdown, text, HTML, PDF, each also gzipped), or files of them; several in turn, each once')
    .argument(
      '<path...>',
      "folders to ingest (running it again only processes what changed), or files: each added or updated, its folder's other documents kept. Several are ingested in turn, in the order given, every one checked first; one given twice or inside another is read once; a file of a kind ragline does not read is skipped (unsupported-type) among several, refused alone; a failure or Ctrl-C stops at the path being read, keeping those before it",
    )
    .option('--include <glob...>', "only ingest files matching these globs, read as in .gitignore (\"*.rst\" at any depth, \"/*.rst\" or \"./*.rst\" at the top, \"guides/*.md\" from each folder given); the folder's stored documents they leave out are removed")
    .option('--exclude <glob...>', 'skip files matching these globs (read the same way; "drafts/" is every folder named drafts; a "!" glob takes its files back out of the list, in either option)')
    .option('--chunk-size <chars>', `target chunk size in characters (default ${DEFAULTS['chunk.size']})`)
    .option('--chunk-overlap <chars>', `characters shared by consecutive pieces of a long section (default ${DEFAULTS['chunk.overlap']})`)
    .option('--max-file-size <bytes>', `skip files larger than this (default ${DEFAULTS['ingest.maxFileBytes']}: ${formatBytes(DEFAULTS['ingest.maxFileBytes'] as number)})`)
    .option('--reindex', 'drop the index and rebuild it: the (first) folder given, then every other folder it held, with the files each held, then the other folders given (after changing the embedder or chunk settings; sessions are kept)')
    .option('--checksum', 'hash every file, even when its size and modification time are unchanged')
    .option('-y, --yes', `remove without asking the stored documents --include/--exclude leave out, when the run adds none and would keep none of the folder's documents, or remove more than half and more than ${MASS_REMOVAL_MIN} of them (a terminal asks; without one, or with --json, the run is refused: exit 2)`)
    .option('--verbose', 'also list every skipped file, one a line, with its reason')
    .option('--wait <seconds>', `when another ingest is writing to the database (of any folder), wait this long for it to finish (default ${DEFAULT_INGEST_WAIT_MS / 1000}: ${formatWait(DEFAULT_INGEST_WAIT_MS)}), saying so on stderr; then refuse, writing nothing`)
    .option('--no-wait', 'refuse at once when another ingest is writing to the database, instead of waiting for it')
    .option('--json', 'print the summary as JSON (with every skipped path, by reason); for several paths, one document: {"db", "paths": [one summary per path, with its "path"], "covered", "skipped", "notIngested", "total"}')
    .addHelpText(
      'after',
      `
Examples:
  ragline ingest ./docs
  ragline ingest ./docs/faq.md
  ragline ingest ./docs ./notes ~/handbook/faq.md   # each in turn, with one summary line each and a total
  ragline ingest ./docs --exclude "drafts/**" --json
  ragline ingest ./docs --include "guides/" --yes   # keep only guides/, removing the rest without asking
  ragline --db ./team.db ingest ./handbook --reindex
  ragline ingest ./notes --wait 60                    # another ingest writing? wait for it up to a minute

One ingest writes to a database at a time. Another one, of any folder, waits for it
(up to --wait seconds, ${formatWait(DEFAULT_INGEST_WAIT_MS)} by default; --no-wait refuses at once) and then
goes on; one of the same folder then reads it again and writes only what is still new.`,
    )
    .action(async (dirs: string[], flags: IngestFlags, command: Command) => {
      const output = outputFor(command);
      const io = ioOf(command);
      /** Several paths: one line per path and a total, and one JSON document of them all. */
      const several = dirs.length > 1;
      const check = { cwd: io.cwd, include: flags.include, exclude: flags.exclude, reindex: flags.reindex };
      const waitMs = flags.wait === false ? 0 : flags.wait === undefined ? DEFAULT_INGEST_WAIT_MS : wholeNumberFlag(flags.wait, '--wait', 0, 86_400, 'a number of seconds') * 1000;
      // Every path is checked before the database is opened: a mistyped one stops the command with nothing written.
      const checked = checkIngestPaths(dirs, check);

      const settings = settingsFor(command, {
        'chunk.size': flags.chunkSize,
        'chunk.overlap': flags.chunkOverlap,
        'ingest.maxFileBytes': flags.maxFileSize,
      });
      const { config } = settings;
      const workspace = openWorkspaceFor(settings, { create: true });
      let plan: IngestPathsPlan;
      try {
        plan = planCheckedPaths(workspace, checked);
        // embedProvider auto: an existing index keeps the embedder it was built with, unless rebuilt.
        await workspace.ingestEmbedder({ reindex: flags.reindex });
      } catch (err) {
        await workspace.close({ removeIfEmpty: true });
        throw err;
      }
      const controller = new AbortController();
      const onSigint = () => {
        if (controller.signal.aborted) io.exit(130);
        controller.abort();
      };
      io.signals.on('SIGINT', onSigint);
      const progress = new ProgressLine(io.stderr);
      /** How a removal the globs would make was answered at the prompt, when it was asked (for the path being read). */
      let answered: 'no' | 'cancelled' | undefined;
      const confirmRemoval = async (removal: GlobRemoval): Promise<boolean> => {
        if (flags.yes) return true;
        // Refused (RemovalRefused, exit 2) where no one can answer: scripts, pipes, --json.
        if (flags.json || !io.stdin.isTTY || !io.stdout.isTTY) return false;
        const message = `--include/--exclude leave out ${leftOutWords(removal)} stored for ${oneLine(removal.root)} and add none. Remove ${removal.leftOut === 1 ? 'it' : 'them'} from the index?`;
        try {
          const ok = await (await import('@inquirer/prompts')).confirm({ message, default: false }, { input: io.stdin, output: io.stdout });
          if (!ok) answered = 'no';
          return ok;
        } catch (err) {
          if (!(err instanceof Error && CANCELLED.has(err.name))) throw err;
          answered = 'cancelled';
          return false;
        }
      };
      for (const { path: given, by, reason } of flags.json ? [] : plan.covered) {
        const what = reason === 'inside' ? `is inside ${oneLine(by)}: ingested as part of it` : given === by ? 'was given again: ingested once' : `is the same as ${oneLine(by)}: ingested once`;
        output.out(output.color.dim(`${oneLine(given)} ${what}.`));
      }
      for (const { path: given } of flags.json ? [] : plan.skipped) output.out(output.color.dim(`${oneLine(given)} is not a kind of file ragline reads: skipped (unsupported-type).`));
      /** The paths ingested so far, and the one being read. */
      const done: PathIngested[] = [];
      let current = 0;
      /** The run ended in an error (said already). */
      let failed = false;
      /** The whole command as one JSON document (several paths). */
      const document = (ingested: IngestPathsSummary) => ({
        db: config.db,
        paths: ingested.paths.map(({ path: given, summary }) => ({ path: given, db: config.db, ...summary })),
        covered: ingested.covered,
        skipped: ingested.skipped,
        notIngested: ingested.notIngested,
        total: ingested.total,
      });
      try {
        const result = await ingestPaths(workspace, plan, {
          include: flags.include,
          exclude: flags.exclude,
          reindex: flags.reindex,
          checksum: flags.checksum,
          confirmRemoval,
          signal: controller.signal,
          wait: {
            ms: waitMs,
            onWait: (other, ms) => {
              progress.clear();
              output.err(`Waiting for another ingest writing to this database to finish (pid ${other.pid}, started ${other.startedAt}): up to ${formatWait(ms)}; --wait <seconds> sets how long, --no-wait refuses at once.`);
            },
          },
          onPathStart: (_target, index) => {
            current = index;
            answered = undefined;
          },
          onProgress: (p) => {
            const seconds = p.elapsedMs / 1000;
            const rate = seconds > 0 ? p.bytesDone / seconds : 0;
            const eta = rate > 0 ? ((p.bytesTotal - p.bytesDone) / rate) * 1000 : NaN;
            const which = several ? `${current + 1}/${plan.targets.length} ${oneLine(plan.targets[current]!.path, 40)} · ` : '';
            progress.update(
              `${which}files ${p.filesDone}/${p.filesTotal} · chunks ${p.chunksWritten} · ${formatBytes(rate)}/s · ETA ${formatDuration(eta)}`,
              p.filesDone === p.filesTotal,
            );
          },
          onPathDone: (ingested) => {
            progress.clear();
            done.push(ingested);
            const { summary, path: given } = ingested;
            if (!flags.json) {
              output.out(summaryLine(summary, output.color, several ? given : undefined));
              if (summary.reread) output.out(output.color.dim('Every file was read again: the folder had been indexed by an earlier version of ragline, which read documents differently.'));
              // Once for the folder and the other folders a rebuild read with it.
              const truncated = [summary, ...(summary.others ?? []).map((other) => other.summary)].reduce<IngestSummary['truncated']>(
                (sum, one) => (one?.truncated ? sumTruncated(sum, one.truncated) : sum),
                undefined,
              );
              if (truncated) output.out(truncatedNote(truncated));
              if (flags.verbose) for (const line of skippedLines(summary)) output.out(output.color.dim(line));
              for (const line of otherFolderLines(summary)) output.out(line);
            }
            const nothing = nothingIndexed(summary, given, Boolean(flags.verbose || flags.json));
            if (nothing) output.err(nothing);
            for (const other of summary.others ?? []) {
              if (other.state === 'missing') output.err(`${other.root} is gone: ${other.documents === 1 ? 'its document was' : `its ${other.documents} documents were`} dropped from the index.`);
            }
          },
        });
        progress.clear();
        if (flags.json) output.json(several ? document(result) : { db: config.db, ...result.paths[0]!.summary });
        else if (several) output.out(totalLine(result.total, output.color));
        if (result.total.interrupted) {
          output.err('Interrupted: what was written is kept; run the same command again to finish.');
          if (result.notIngested.length > 0) output.err(`Not ingested: ${fewOf(result.notIngested.map((given) => oneLine(given)))}.`);
          setExitCode(command, 130);
        }
      } catch (err) {
        failed = true;
        // Said before the embedder is closed: whatever closing does, the user has the message.
        progress.clear();
        // With several paths, those before the one that failed stay ingested: said, with those not reached.
        const ingested = pathsIngested(plan, done, controller.signal);
        const { notIngested } = ingested;
        if (several && done.length > 0) {
          if (flags.json) output.json(document(ingested));
          else output.out(totalLine(ingested.total, output.color));
        }
        if (err instanceof RemovalRefused && answered !== undefined) {
          // The person at the terminal said no (or Ctrl-C): as `sessions rm` does.
          output.out(several ? `Nothing was ingested or removed for ${oneLine(notIngested[0]!)}.` : 'Nothing was ingested or removed.');
          if (answered === 'cancelled') setExitCode(command, 130);
        } else {
          setExitCode(command, reportError(err, output, io.env));
        }
        if (several) output.err(`Not ingested: ${fewOf(notIngested.map((given) => oneLine(given)))}.`);
      } finally {
        progress.clear();
        io.signals.off('SIGINT', onSigint);
        // A database this run made and left empty is not left behind (said, unless an error was).
        if ((await workspace.close({ removeIfEmpty: true })) && !failed) output.err(`No database was created at ${oneLine(config.db)}: there was nothing to keep.`);
      }
    });
}

/** Said once per folder when the embedding server took some chunks only in part. */
function truncatedNote({ chunks, toChars }: NonNullable<IngestSummary['truncated']>): string {
  return (
    `${chunks === 1 ? '1 chunk was' : `${chunks} chunks were`} longer than the embedding server takes: embedded from ${chunks === 1 ? 'its' : 'their'} first ${toChars.toLocaleString('en-US')} characters (stored and searched by keywords whole).\n` +
    'To embed them whole, start the server with a larger batch (llama-server -b 4096 -ub 4096) or lower RAGLINE_CHUNK_SIZE, then run `ragline ingest <folder> --reindex`.'
  );
}

/** A rebuild's other folders, one line each: `Also rebuilt /docs/b: 40 of 40 documents, 479 chunks written`. */
function otherFolderLines(summary: IngestSummary): string[] {
  return (summary.others ?? []).flatMap((other) => {
    if (other.state === 'missing') return []; // said on stderr
    if (other.state === 'pending' || other.summary === undefined) return `Not rebuilt yet ${other.root} (${count(other.documents, 'document')}): the next rebuild takes it up.`;
    const f = other.summary.files;
    const kept = f.added + f.changed + f.unchanged;
    const gone = f.removed > 0 ? `; ${f.removed} no longer on the disk, removed` : '';
    return `Also rebuilt ${other.root}: ${kept} of ${count(other.documents, 'document')}, ${count(other.summary.chunks.written, 'chunk')} written${gone}`;
  });
}

/** What to say when a run found nothing to index in the folder: no files at all, none of a type it reads, or every one filtered out. */
function nothingIndexed(summary: IngestSummary, dir: string, verbose = false): string | undefined {
  const f = summary.files;
  if (summary.interrupted || f.added + f.changed + f.unchanged + f.removed > 0) return undefined;
  const skipped = skippedCounts(summary);
  if (skipped.length === 0) return `No files found in ${dir}: nothing was indexed.`;
  if (skipped.every(([reason]) => reason === 'excluded')) {
    const n = skipped[0]![1];
    return `${n === 1 ? 'The only file' : `All ${n} files`} in ${dir} ${n === 1 ? 'was' : 'were'} left out by --include/--exclude: nothing was indexed.`;
  }
  if (skipped.every(([reason]) => reason === 'unsupported-type')) {
    const types = fileTypesIn(summary.root, summary.only).map(({ type, files }) => (type ? `${files} ${oneLine(type, 24)}` : `${files} without an extension`));
    return (
      `No file of a type ragline reads in ${dir}: nothing was indexed.\n` +
      `It holds ${count(skipped[0]![1], 'file')} of other types (${fewOf(types)}); ragline reads ${READ_KINDS}, each also gzipped (.rst.gz).`
    );
  }
  const reasons = skipped.map(([reason, n]) => `${n} ${reason}`).join(', ');
  return `Every file in ${dir} was skipped (${reasons}): nothing was indexed.${verbose ? '' : ' --verbose names them.'}`;
}

/** The skip reasons that occurred, in name order, with their counts. */
function skippedCounts(summary: Pick<IngestSummary, 'files'>): [string, number][] {
  return Object.entries(summary.files.skipped)
    .filter((entry): entry is [string, number] => (entry[1] ?? 0) > 0)
    .sort(([a], [b]) => a.localeCompare(b));
}

/**
 * One line per skipped file, `  parse-error: a.pdf`, by reason, then the files read
 * that were not valid UTF-8, named the same way: every path, one a line, for grep.
 */
export function skippedLines(summary: IngestSummary): string[] {
  const named = (label: string, paths: readonly string[]) => paths.map((p) => `  ${label}: ${oneLine(p)}`);
  return [
    ...skippedCounts(summary).flatMap(([reason]) => named(reason, summary.skippedPaths[reason as keyof IngestSummary['skippedPaths']] ?? [])),
    ...named('not valid UTF-8, decoded with replacements', summary.invalidUtf8Paths),
    ...named('not UTF-8, read as Windows-1252 (Latin-1)', summary.windows1252Paths),
  ];
}

/**
 * `Ingested 3 added, 0 changed, ...; 12 chunks written (12 embedded, 0 reused); 0.4s`;
 * with `label` (one of several paths), `Ingested ./docs: 3 added, ...`.
 */
export function summaryLine(summary: IngestSummary, color: { bold: (s: string) => string; dim: (s: string) => string }, label?: string): string {
  // An interrupted run says so first: its counts are what was done before it stopped.
  const lead =
    label === undefined
      ? color.bold(summary.interrupted ? 'Interrupted after' : 'Ingested')
      : `${color.bold(summary.interrupted ? 'Interrupted' : 'Ingested')} ${oneLine(label)}${summary.interrupted ? ' after' : ':'}`;
  return `${lead} ${countsText(summary)}`;
}

/** `Total for 2 paths: 30 added, ...`: the sums of an ingest of several paths (the other folders of a rebuild included). */
export function totalLine(total: IngestTotal, color: { bold: (s: string) => string }): string {
  return `${color.bold('Total')} for ${count(total.paths, 'path')}${total.interrupted ? ' (interrupted)' : ''}: ${countsText(total)}`;
}

/** The counts of a summary line: files by what happened to them, chunks, invalid UTF-8, seconds. */
function countsText(summary: Pick<IngestSummary, 'files' | 'chunks' | 'invalidUtf8' | 'windows1252' | 'seconds'>): string {
  const f = summary.files;
  const skipped = skippedCounts(summary)
    .map(([reason, n]) => `${n} ${reason}`)
    .join(', ');
  const parts = [
    `${f.added} added`,
    `${f.changed} changed`,
    `${f.unchanged} unchanged`,
    `${f.removed} removed`,
    ...(f.merged ? [`${f.merged} ${f.merged === 1 ? 'copy' : 'copies'} left by an earlier ingest of a subfolder removed`] : []),
    `skipped ${skipped || 'none'}`,
  ];
  const chunks = `${count(summary.chunks.written, 'chunk')} written (${summary.chunks.embedded} embedded, ${summary.chunks.reused} reused)`;
  const utf8 = `${summary.invalidUtf8 ? `, ${summary.invalidUtf8} not valid UTF-8 (decoded with replacements)` : ''}${summary.windows1252 ? `, ${summary.windows1252} read as Windows-1252` : ''}`;
  return `${parts.join(', ')}; ${chunks}${utf8}; ${summary.seconds.toFixed(1)}s`;
}
