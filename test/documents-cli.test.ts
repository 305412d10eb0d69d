// `ragline documents` (alias `docs`): the indexed documents, through the CLI run
// in-process, checked against the files ingested and against `stats`.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, ragline, tempDir, writeTinyDocs } from './helpers/cli.js';

let home: string;
let docs: string;
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  home = tempDir('ragline-documents-');
  docs = writeTinyDocs();
  fs.mkdirSync(path.join(docs, 'guides'));
  fs.writeFileSync(path.join(docs, 'guides', 'setup.txt'), 'Setup\n=====\n\nInstall the CLI, then run orbit login.\n');
  env = isolatedEnv(home, { RAGLINE_DB: path.join(home, 'docs.db') });
});

afterAll(() => {
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(docs, { recursive: true, force: true });
});

describe('ragline documents', () => {
  it('lists every indexed document with its kind, chunks, size and ingest time; --json gives the same', async () => {
    const before = new Date().toISOString();
    expect((await ragline(['ingest', docs], { env })).code).toBe(0);
    const listed = await ragline(['documents', '--json'], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const documents = JSON.parse(listed.stdout) as { path: string; kind: string; folder: string; chunks: number; size: number; ingestedAt: string }[];
    expect(documents.map((d) => [d.path, d.kind])).toEqual([
      ['guides/setup.txt', 'text'],
      ['keys.md', 'markdown'],
      ['webhooks.md', 'markdown'],
    ]);
    for (const doc of documents) {
      expect(doc.folder).toBe(fs.realpathSync(docs));
      expect(doc.size).toBe(fs.statSync(path.join(docs, doc.path)).size);
      expect(doc.chunks).toBeGreaterThan(0);
      expect(doc.ingestedAt >= before).toBe(true);
    }
    const stats = JSON.parse((await ragline(['stats', '--json'], { env })).stdout) as { documents: number; chunks: number };
    expect(documents.reduce((sum, d) => sum + d.chunks, 0)).toBe(stats.chunks);

    // `docs` is the same command; the table has a line per document and a total.
    const table = await ragline(['docs'], { env });
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^path +kind +chunks +size +ingested$/);
    expect(lines[1]).toMatch(new RegExp(`^guides/setup\\.txt +text +${documents[0]!.chunks} +${documents[0]!.size} B +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d$`));
    expect(lines.at(-1)).toBe(`3 documents, ${stats.chunks} ${stats.chunks === 1 ? 'chunk' : 'chunks'}`);
  });

  it('says so when nothing is indexed, and refuses a database that does not exist', async () => {
    const emptyHome = tempDir('ragline-documents-empty-');
    try {
      const emptyDb = path.join(emptyHome, 'empty.db');
      const other = isolatedEnv(emptyHome, { RAGLINE_DB: emptyDb });
      const missing = await ragline(['documents'], { env: other });
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toContain('No database at');
      // A database whose only folder was forgotten holds no document.
      expect((await ragline(['ingest', docs], { env: other })).code).toBe(0);
      const forgot = await ragline(['forget', docs, '--yes'], { env: other });
      expect(forgot.code, forgot.stderr).toBe(0);
      const none = await ragline(['documents'], { env: other });
      expect(none.code, none.stderr).toBe(0);
      expect(none.stdout).toBe('No documents are indexed yet. Add some with `ragline ingest <folder>`.\n');
      expect(JSON.parse((await ragline(['documents', '--json'], { env: other })).stdout)).toEqual([]);
    } finally {
      fs.rmSync(emptyHome, { recursive: true, force: true });
    }
  });
});
