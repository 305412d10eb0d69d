// CMake's module pages (`.. cmake-module:: ../../Modules/X.cmake`) are indexed with
// the documentation block of the .cmake file they name, as Sphinx renders them:
// found from the page's real folder, only from a `.cmake` file, only its `.rst:`
// block, each line citing the directive's line; a changed module file is seen by
// `--checksum`.

import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ingestFolder, listIndexedDocuments, openWorkspace, readIndexedDocument, search, type Workspace } from '../src/app/index.js';
import { chunkDocument } from '../src/ingest/chunk.js';
import { allowedModuleTarget, cmakeDocBlock, cmakeModuleTarget } from '../src/ingest/cmake-module.js';
import { loadDocument } from '../src/ingest/load.js';
import { tempDir } from './helpers/cli.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

const MODULE = [
  '# Distributed under the OSI-approved BSD 3-Clause License.',
  '',
  '#[=======================================================================[.rst:',
  'FetchWidget',
  '-----------',
  '',
  'Populate widget content at configure time.',
  '',
  'Overview',
  '^^^^^^^^',
  '',
  'Use :command:`FetchWidget_Declare` to describe the widget, then call',
  '``FetchWidget_MakeAvailable`` to download it.',
  '#]=======================================================================]',
  '',
  'include(${CMAKE_CURRENT_LIST_DIR}/secret-helpers.cmake)',
  'set(WIDGET_TOKEN "s3cr3t")',
].join('\n');

describe('the module file and its block', () => {
  test('the directive is found in the first lines, and only naming a .cmake file', () => {
    expect(cmakeModuleTarget('.. cmake-module:: ../../Modules/FetchWidget.cmake\n')).toBe('../../Modules/FetchWidget.cmake');
    expect(cmakeModuleTarget('.. cmake-manual-description: Widgets\n\n.. cmake-module:: ../W.cmake\r\n')).toBe('../W.cmake');
    expect(cmakeModuleTarget('.. cmake-module:: ../../../etc/passwd\n')).toBeUndefined();
    expect(cmakeModuleTarget('Text first.\n\n   .. cmake-module:: ../W.cmake\n')).toBeUndefined(); // indented: inside something else
  });

  test('a page brings in only a .cmake file named as itself, a few folders up at most', () => {
    expect(allowedModuleTarget('../../Modules/FetchContent.cmake', 'module/FetchContent.rst')).toBe(true);
    expect(allowedModuleTarget('../../Modules/FetchContent.cmake', 'module/FetchContent.rst.gz')).toBe(true);
    expect(allowedModuleTarget('../../Modules/Other.cmake', 'module/FetchContent.rst')).toBe(false);
    expect(allowedModuleTarget('/etc/FetchContent.cmake', 'module/FetchContent.rst')).toBe(false);
    expect(allowedModuleTarget('../../../../FetchContent.cmake', 'module/FetchContent.rst')).toBe(false);
    expect(allowedModuleTarget('../Modules/../../x/FetchContent.cmake', 'module/FetchContent.rst')).toBe(false);
    expect(allowedModuleTarget('FetchContent.cmake', 'FetchContent.rst')).toBe(true);
  });

  test('a bracket block is read to its matching close; a #.rst: block is the # lines after it; none is undefined', () => {
    const block = cmakeDocBlock(MODULE)!;
    expect(block.split('\n')[0]).toBe('FetchWidget');
    expect(block).toContain('``FetchWidget_MakeAvailable`` to download it.');
    expect(block).not.toContain('s3cr3t');
    expect(block).not.toContain(']=');
    expect(cmakeDocBlock('#.rst:\n# OldModule\n# ---------\n#\n# Does old things.\n\nset(X 1)\n# a later comment\n')).toBe(
      'OldModule\n---------\n\nDoes old things.',
    );
    expect(cmakeDocBlock('set(X 1)\n# just a comment\n')).toBeUndefined();
    expect(cmakeDocBlock('#[==[.rst:\nNever closed\n#]=]\n')).toBeUndefined(); // a close with other "=" is no close
  });

  test('loaded with its module file, a page reads as the block, titled and split by its sections, citing the directive', async () => {
    const page = '.. cmake-module:: ../../Modules/FetchWidget.cmake\n';
    const loaded = await loadDocument('Help/module/FetchWidget.rst', utf8(page), [{ target: '../../Modules/FetchWidget.cmake', bytes: utf8(MODULE) }]);
    expect(loaded.title).toBe('FetchWidget');
    const chunks = chunkDocument(loaded, { size: 120, overlap: 0 });
    expect(chunks.map((c) => c.text).join('\n')).toContain('Use FetchWidget_Declare to describe the widget');
    expect(chunks.some((c) => c.headingPath.includes('Overview'))).toBe(true);
    for (const chunk of chunks) expect([chunk.startLine, chunk.endLine]).toEqual([1, 1]);
    expect(chunks.map((c) => c.text).join('\n')).not.toContain('../../Modules');

    // Another file than the one the page names, or none: the page as it stands.
    const other = await loadDocument('Help/module/FetchWidget.rst', utf8(page), [{ target: '../Other.cmake', bytes: utf8(MODULE) }]);
    expect(chunkDocument(other)).toEqual([]);
  });
});

