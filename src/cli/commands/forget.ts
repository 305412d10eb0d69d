// `ragline forget <folder>`: removes a folder's documents from the index (a folder
// moved or deleted on disk, which `doctor` names, or one no longer wanted). Asks
// first on a terminal, as `sessions rm` does; `--yes` for scripts.

import type { Command } from 'commander';
import { forgetFolder, indexedFolder } from '../../app/forget.js';
import { UserError } from '../../util/errors.js';
import { oneLine } from '../../util/sanitize.js';
import { openWorkspaceFor, settingsFor } from '../context.js';
import { inCwd, ioOf } from '../io.js';
import { outputFor } from '../output.js';
import { count, shellWord } from '../../util/words.js';

export function registerForget(program: Command): void {
  program
    .command('forget')
    .description('remove a folder and all its documents from the index (the folder on disk and the sessions are kept)')
    .argument('<folder>', 'a folder the index holds (`ragline stats` lists them), on disk or gone from it')
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--json', 'print what was removed as JSON')
    .addHelpText(
      'after',
      `
A folder moved on disk: ingest it where it is now, then forget where it was.

Examples:
  ragline ingest ~/notes-new && ragline forget ~/notes
  ragline forget /mnt/old-share/docs --yes`,
    )
    .action(async (folder: string, flags: { yes?: boolean; json?: boolean }, command: Command) => {
      const output = outputFor(command);
      const io = ioOf(command);
      const workspace = openWorkspaceFor(settingsFor(command));
      try {
        const found = await indexedFolder(workspace, inCwd(io, folder));
        const what = `${oneLine(found.root, 200)} and its ${count(found.documents, 'document')} (${count(found.chunks, 'chunk')})`;
        if (!flags.yes) {
          if (!io.stdin.isTTY || !io.stdout.isTTY) {
            throw new UserError(`Not removing ${what} from the index: there is no terminal to confirm on.`, {
              hint: `Add --yes to remove it without asking: ragline forget ${shellWord(found.root)} --yes`,
              exitCode: 2,
            });
          }
          const message = `Remove ${what} from the index? The folder on disk is not touched.`;
          const ok = await (await import('@inquirer/prompts')).confirm({ message, default: false }, { input: io.stdin, output: io.stdout });
          if (!ok) {
            output.out('Nothing removed.');
            return;
          }
        }
        const removed = await forgetFolder(workspace, found.root);
        if (flags.json) return output.json(removed);
        output.out(`Removed ${oneLine(removed.root, 200)} from the index: ${count(removed.documents, 'document')}, ${count(removed.chunks, 'chunk')}. The folder on disk was not touched; sessions are kept.`);
      } finally {
        await workspace.close();
      }
    });
}

