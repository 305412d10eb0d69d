// A page that only sends its reader elsewhere ("This page has moved", with a
// refresh to the new address) is not a document: pip's docs keep fifteen of them,
// and they took a fifth of its index. Skipped as `redirect`.

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ingestFolder, openWorkspace } from '../src/app/index.js';
import { tempDir } from './helpers/cli.js';

describe('pages that only send their reader elsewhere', () => {
  test('are skipped as redirects, in reStructuredText, MyST Markdown and HTML; a page that mentions a refresh, or has content and refreshes, is not', async () => {
    const folder = tempDir('ragline-redirect-');
    const write = (name: string, text: string) => fs.writeFileSync(path.join(folder, name), text);
    write('moved.rst', ':orphan:\n\n.. meta::\n\n  :http-equiv=refresh: 3; url=../getting-started/\n\nThis page has moved\n===================\n\nYou should be redirected automatically in 3 seconds.\n');
    write('moved.md', '---\norphan: true\n---\n\n```{meta}\n:http-equiv=refresh: 0; url=../new/\n```\n\n# This page has moved\n');
    write('moved.html', '<html><head><meta content="0; URL=new.html" http-equiv="Refresh"><title>Moved</title></head><body><p>This page has moved.</p></body></html>');
    write('guide.md', '# Guide\n\nA page can say `<meta http-equiv="refresh" content="5">` to reload itself; this one only explains it.\n');
    write('real.html', '<html><head><meta http-equiv="refresh" content="30"><title>Status</title></head><body><p>The status board reloads every 30 seconds.</p></body></html>');
    // A page of content that also refreshes: after minutes, or with text of its own.
    write('board.html', '<html><head><meta http-equiv="refresh" content="300; url=board.html"><title>Board</title></head><body><p>The board lists every build.</p></body></html>');
    write('long.html', `<html><head><meta http-equiv="refresh" content="5; url=next.html"></head><body>${'<p>A paragraph of the page itself, long enough to count.</p>'.repeat(60)}</body></html>`);
    const workspace = openWorkspace({ db: path.join(tempDir('ragline-redirect-db-'), 'r.db') });
    try {
      const summary = await ingestFolder(workspace, folder);
      expect(summary.files.added).toBe(4);
      expect(summary.files.skipped).toEqual({ redirect: 3 });
      expect(summary.skippedPaths.redirect).toEqual(['moved.html', 'moved.md', 'moved.rst']);
    } finally {
      await workspace.close();
      fs.rmSync(folder, { recursive: true, force: true });
    }
  });
});