describe('ingest of a CMake Help folder', () => {
  let base: string;
  let workspace: Workspace;
  beforeEach(() => {
    base = tempDir('ragline-cmake-');
    fs.mkdirSync(path.join(base, 'share/Help/module'), { recursive: true });
    fs.mkdirSync(path.join(base, 'share/Modules'), { recursive: true });
    fs.writeFileSync(path.join(base, 'share/Modules/FetchWidget.cmake'), MODULE);
    fs.writeFileSync(path.join(base, 'share/Help/module/FetchWidget.rst'), '.. cmake-module:: ../../Modules/FetchWidget.cmake\n');
    fs.writeFileSync(path.join(base, 'secret.txt'), 'The vault code is 1234.\n');
    fs.writeFileSync(path.join(base, 'share/Help/module/Sneaky.rst'), 'Sneaky\n======\n\n.. cmake-module:: ../../../secret.txt\n');
    // A .cmake file elsewhere, named by a page: by its full path, or as another name.
    fs.mkdirSync(path.join(base, 'private'));
    fs.writeFileSync(path.join(base, 'private/Vault.cmake'), '#[[.rst:\nVault\n-----\n\nThe vault code is 5678.\n#]]\n');
    fs.writeFileSync(path.join(base, 'share/Help/module/Vault.rst'), `.. cmake-module:: ${path.join(base, 'private/Vault.cmake')}\n`);
    fs.writeFileSync(path.join(base, 'share/Help/module/Other.rst'), '.. cmake-module:: ../../../private/Vault.cmake\n');
    // The Help folder read through a link, as a user's docs folder may hold it.
    fs.symlinkSync(path.join(base, 'share/Help'), path.join(base, 'help-link'));
    workspace = openWorkspace({ db: path.join(base, 'r.db') });
  });
  afterEach(async () => {
    await workspace.close();
    fs.rmSync(base, { recursive: true, force: true });
  });

  test('finds the module file from the page\'s real folder, cites the page, and reads nothing but .cmake blocks', async () => {
    await ingestFolder(workspace, path.join(base, 'help-link'));
    const found = await search(workspace, 'download widget at configure time');
    expect(found.results[0]?.location).toBe('module/FetchWidget.rst:1');
    expect(found.results[0]?.text).toContain('FetchWidget_MakeAvailable');
    const documents = listIndexedDocuments(workspace).map((d) => d.path).sort();
    expect(documents).toEqual(['module/FetchWidget.rst', 'module/Sneaky.rst']); // Vault.rst and Other.rst: nothing to index
    const page = readIndexedDocument(workspace, 'module/FetchWidget.rst')!;
    expect(page.last).toBe(1);
    expect(page.text).toContain('Populate widget content at configure time.');
    expect(page.text).toContain('`FetchWidget_MakeAvailable` to download it.'); // every section, in order
    expect(page.text.indexOf('Populate')).toBeLessThan(page.text.indexOf('MakeAvailable'));
    expect(readIndexedDocument(workspace, 'module/Sneaky.rst')?.text).not.toContain('vault');
    expect((await search(workspace, 'vault code')).results.map((r) => r.text).join(' ')).not.toMatch(/1234|5678/);
  });

  test('a changed module file is read again by --checksum (the page itself did not change)', async () => {
    await ingestFolder(workspace, path.join(base, 'help-link'));
    fs.writeFileSync(path.join(base, 'share/Modules/FetchWidget.cmake'), MODULE.replace('Populate widget content', 'Populate gadget content'));
    const plain = await ingestFolder(workspace, path.join(base, 'help-link'));
    expect(plain.files.changed).toBe(0); // size and time of the page are the same
    const checked = await ingestFolder(workspace, path.join(base, 'help-link'), { checksum: true });
    expect(checked.files.changed).toBe(1);
    expect((await search(workspace, 'gadget content')).results[0]?.location).toBe('module/FetchWidget.rst:1');
  });
});

