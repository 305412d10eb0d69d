// Removing a folder from the index: its documents, their chunks and index rows go,
// the folder on disk and the sessions stay. For a folder moved or deleted on disk,
// whose documents would otherwise stay searchable at paths that no longer exist
// (`doctor` names them), and for one no longer wanted.

import fs from 'node:fs';
import path from 'node:path';
import { indexText } from '../ingest/index-text.js';
import { keywordsDrifted, rewriteKeywordIndex } from '../ingest/keywords.js';
import { removeFolder, storedFolders, type StoredFolder } from '../store/documents.js';
import { acquireIngestLock, forgetFolderRecords } from '../store/meta.js';
import { UserError } from '../util/errors.js';
import type { Workspace } from './workspace.js';

/**
 * The folder of the index that `folder` (absolute, or relative to the process's
 * folder) names, with what the index holds of it: the folder as given, or where it
 * points when it still exists (the index keeps real paths). A UserError, listing
 * the index's folders, when it names none of them.
 */
export async function indexedFolder(workspace: Workspace, folder: string): Promise<StoredFolder> {
  const given = path.resolve(folder);
  const real = fs.existsSync(given) ? fs.realpathSync(given) : given;
  const folders = workspace.postgres ? await (await import('../store/postgres/sessions.js')).pgStoredFolders(workspace.postgres) : storedFolders(workspace.db);
  const found = folders.find((stored) => stored.root === given) ?? folders.find((stored) => stored.root === real);
  if (found) return found;
  const held = folders.map((stored) => stored.root);
  throw new UserError(`${given} is not a folder of the index.`, {
    hint: held.length === 0 ? 'The index holds no folder yet.' : `The index holds ${held.length === 1 ? held[0] : `${held.length} folders: ${held.slice(0, 5).join(', ')}${held.length > 5 ? ', ...' : ''}`} (\`ragline stats\` lists them).`,
    exitCode: 2,
  });
}

/**
 * Removes the folder `root` of the index (as `indexedFolder` gives it) with all its
 * documents, under the ingest lock; the keyword index is rewritten from the chunks
 * left when its totals count too many removed rows, as an ingest does. Returns what
 * was removed.
 */
export async function forgetFolder(workspace: Workspace, root: string): Promise<StoredFolder> {
  // On Postgres one transaction, its keyword index kept by Postgres itself.
  if (workspace.postgres) return { root, ...(await (await import('../store/postgres/sessions.js')).pgRemoveFolder(workspace.postgres, root)) };
  const { db } = workspace;
  const release = acquireIngestLock(db);
  try {
    const removed = removeFolder(db, root);
    forgetFolderRecords(db, root);
    if (keywordsDrifted(db)) rewriteKeywordIndex(db, indexText, () => keywordsDrifted(db));
    return { root, ...removed };
  } finally {
    release();
  }
}
