// What ingest keeps of real documentation pages (fixtures/pages, saved unchanged):
// the content, not the page furniture (navigation sidebar, page header, table of
// contents, "copy" buttons, "#" permalinks), and reStructuredText's directives and
// roles read as what they show. In process on the loaders, then end to end through
// the CLI (in-process) on the stored chunks.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToUnit } from '../src/ingest/html.js';
import { rstToPlain } from '../src/ingest/rst.js';
import { ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

const PAGES = path.join(ROOT, 'fixtures', 'pages');
const nodePage = fs.readFileSync(path.join(PAGES, 'nodejs-synopsis.html'), 'utf8');
const cmakePage = fs.readFileSync(path.join(PAGES, 'cmake-target_link_options.rst'), 'utf8');
const libffiPage = fs.readFileSync(path.join(PAGES, 'libffi-The-Closure-API.html'), 'utf8');
/** The sidebar's module list, the header, the table of contents and the buttons of the Node.js page. */
const FURNITURE = ['Assertion testing', 'Worker threads', 'Zlib', 'Table of contents', 'Toggle dark mode', 'Skip to content', 'Node.js v20.20.2 documentation', 'View on single page', 'Edit on GitHub'];

describe('HTML page furniture', () => {
  const { unit, title } = htmlToUnit(nodePage);

  it('drops the sidebar, the page header, the table of contents, copy buttons and # permalinks', () => {
    for (const furniture of FURNITURE) expect(unit.text).not.toContain(furniture);
    expect(unit.text).not.toMatch(/(^|\s)copy$/m); // the buttons after each code block
    expect(unit.text).not.toMatch(/#$/m); // the permalinks after each heading
  });

  it('keeps the content: headings, paragraphs and code, with the source line of each', () => {
    expect(title).toBe('Usage and example | Node.js v20.20.2 Documentation');
    expect(unit.headings?.map((h) => [h.level, h.text])).toEqual([
      [2, 'Usage and example'],
      [3, 'Usage'],
      [3, 'Example'],
    ]);
    expect(unit.text).toContain('Please see the Command-line options document for more information.');
    expect(unit.text).toContain("res.end('Hello, World!\\n');");
    const lines = unit.text.split('\n');
    const at = lines.findIndex((line) => line.startsWith('Please see the'));
    expect(unit.sourceLines?.[at]).toBe(nodePage.split('\n').findIndex((line) => line.startsWith('<p>Please see the')) + 1);
  });

  it('keeps an article’s own header and footer, and text around the furniture stays apart', () => {
    const page = `<body><header>Site name</header><nav><a href="/">Home</a></nav>
<main><article><header><h1>Release notes</h1><p>Published in May</p></header><p>Intro<button>copy</button></p>
<footer>Written by the docs team</footer></article></main><footer>© Example</footer></body>`;
    const { unit: small } = htmlToUnit(page);
    expect(small.text).toBe('Release notes\n\nPublished in May\n\nIntro\n\nWritten by the docs team');
  });
});

describe('DocBook navigation (Valgrind, GNU and other DocBook XSL manuals)', () => {
  it('drops the Prev / Up / Home / Next bars above and below each page, as a table of class nav or a navheader / navfooter div', () => {
    const page = `<body><div><table class="nav" summary="Navigation header"><tr>
<td><a href="cl-manual.html"><img src="prev.png" alt="Prev"></a></td><th>Valgrind User Manual</th>
<td><a href="drd-manual.html"><img src="next.png" alt="Next"></a></td></tr></table></div>
<div class="chapter"><h1>7. Helgrind: a thread error detector</h1><p>To use this tool, specify --tool=helgrind.</p></div>
<div><table class="nav" summary="Navigation footer"><tr><td><a href="cl-manual.html">&lt;&lt; 6. Callgrind</a></td>
<td><a href="manual.html">Up</a></td><td><a href="drd-manual.html">8. DRD &gt;&gt;</a></td></tr>
<tr><td><a href="index.html">Home</a></td></tr></table></div>
<div class="navheader">Prev Next</div><div class="navfooter">Home</div></body>`;
    expect(htmlToUnit(page).unit.text).toBe('7. Helgrind: a thread error detector\n\nTo use this tool, specify --tool=helgrind.');
  });
});

describe('GNU Texinfo navigation (makeinfo and texi2any manuals: libffi, bc, nettle...)', () => {
  it('drops the Next / Previous / Up line above and below a node, and the ¶ after each definition', () => {
    const { unit, title } = htmlToUnit(libffiPage);
    expect(title).toBe('The Closure API (libffi: the portable foreign function interface library)');
    expect(unit.text).not.toMatch(/Next:|Previous:|Up: Using libffi|\[Index\]|¶/);
    expect(unit.text).toMatch(/^2\.5 The Closure API\n/);
    expect(unit.headings).toEqual([{ line: 0, level: 3, text: '2.5 The Closure API' }]);
    const lines = unit.text.split('\n');
    const definition = lines.indexOf('Function: void ffi_closure_free (void *writable)');
    expect(definition).toBeGreaterThan(0);
    expect(unit.sourceLines?.[definition]).toBe(libffiPage.split('\n').findIndex((line) => line.includes('ffi_closure_free (void')) + 1);
  });

  it('drops the line as makeinfo 4 (a div of class node) and texi2any 7 (a nav-panel, copiable links) write it', () => {
    const makeinfo4 = `<html><head><meta name="generator" content="makeinfo 4.13"></head><body>
<div class="node"><a name="Fundamentals"></a>
<p><hr>
Next:&nbsp;<a rel="next" accesskey="n" href="#Tortoise">Tortoise</a>,
Up:&nbsp;<a rel="up" accesskey="u" href="#Top">Top</a>
</div>
<h2 class="chapter">1 The Fundamentals</h2>
<p>Guile is an implementation of Scheme.</p></body></html>`;
    expect(htmlToUnit(makeinfo4).unit.text).toBe('1 The Fundamentals\n\nGuile is an implementation of Scheme.');
    const texi2any7 = `<head><meta name="Generator" content="texi2any"></head><body>
<div class="chapter-level-extent" id="chap"><div class="nav-panel"><p>
Previous: <a href="#Top" accesskey="p" rel="prev">top</a>, Up: <a href="#Top" accesskey="u" rel="up">top</a> &nbsp; </p>
</div>
<h2 class="chapter" id="Chapter"><span>1 Chapter<a class="copiable-link" href="#Chapter"> &para;</a></span></h2>
<h4 class="node">A node heading</h4>
<table class="header"><tr><td>[<a href="#Index">Index</a>]</td></tr></table>
<p>Body text.</p></div></body>`;
    const { unit } = htmlToUnit(texi2any7);
    expect(unit.text).toBe('1 Chapter\n\nA node heading\n\nBody text.');
    expect(unit.headings?.map((h) => h.text)).toEqual(['1 Chapter', 'A node heading']);
  });

  it('takes a ¶ out of its line without breaking it: the terms of one definition stay together', () => {
    const page = `<dl><dt id='index-v'><span><code>-v</code><a href='#index-v' class='copiable-anchor'> &para;</a></span></dt>
<dt id='index-verbose'><span><code>--verbose</code><a href='#index-verbose' class='copiable-anchor'> &para;</a></span></dt>
<dd>Use the verbose format.</dd></dl><p>A <a class="copiable-link" href="#x">¶</a> mid-line.</p>`;
    expect(htmlToUnit(page).unit.text).toBe('-v\n--verbose\n\nUse the verbose format.\n\nA mid-line.');
  });

  it('drops the menus and tables of contents that list the sections by title (makeinfo 6, texi2any 7)', () => {
    const makeinfo6 = `<html><head><meta name="Generator" content="makeinfo"></head><body>
<h2 class="contents-heading">Table of Contents</h2>
<div class="contents"><ul class="no-bullet"><li><a href="#Introduction">1 Introduction</a></li></ul></div>
<h2 class="chapter">1 Introduction</h2>
<table class="menu" border="0" cellspacing="0"><tr><td align="left" valign="top">&bull; <a href="#Description">Description</a></td></tr>
<tr><th colspan="3" align="left" valign="top"><pre class="menu-comment">Basic Elements</pre></th></tr></table>
<p>bc is a language that supports arbitrary precision numbers.</p></body></html>`;
    expect(htmlToUnit(makeinfo6).unit.text).toBe('1 Introduction\n\nbc is a language that supports arbitrary precision numbers.');
    const texi2any7 = `<head><meta name="Generator" content="texi2any 7.0.2"></head><body>
<h1 class="top">libffi</h1>
<p>This manual is for libffi.</p>
<ul class="section-toc"><li><a href="Introduction.html" accesskey="1">What is libffi?</a></li><li><a href="Using-libffi.html">Using libffi</a></li></ul>
<div class="Contents_element" id="SEC_Contents"><h2 class="contents-heading">Table of Contents</h2><div class="contents"><ul><li>1 What is libffi?</li></ul></div></div>
</body>`;
    expect(htmlToUnit(texi2any7).unit.text).toBe('libffi\n\nThis manual is for libffi.');
    // An index: its entries, and the letters that jump into it.
    const index = `<head><meta name="Generator" content="makeinfo"></head><body><h2 class="unnumbered">Concept index</h2>
<table><tr><th valign="top">Jump to: &nbsp; </th><td><a class="summary-letter" href="#cp_letter-B"><b>B</b></a> &nbsp; <a class="summary-letter" href="#cp_letter-P"><b>P</b></a></td></tr></table>
<table class="index-cp" border="0"><tr><th id="cp_letter-P">P</th><td></td></tr>
<tr><td><a href="#Reporting-bugs">patches, contributing</a>:</td><td>&nbsp;</td><td><a href="#Reporting-bugs">Reporting bugs</a></td></tr></table>
<table class="cp-entries-printindex"><tr><td>portability</td></tr></table></body>`;
    expect(htmlToUnit(index).unit.text).toMatch(/^Concept index\n\nJump to:[\s\u00a0]*$/);
    // Elsewhere a menu is the page's own: kept.
    expect(htmlToUnit('<body><ul class="menu"><li>Starters</li><li>Mains</li></ul></body>').unit.text).toBe('Starters\nMains');
  });

  it('ends a heading where a paragraph opens: a footnote written "<h5>(1)</h3>" is not a heading with its text', () => {
    const page = `<h4 class="footnotes-heading">Footnotes</h4>\n<h5><a id="FOOT1" href="#DOCF1">(1)</a></h3>\n<p>Actually, the computation is done more efficiently.</p>`;
    const { unit } = htmlToUnit(page);
    expect(unit.headings?.map((h) => h.text)).toEqual(['Footnotes', '(1)']);
    expect(unit.text).toBe('Footnotes\n\n(1)\n\nActually, the computation is done more efficiently.');
  });

  it('keeps a header or node div of a page not made by Texinfo (Doxygen writes its title in div.header)', () => {
    const doxygen = `<head><meta name="generator" content="Doxygen 1.9.4"></head><body>
<div class="header"><div class="headertitle"><div class="title">ffi_cif Struct Reference</div></div></div>
<div class="node"><p>Next: the members.</p></div></body>`;
    expect(htmlToUnit(doxygen).unit.text).toBe('ffi_cif Struct Reference\n\nNext: the members.');
  });
});

describe('menus laid out in table cells (older sites, libxslt\'s pages)', () => {
  it('drops a cell that is a list of links, one to a line; keeps cells of text, and links written inline', () => {
    const page = `<body><table><tr>
<td valign="top"><table><tr><th>Main Menu</th></tr><tr><td><ul>
<li><a href="index.html">Home</a></li><li><a href="intro.html">Introduction</a></li>
<li><a href="docs.html">Documentation</a></li><li><a href="bugs.html">Reporting bugs and getting help</a></li>
<li><a href="downloads.html">Windows binaries</a></li></ul></td></tr></table></td>
<td><h1>The programming API</h1><p>Igor Zlatkovic provides <a href="http://x/">binaries</a> for Windows.</p>
<table><tr><td>Reading and writing</td><td>Duplex</td><td><a href="#r">_read()</a>, <a href="#w">_write()</a>, <a href="#v">_writev()</a>, <a href="#f">_final()</a></td></tr></table>
</td></tr></table></body>`;
    const { unit } = htmlToUnit(page);
    expect(unit.text).not.toMatch(/Windows binaries|Reporting bugs|Introduction/);
    expect(unit.text).toContain('Igor Zlatkovic provides binaries for Windows.');
    expect(unit.text).toContain('Reading and writing | Duplex | _read(), _write(), _writev(), _final()');
    expect(unit.headings).toEqual([{ line: unit.text.split('\n').indexOf('The programming API'), level: 1, text: 'The programming API' }]);
    expect(unit.sourceLines).toHaveLength(unit.text.split('\n').length);
  });
});

describe('reStructuredText directives and roles', () => {
  const plain = rstToPlain(cmakePage);

  it('keeps what they show and drops the markup, line for line', () => {
    expect(plain.split('\n')).toHaveLength(cmakePage.split('\n').length);
    expect(plain).not.toMatch(/^\s*\.\. /m);
    expect(plain).not.toMatch(/:(command|prop_tgt|prop_dir|ref|manual):`/);
    expect(plain).toContain('New in version 3.13.');
    expect(plain).toContain('add_executable or add_library and must not be an\nALIAS target.');
    expect(plain).toContain('see the STATIC_LIBRARY_OPTIONS target property.');
    expect(plain).toMatch(/^Note:$/m);
    expect(plain).toContain('See the cmake-generator-expressions(7)');
    expect(plain).toContain('  target_link_options(<target> [BEFORE]'); // the code block's content stays
  });

  it('reads other directives, options, targets and substitutions as they show (a reference as its replace definition says)', () => {
    const source = [
      '.. _my-target:',
      '.. toctree::',
      '   :maxdepth: 2',
      '',
      '.. variable:: CMAKE_<LANG>_FLAGS',
      '.. deprecated:: 3.0 Use the other one.',
      '.. |ver| replace:: 3.25',
      'Use :variable:`CMAKE_<LANG>_FLAGS` and :py:func:`~pkg.mod.run` as follows::',
      '.. warning:: Mind the gap.',
      'Since |ver|, see |XXX| and |unknown|; a | b | c stays.',
      '.. |XXX| replace:: :ref:`LIBRARY <Library Output Artifacts>`',
    ].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual([
      '',
      '',
      '',
      '',
      'CMAKE_<LANG>_FLAGS',
      'Deprecated since version 3.0: Use the other one.',
      '',
      'Use CMAKE_<LANG>_FLAGS and pkg.mod.run as follows:',
      'Warning: Mind the gap.',
      'Since 3.25, see LIBRARY and |unknown|; a | b | c stays.',
      '',
    ]);
  });
});

describe('reStructuredText as CMake writes it', () => {
  it('reads a role whose text goes on to the next line, and a titled role whose target holds angle brackets', () => {
    const source = [
      'This will store in ``<var>`` a :ref:`semicolon-separated list <CMake Language',
      'Lists>` of deferred call ids.',
      'the path is :ref:`normalized',
      '<Normalization>` after the conversion.',
      'Use the :variable:`CMAKE_POLICY_DEFAULT_CMP0077',
      '<CMAKE_POLICY_DEFAULT_CMP\\<NNNN\\>>` variable to set the policy.',
      'See :variable:`CMAKE_POLICY_WARNING_CMP0102 <CMAKE_POLICY_WARNING_CMP<NNNN>>` and :ref:`~a.b`.',
    ].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual([
      'This will store in `<var>` a semicolon-separated list',
      ' of deferred call ids.',
      'the path is normalized',
      ' after the conversion.',
      'Use the CMAKE_POLICY_DEFAULT_CMP0077',
      ' variable to set the policy.',
      'See CMAKE_POLICY_WARNING_CMP0102 and a.b.',
    ]);
  });

  it('drops comments with the lines indented under them, keeps footnotes, and reads toctree entries as page names', () => {
    const source = [
      '.. cmake-manual-description: CMake Modules Reference', // a comment: never shown
      '',
      'Utility Modules',
      '^^^^^^^^^^^^^^^',
      '',
      '.. toctree::',
      '   :maxdepth: 1',
      '',
      '   /module/AndroidTestUtilities',
      '   Fetching content </module/FetchContent>',
      '   nested/Page/',
      'After the list.',
      '..',
      '   A comment written under an empty marker,',
      '',
      '   that goes on after a blank line.',
      'Shown again.',
      '.. [1] A footnote is shown.',
      '.. cmake-module:: ../../Modules/X.cmake',
    ].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual([
      '',
      '',
      'Utility Modules',
      '^^^^^^^^^^^^^^^',
      '',
      '',
      '',
      '',
      '   AndroidTestUtilities',
      '   Fetching content',
      '   Page',
      'After the list.',
      '',
      '',
      '',
      '',
      'Shown again.',
      '[1] A footnote is shown.',
      '',
    ]);
  });

  it('reads a tab\'s label over what it holds, so a lead-in reaches the command', () => {
    const source = ['installed like so:', '', '.. tab:: Unix/macOS', '', '   .. code-block:: shell', '', '      python -m pip install -r requirements.txt'].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual(['installed like so:', '', 'Unix/macOS:', '', '', '', '      python -m pip install -r requirements.txt']);
  });

  it('keeps a quote after an empty comment, and what follows a directive in a list item', () => {
    expect(rstToPlain('- item one\n\n..\n\n   A block quote that is real content.').split('\n')).toEqual(['- item one', '', '', '', '   A block quote that is real content.']);
    expect(rstToPlain('- .. index:: foo\n\n  List item content').split('\n')).toEqual(['', '', '  List item content']);
  });

  it('drops the page\'s metadata fields before anything is shown, and the body of meta and index directives', () => {
    const source = [':orphan:', ':tocdepth: 2', '', '.. meta::', '', '  :http-equiv=refresh: 3; url=../getting-started/', '', 'Title', '=====', '', ':Field: shown, after the title', '.. index:: single: pip; install', '   pair: pip; wheel', 'After.'].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual(['', '', '', '', '', '', '', 'Title', '=====', '', ':Field: shown, after the title', '', '', 'After.']);
  });

  it('reads hyperlink references and inline targets as their text, and inline literals as Markdown code', () => {
    const source = [
      'See the `Output file location`_ section and `CMake <https://cmake.org>`__.',
      'An _`inline target` here; ``literal`_`` and ``code``_ stay.',
      '`a`_, `b`_',
    ].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual([
      'See the Output file location section and CMake.',
      'An inline target here; ``literal`_`` and ``code``_ stay.',
      'a, b',
    ]);
    expect(rstToPlain('Set ``CMAKE_BUILD_TYPE`` to ``Release`` (not x``y``), or ``a\nb``.').split('\n')).toEqual([
      'Set `CMAKE_BUILD_TYPE` to `Release` (not x``y``), or ``a',
      'b``.',
    ]);
  });

  it('reads a hyperlink reference written over a line break as its text, the first part on the first line and the rest on the second (pip\'s user guide)', () => {
    const source = [
      ':ref:`pip wheel` requires the `wheel package',
      '<https://pypi.org/project/wheel/>`_ to be installed, which provides the',
      'Please give us feedback through the `resolver',
      'testing survey`_. Read the `long',
      'guide`_ and `ask',
      '   for help in our issue tracker or chat <https://pip.pypa.io/>`__.',
      'Check the `CDash test measurement documentation',
      '<https://github.com/Kitware/CDash/blob/master/docs/test_measurements.md>`_',
      'for more information.',
      'Set ``a.b()`` then',
      '`x`_ stays, as does `interpreted',
      'text` and ``a literal',
      'b``_.',
    ].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual([
      'pip wheel requires the wheel package',
      ' to be installed, which provides the',
      'Please give us feedback through the resolver',
      'testing survey. Read the long',
      'guide and ask',
      '   for help in our issue tracker or chat.',
      // The second line keeps a word: left blank, it would cut the paragraph in two.
      'Check the CDash test measurement',
      'documentation',
      'for more information.',
      'Set `a.b()` then',
      'x stays, as does `interpreted',
      'text` and ``a literal',
      'b``_.',
    ]);
  });

  it('reads a replace definition written over several lines, and references inside definitions (CMake\'s find_* pages)', () => {
    const source = [
      '.. |SUBDIR| replace:: ``<prefix>/include``',
      '.. |PATH_XXX| replace::',
      '   ``<prefix>/include/<arch>`` if :variable:`CMAKE_LIBRARY_ARCHITECTURE`',
      '   is set, and |SUBDIR|',
      '.. |LOOP| replace:: again |LOOP|',
      '',
      'Searched: |PATH_XXX|. Then |LOOP|.',
    ].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual([
      '',
      '',
      '',
      '',
      '',
      '',
      'Searched: `<prefix>/include/<arch>` if CMAKE_LIBRARY_ARCHITECTURE is set, and `<prefix>/include`. Then again |LOOP|.',
    ]);
  });

  it('leaves a literal block as written: after "::" and in a code directive, inline markup is code', () => {
    const source = ['Write it so::', '', '   Use ``x`` and a `long', '   link`_ here, |ver|.', '', 'Then ``y``.', '', '.. code-block:: rst', '   :linenos:', '', '   See :ref:`z` and ``w``.', 'Done ``v``.', '.. |ver| replace:: 3.25'].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual(['Write it so:', '', '   Use ``x`` and a `long', '   link`_ here, |ver|.', '', 'Then `y`.', '', '', '', '', '   See :ref:`z` and ``w``.', 'Done `v`.', '']);
  });

  it('keeps nested replace definitions short: a page cannot make itself grow exponentially', () => {
    const lines = ['.. |a1| replace:: word'];
    for (let level = 2; level <= 6; level++) lines.push(`.. |a${level}| replace:: ${Array.from({ length: 20 }, () => `|a${level - 1}|`).join(' ')}`);
    lines.push('', 'Text |a6| and |a2| here.');
    const plain = rstToPlain(lines.join('\n'));
    expect(plain.split('\n')).toHaveLength(lines.length);
    expect(plain.length).toBeLessThan(5000);
    expect(plain).toContain(`and ${Array.from({ length: 20 }, () => 'word').join(' ')} here.`);
  });

  it('reads nothing of a Sphinx extension\'s directive (a hyphenated name it does not know), and an object directive as its name', () => {
    const source = ['Windows:', '', '.. pip-command-usage:: uninstall "py -m pip"', '', '.. variable:: CMAKE_BUILD_TYPE', '.. towncrier-draft-entries:: |release|, unreleased as on'].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual(['Windows:', '', '', '', 'CMAKE_BUILD_TYPE', '']);
  });

  it('reads a directive that follows a list bullet', () => {
    const source = ['  * .. versionadded:: 3.6', '      The target is being cross-compiled.', '  - .. note::'].join('\n');
    expect(rstToPlain(source).split('\n')).toEqual(['  * New in version 3.6.', '      The target is being cross-compiled.', '  - Note:']);
  });
});

describe('ingest of the saved pages', () => {
  let home: string;
  const dbFile = () => path.join(home, 'data', 'ragline', 'ragline.db');

  beforeAll(async () => {
    home = tempDir('ragline-pages-');
    const result = await ragline(['ingest', PAGES], { env: isolatedEnv(home) });
    expect(result.code, result.stderr).toBe(0);
  });
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  it('stores chunks without furniture or markup, citing the files’ own lines', () => {
    const db = new Database(dbFile(), { readonly: true });
    try {
      const chunks = db
        .prepare('SELECT d.path, c.text, c.start_line AS startLine, c.heading FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY d.path, c.ordinal')
        .all() as { path: string; text: string; startLine: number; heading: string }[];
      const node = chunks.filter((c) => c.path === 'nodejs-synopsis.html');
      const cmake = chunks.filter((c) => c.path === 'cmake-target_link_options.rst');
      const libffi = chunks.filter((c) => c.path === 'libffi-The-Closure-API.html');
      expect(node.length).toBeGreaterThan(0);
      expect(cmake.length).toBeGreaterThan(0);
      for (const chunk of node) for (const furniture of FURNITURE) expect(chunk.text).not.toContain(furniture);
      // The first chunk of the page is its content, from its first heading; the <title> is the document's title, not text.
      expect(node[0]!.startLine).toBe(nodePage.split('\n').findIndex((line) => line.includes('<h2>Usage and example')) + 1);
      expect(node[0]!.text).toMatch(/^Usage and example(\n|$)/);
      expect(node.map((c) => c.text).join('\n')).not.toContain('Node.js v20.20.2 Documentation');
      expect(node.map((c) => c.text).join('\n')).toContain('Please see the Command-line options document');
      for (const chunk of cmake) expect(chunk.text).not.toMatch(/\.\. (versionadded|note|code-block|include)::|:prop_tgt:`/);
      expect(cmake.map((c) => c.text).join('\n')).toContain('New in version 3.13.');
      expect(cmake[0]!.heading).toBe('target_link_options');
      // Texinfo's navigation line is no chunk of its own before the first heading, nor in any chunk; no "¶" either.
      expect(libffi.length).toBeGreaterThan(0);
      expect(libffi[0]!.text).toMatch(/^2\.5 The Closure API\n/);
      for (const chunk of libffi) expect(chunk.text).not.toMatch(/Next:|Previous:|¶/);
    } finally {
      db.close();
    }
  });
});

describe('HTML code blocks', () => {
  it('puts each <code> of a <pre> on lines of its own (the Node.js docs give a CommonJS and an ES module version side by side)', () => {
    const html =
      '<p>Example:</p><pre><code class="language-js cjs">const { spawn } = require(\'node:child_process\');\n' +
      'spawn(\'ls\');</code><code class="language-js mjs">import { spawn } from \'node:child_process\';\n' +
      'spawn(\'ls\');</code></pre><p>After.</p>';
    const lines = htmlToUnit(html).unit.text.split('\n');
    expect(lines).toContain("spawn('ls');");
    expect(lines).toContain("import { spawn } from 'node:child_process';");
    expect(lines.filter((line) => line === "spawn('ls');")).toHaveLength(2);
  });

  it('keeps inline <code> inside a <pre> on its line', () => {
    const { unit } = htmlToUnit('<pre>run <code>make</code> then <code>make install</code></pre>');
    expect(unit.text).toBe('run make then make install');
  });
});