describe('reading back a document whose chunks hold more lines than they cite', () => {
  test('gives all of its text, in order: a module page with text after the directive, and HTML laid out from few source lines', async () => {
    const base = tempDir('ragline-readback-');
    fs.mkdirSync(path.join(base, 'Help/module'), { recursive: true });
    fs.mkdirSync(path.join(base, 'Modules'));
    fs.writeFileSync(path.join(base, 'Modules/FetchWidget.cmake'), MODULE);
    const after = Array.from({ length: 8 }, (_, i) => `Paragraph ${i} after the module, with words enough to fill a line.`).join('\n\n');
    fs.writeFileSync(path.join(base, 'Help/module/FetchWidget.rst'), `.. cmake-module:: ../../Modules/FetchWidget.cmake\n\n${after}\n\nTRAILER line.\n`);
    const paragraphs = Array.from({ length: 40 }, (_, i) => `<p>HTML paragraph ${i} holds a sentence of its own.</p>`).join('');
    fs.writeFileSync(path.join(base, 'Help/page.html'), `<html><body>\n<h1>T</h1>\n${paragraphs}<p>LAST line</p>\n</body></html>\n`);
    const workspace = openWorkspace({ db: path.join(base, 'r.db'), settings: { 'chunk.size': 400, 'chunk.overlap': 0 } });
    try {
      await ingestFolder(workspace, path.join(base, 'Help'));
      const page = readIndexedDocument(workspace, 'module/FetchWidget.rst')!.text;
      for (const text of ['Populate widget content', 'FetchWidget_MakeAvailable', 'Paragraph 0 after', 'Paragraph 7 after', 'TRAILER line.']) expect(page).toContain(text);
      expect(page.indexOf('Populate widget content')).toBeLessThan(page.indexOf('Paragraph 7 after'));
      const html = readIndexedDocument(workspace, 'page.html')!.text;
      for (let i = 0; i < 40; i++) expect(html).toContain(`HTML paragraph ${i} holds`);
      expect(html).toContain('LAST line');
    } finally {
      await workspace.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('pages that include fragments', () => {
  test('read each fragment where it is included, with the page\'s substitutions, citing the directive; only .txt and .rst near the page', async () => {
    const base = tempDir('ragline-include-');
    const help = path.join(base, 'Help');
    fs.mkdirSync(path.join(help, 'prop_tgt'), { recursive: true });
    fs.mkdirSync(path.join(help, 'include'));
    fs.writeFileSync(path.join(help, 'prop_tgt/XXX_OUTPUT_DIRECTORY.txt'), 'Output directory in which to build |XXX| target files.\n\nThis property specifies the directory into which |xxx| target files\nshould be built.\n');
    fs.writeFileSync(path.join(help, 'include/WARNING.txt'), '.. note::\n\n  Linking it twice is an error.\n');
    fs.writeFileSync(
      path.join(help, 'prop_tgt/LIBRARY_OUTPUT_DIRECTORY.rst'),
      [
        'LIBRARY_OUTPUT_DIRECTORY',
        '------------------------',
        '',
        '.. |XXX| replace:: :ref:`LIBRARY <Library Output Artifacts>`',
        '.. |xxx| replace:: library',
        '.. include:: XXX_OUTPUT_DIRECTORY.txt',
        '',
        '.. include:: /include/WARNING.txt',
        '.. include:: ../../../../etc/hostname.txt',
        '.. include:: secret.cfg',
        '',
        'See also the LIBRARY_OUTPUT_DIRECTORY_<CONFIG> target property.',
        '',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(help, 'prop_tgt/secret.cfg'), 'password = hunter2\n');
    const workspace = openWorkspace({ db: path.join(base, 'r.db') });
    try {
      await ingestFolder(workspace, help);
      const found = await search(workspace, 'directory into which library target files should be built');
      expect(found.results[0]).toMatchObject({ documentPath: 'prop_tgt/LIBRARY_OUTPUT_DIRECTORY.rst', location: 'prop_tgt/LIBRARY_OUTPUT_DIRECTORY.rst:1-12' });
      const page = readIndexedDocument(workspace, 'prop_tgt/LIBRARY_OUTPUT_DIRECTORY.rst')!.text;
      expect(page).toContain('Output directory in which to build LIBRARY target files.');
      expect(page).toContain('the directory into which library target files');
      expect(page).toContain('Note:');
      expect(page).toContain('Linking it twice is an error.');
      expect(page).not.toMatch(/\|XXX\||replace::|include::|hunter2/);
      expect(page.indexOf('Output directory')).toBeLessThan(page.indexOf('See also'));
    } finally {
      await workspace.close();
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
