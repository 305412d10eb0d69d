// AsciiDoc (git's manual pages, `.adoc` and `.asciidoc` files) is indexed as the
// rendered page shows it, line for line so chunks cite the file's own lines: section
// titles as heading marks, markup out, labelled-list descriptions as prose and
// listing blocks as code. A `.txt` file is read so only when it clearly is AsciiDoc.

import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { passageUnits } from '../src/chat/passage.js';
import { asciidocToPlain, looksLikeAsciidoc } from '../src/ingest/asciidoc.js';
import { chunkDocument } from '../src/ingest/chunk.js';
import { describeKinds, kindOf, READ_KINDS } from '../src/ingest/kinds.js';
import { loadDocument } from '../src/ingest/load.js';
import { isolatedEnv, ragline, tempDir } from './helpers/cli.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const titles = (headings: { line: number; level: number; text: string }[]) => headings.map((h) => `${h.line} ${h.level} ${h.text}`);

/** A manual page as git writes one (contrib/subtree/git-subtree.txt, shortened). */
const gitPage = [
  'git-subtree(1)', // 1
  '==============',
  '',
  'NAME',
  '----', // 5
  'git-subtree - Merge subtrees together and split repository into subtrees',
  '',
  'SYNOPSIS',
  '--------',
  '[verse]', // 10
  "'git subtree' [<options>] -P <prefix> add <local-commit>",
  "'git subtree' [<options>] -P <prefix> split [<local-commit>]",
  '',
  'DESCRIPTION',
  '-----------', // 15
  'Subtrees allow subprojects to be included within a subdirectory',
  'of the main project, optionally including the subproject\'s',
  'entire history.',
  '',
  'OPTIONS', // 20
  '-------',
  '--squash::',
  '\tInstead of merging the entire history from the subtree project, produce',
  '\tonly a single commit that contains all the differences you want to',
  '\tmerge, and then merge that new commit into your project.', // 25
  '+',
  "Using '--squash' also helps avoid problems when the same subproject is",
  'included multiple times in the same project.',
  '',
  'EXAMPLES', // 30
  '--------',
  'Add a library as a subdirectory:',
  '',
  '\t$ git subtree add --prefix=lib --squash \\',
  '\t\thttps://example.org/lib.git main', // 35
  '',
  'AUTHOR',
  '------',
  'Written by Avery Pennarun <apenwarr@example.org>', // 39
  '',
  '',
  'GIT',
  '---',
  'Part of the linkgit:git[1] suite',
].join('\n');

describe('AsciiDoc, line for line', () => {
  test('reads each construct as the page shows it', () => {
    const cases: Array<[string[], string[]]> = [
      // Section titles: one line as Markdown writes it, underlined ones as written.
      [['= Orbit guide', '== Install ==', '=== Linux'], ['# Orbit guide', '## Install', '### Linux']],
      [['NAME', '----', 'text'], ['NAME', '----', 'text']],
      // Attribute entries, comments, block attribute lines and preprocessor lines show nothing.
      [[':toc: left', ':product: Orbit', '', 'Install {product} and {unknown}.'], ['', '', '', 'Install Orbit and {unknown}.']],
      [['// a comment', 'text', '////', 'a comment block', '////'], ['', 'text', '', '', '']],
      [['[[install]]', '[#setup.role]', 'text', '', 'ifdef::env-github[]', 'include::other.adoc[]', 'endif::[]'], ['', '', 'text', '', '', '', '']],
      // Delimited blocks: listing and literal ones are code fences, others show only their content.
      [['[source,sh]', '----', "echo '*x*'", '----'], ['', '```sh', "echo '*x*'", '```']],
      [['....', 'literal *text*', '....'], ['```', 'literal *text*', '```']],
      [['____', 'A quote.', '____', '====', 'An example.', '====', '****', 'A sidebar.', '****', '--', 'Open.', '--'], ['', 'A quote.', '', '', 'An example.', '', '', 'A sidebar.', '', '', 'Open.', '']],
      [['|===', '| Name | Value', '|==='], ['', '| Name | Value', '']],
      // A paragraph styled as code (git's synopses are verses) is fenced: its style line and the blank line after it.
      [['[verse]', "'git subtree' add", "'git subtree' split", '', 'After.'], ['```', 'git subtree add', 'git subtree split', '```', 'After.']],
      // Admonitions read as their word.
      [['[TIP]', 'Commit in two pieces.', '', 'NOTE: Mind the gap.'], ['Tip:', 'Commit in two pieces.', '', 'Note: Mind the gap.']],
      // Labelled lists: "term:", the description without its indent, a lone + gone.
      [['-q::', '--quiet::', '\tSuppress output.', '+', 'More about it.'], ['-q:', '--quiet:', 'Suppress output.', '', 'More about it.']],
      [['verbose;; Say more.', 'CPU::: Processors.'], ['verbose: Say more.', 'CPU: Processors.']],
      [['--rejoin::', '', '\tAfter splitting, merge back.'], ['--rejoin:', '', 'After splitting, merge back.']],
      // An indented paragraph elsewhere is a literal one: code, kept as written, fenced by the lines around it that show nothing.
      [['Run:', '', "\t$ git log --format='%h *x*'", '\t\t--all', '', 'After.'], ['Run:', '```', "\t$ git log --format='%h *x*'", '\t\t--all', '```', 'After.']],
      [['--foo::', '\tText.', '+', '\t$ make', '', '\t$ make install', '', '[verse]', 'a', '', '\tb'], ['--foo:', 'Text.', '```', '\t$ make', '', '\t$ make install', '```', '```', 'a', '', '\tb']],
      [['EXAMPLES', '--------', '\t$ make'], ['EXAMPLES', '--------', '\t$ make']],
      // Macros and cross references read as their text.
      [['See linkgit:git-merge[1] and link:guide.html[the guide].'], ['See git-merge(1) and the guide.']],
      [['Read https://example.org[the site], <<setup,Setting up>> or <<setup>>.'], ['Read the site, Setting up or setup.']],
      [['Press kbd:[Ctrl+C] or https://example.org[].'], ['Press Ctrl+C or https://example.org.']],
      // Inline formatting reads as its text; backquoted code stays Markdown code, its text as written.
      [["It's not *necessary*; 'git subtree' and _this_ and +mono+ and `a *b* c` and `+{x}+`."], ["It's not necessary; git subtree and this and mono and `a *b* c` and `{x}`."]],
      [['**strong**ly and __em__phasis and ``mono``.'], ['strongly and emphasis and `mono`.']],
      [["Printed as ``Name $$<user@host>$$''."], ['Printed as "Name <user@host>".']],
      // A span may go on to the next line of its paragraph; the lines stay where they are.
      [["Run 'git", "subtree merge' now."], ['Run git', 'subtree merge now.']],
      // A hard line break, a block title, a block image.
      [['first line +', 'second line', '', '.Installing', 'image::diagram.png[The flow]'], ['first line', 'second line', '', 'Installing', 'The flow']],
      // Lists keep their markers; an item's text is written without its indent.
      [['* one', '  goes on', '* two'], ['* one', 'goes on', '* two']],
      // Apostrophes, snake_case, C++ and arithmetic are no markup.
      [["users' files and don't and snake_case_name and C++ and 2 * 3 * 4"], ["users' files and don't and snake_case_name and C++ and 2 * 3 * 4"]],
    ];
    for (const [source, shown] of cases) {
      const page = asciidocToPlain(source.join('\n'));
      expect([source, page.text.split('\n')]).toEqual([source, shown]);
    }
  });

  test('git\'s manual page: titles with their levels, and exactly the source\'s lines', () => {
    const page = asciidocToPlain(gitPage);
    const lines = page.text.split('\n');
    expect(lines).toHaveLength(gitPage.split('\n').length);
    expect(titles(page.headings)).toEqual(['0 1 git-subtree(1)', '3 2 NAME', '7 2 SYNOPSIS', '13 2 DESCRIPTION', '19 2 OPTIONS', '29 2 EXAMPLES', '36 2 AUTHOR']);
    expect(page.headings.map((h) => h.end)).toEqual([1, 4, 8, 14, 20, 30, 37]);
    expect(lines.slice(9, 13)).toEqual(['```', 'git subtree [<options>] -P <prefix> add <local-commit>', 'git subtree [<options>] -P <prefix> split [<local-commit>]', '```']);
    expect(lines[21]).toBe('--squash:');
    expect(lines[22]).toBe('Instead of merging the entire history from the subtree project, produce');
    // A literal paragraph, as written, in a fence.
    expect(lines.slice(32, 36)).toEqual(['```', '\t$ git subtree add --prefix=lib --squash \\', '\t\thttps://example.org/lib.git main', '```']);
    expect(lines[38]).toBe('Written by Avery Pennarun <apenwarr@example.org>');
    // git's footer, the same on every manual page, is left out.
    expect(lines.slice(41)).toEqual(['', '', '']);
    expect(page.text).not.toMatch(/linkgit:|\[verse\]|::$|^\+$|'--squash'|suite/m);
  });

  test('titles are not read inside delimited blocks, and an underline must be about as long as its title', () => {
    const source = ['= Guide', '', '----', '== not a title', '----', '', '====', '=== not either', '====', '', 'Short', '~~~~~~~~~~~', '', '==== Deep', 'text'].join('\n');
    expect(titles(asciidocToPlain(source).headings)).toEqual(['0 1 Guide', '13 4 Deep']);
  });

  test('very long lines are never taken for titles or terms', () => {
    const long = `= ${'a '.repeat(150_000)}`;
    expect(asciidocToPlain(long).headings).toEqual([]);
    const marks = `x ${"'a *b _c +d ".repeat(50_000)}::`;
    expect(asciidocToPlain(`${marks}\n${marks}`).text.split('\n')).toHaveLength(2);
  });

  // How long these take (four times the text, about four times as long; longer lines of
  // the same text, about as long) is measured by bench/ingest/asciidoc-linear.mjs.
  test("a run of a macro's opening, closed or not, is kept as written, and alone does not make a page AsciiDoc", () => {
    for (const opening of ['link:', 'http://', 'image:', 'anchor:', '<<a,', '[[a,', 'link:x[', 'image:x[a,', 'anchor:x[']) {
      const run = opening.repeat(Math.ceil(8_000 / opening.length));
      const page = asciidocToPlain(`= Title\n\n${run}`);
      expect(page.text, opening).toBe(`# Title\n\n${run}`);
      expect(titles(page.headings), opening).toEqual(['0 1 Title']);
      expect(looksLikeAsciidoc(`= Title\n\n${run}`), opening).toBe(false);
    }
  });

  test('a line that may be a title, term, attribute entry or block image reads the same with a run of 120 or 480 spaces in it', () => {
    for (const width of [120, 480]) {
      const spaces = ' '.repeat(width);
      const read = (line: string) => asciidocToPlain(`= Title\n\n${line}\n\n`);
      expect(titles(read(`= a${spaces}b`).headings), 'title').toEqual(['0 1 Title', '2 1 a b']);
      expect(read(`a:: x${spaces}y`).text, 'term').toBe(`# Title\n\na: x${spaces}y\n\n`);
      expect(read(`:a: x${spaces}y`).text, 'attribute').toBe('# Title\n\n\n\n');
      expect(read(`image::x[${'a'.repeat(width)}`).text, 'image').toBe(`# Title\n\nimage::x[${'a'.repeat(width)}\n\n`);
    }
  });

  test('a construct written over two lines shows its text on them, and the lines after it stay where they were', () => {
    const last = 'and this is the last line.';
    const cases: Array<[string[], string[]]> = [
      [['See <<install,', 'the install section>> for more'], ['See', 'the install section for more']],
      [['See xref:install.adoc[the', 'install page] first'], ['See the', 'install page first']],
      [['Read link:https://example.org[the', 'guide,window=_blank] now'], ['Read the', 'guide now']],
      [['Read link:https://example.org[the guide,', 'window=_blank] now'], ['Read the guide', 'now']],
      [['Read link:https://example.org[', 'the guide] now'], ['Read', 'the guide now']],
      [['Read https://example.org[the', 'site] now'], ['Read the', 'site now']],
      [['Read https://example.org[', '] now'], ['Read https://example.org', 'now']],
      // Index terms: a hidden one shows nothing, a shown one its text.
      [['A word(((primary,', 'secondary))) here'], ['A word', 'here']],
      [['A ((shown', 'term)) here'], ['A shown', 'term here']],
      // Anchors show nothing.
      [['A [[id,some', 'ref]] here'], ['A', 'here']],
      [['A anchor:x[a', 'b] here'], ['A', 'here']],
      // An inline image shows its alt text, not its attributes.
      [['An image:x.png[alt,', 'width=1] here'], ['An alt', 'here']],
      [['An image:x.png[the', 'alt] here'], ['An the', 'alt here']],
    ];
    for (const [source, shown] of cases) {
      const page = asciidocToPlain(['= T', '', ...source, last].join('\n'));
      expect([source, page.text.split('\n')]).toEqual([source, ['# T', '', ...shown, last]]);
    }
  });
});

describe('a .txt file is read as AsciiDoc only when it clearly is one', () => {
  test('a document title with an AsciiDoc construct', () => {
    expect(looksLikeAsciidoc(gitPage)).toBe(true);
    expect(looksLikeAsciidoc('= Orbit guide\n\n[source,sh]\n----\norbit start\n----\n')).toBe(true);
    expect(looksLikeAsciidoc('// SPDX-License-Identifier: MIT\n= Orbit\n\nSee <<install,Installing>>.\n')).toBe(true);
    expect(looksLikeAsciidoc('Orbit\n=====\n\nstart::\n\tStarts the daemon.\n')).toBe(true);
  });

  test('not without a title, nor without a construct, nor reStructuredText or plain text with a title', () => {
    // A construct without a title on the first lines.
    expect(looksLikeAsciidoc('Some notes.\n\nSee linkgit:git-log[1].\n')).toBe(false);
    // Git's release notes: a title, sections, lists, and a Perl `<<module>>`; nothing only AsciiDoc has.
    expect(looksLikeAsciidoc('Git v2.17 Release Notes\n=======================\n\nFixes\n-----\n\n * "git send-email" used a conditional "eval { require <<module>> }".\n')).toBe(false);
    // reStructuredText with a title and a literal block after `::`.
    expect(looksLikeAsciidoc('Orbit\n=====\n\nRun it as follows::\n\n    orbit start\n\n.. note:: Mind the gap.\n')).toBe(false);
    expect(looksLikeAsciidoc('Orbit\n=====\n\nSee :ref:`install <x>` and link:guide[here].\n')).toBe(false);
    // Plain text with an underlined title and a ---- rule.
    expect(looksLikeAsciidoc('TRIGGERS\n========\n\nText.\n\n----\n\nMore text.\n')).toBe(false);
    // An underline that is not the title's length.
    expect(looksLikeAsciidoc('Orbit\n==========\n\n[source,sh]\n----\nx\n----\n')).toBe(false);
  });

  test('.adoc and .asciidoc files are read as AsciiDoc; another .txt stays as it is', async () => {
    for (const name of ['guide.adoc', 'guide.asciidoc', 'git-subtree.txt']) {
      const doc = await loadDocument(name, utf8(gitPage));
      expect([name, doc.kind, doc.title, doc.units[0]!.headings?.length]).toEqual([name, 'text', 'git-subtree(1)', 7]);
      expect(doc.units[0]!.text).toContain('--squash:\nInstead of merging');
    }
    const plain = 'Notes\n=====\n\nIt\'s *fine* -- see \'git log\'.\n';
    const doc = await loadDocument('notes.txt', utf8(plain));
    expect(doc.units[0]!.text).toBe(plain);
    expect(doc.units[0]!.headings).toBeUndefined();
  });

  test('an .adoc page is titled by the section title it opens with, as shown', async () => {
    expect((await loadDocument('a.adoc', utf8('// comment\n:toc:\n\n= The *Big* Book\n\ntext'))).title).toBe('The Big Book');
    expect((await loadDocument('a.adoc', utf8('=== ECLIPSE JETTY\n\ntext'))).title).toBe('ECLIPSE JETTY');
  });
});

describe('the kinds of file read', () => {
  test('a person is told every extension read, .adoc and .asciidoc among them, by kind', () => {
    expect(READ_KINDS).toBe('Markdown (.md, .mdx), text (.txt, .rst, .adoc, .asciidoc, .info; README, NEWS, ChangeLog and the like), HTML (.html, .htm) or PDF (.pdf)');
    for (const extension of READ_KINDS.match(/\.\w+/g)!) expect([extension, kindOf(`guide${extension}`)]).not.toEqual([extension, undefined]);
    // Told from the extensions themselves: one added to the map is named with its kind.
    expect(describeKinds(new Map([['adoc', 'text'], ['pdf', 'pdf'], ['asc', 'text']]))).toBe('text (.adoc, .asc) or PDF (.pdf)');
    expect(describeKinds(new Map([['md', 'markdown']]))).toBe('Markdown (.md)');
    expect(describeKinds(new Map([['txt', 'text']]), { text: 'README' })).toBe('text (.txt; README)');
  });
});

describe('chunks and answers', () => {
  test('chunks carry heading paths and cite the file\'s own lines', async () => {
    const doc = await loadDocument('contrib/subtree/git-subtree.txt', utf8(gitPage));
    const chunks = chunkDocument(doc, { size: 200, overlap: 0 });
    const description = chunks.find((c) => c.text.includes('Subtrees allow'))!;
    expect([description.headingPath, description.startLine, description.endLine]).toEqual([['git-subtree(1)', 'DESCRIPTION'], 14, 18]);
    const squash = chunks.find((c) => c.text.includes('--squash:'))!;
    expect([squash.headingPath, squash.startLine]).toEqual([['git-subtree(1)', 'OPTIONS'], 20]);
    expect(squash.text.split('\n')[2]).toBe('--squash:');
    const author = chunks.at(-1)!;
    expect(author.text).toMatch(/^EXAMPLES\n[\s\S]*\nWritten by Avery Pennarun <apenwarr@example.org>$/);
    expect([author.headingPath, author.startLine, author.endLine]).toEqual([['git-subtree(1)'], 30, 39]);
  });

  test('an .adoc file is chunked at its one-line titles, with heading paths as deep as they go', async () => {
    const adoc = ['= Orbit guide', '', '== Install ==', '', '----', '== not a title', '----', '', '=== Linux', '', '====', '=== not either', '====', '', '==== Deep', 'text'].join('\n');
    const chunks = chunkDocument(await loadDocument('manual.adoc', utf8(adoc)), { size: 40, overlap: 0 });
    const deep = chunks.find((c) => c.text.startsWith('#### Deep'))!;
    expect([deep.headingPath, deep.startLine, deep.endLine]).toEqual([['Orbit guide', 'Install', 'Linux', 'Deep'], 15, 16]);
  });

  test('a description under a term reads as one sentence of prose, a synopsis as code', async () => {
    const text = asciidocToPlain(gitPage).text;
    const sentences = passageUnits(text).map((unit) => ({ ...unit, text: unit.text.trim() }));
    expect(sentences).toContainEqual(expect.objectContaining({
      text: '--squash: Instead of merging the entire history from the subtree project, produce only a single commit that contains all the differences you want to merge, and then merge that new commit into your project.',
      code: false,
    }));
    const synopsis = sentences.filter((s) => s.text.startsWith('git subtree [<options>]'));
    expect(synopsis.map((s) => s.code)).toEqual([true, true]);
    expect(sentences.some((s) => /^(?:only a single|merge, and then)/.test(s.text))).toBe(false);
    // The example's command is code, whatever introduces it.
    expect(sentences.filter((s) => s.text.includes('--prefix=lib')).map((s) => s.code)).toEqual([true]);
  });
});

describe('ingest of an AsciiDoc file', () => {
  let home: string;
  let docs: string;

  beforeAll(async () => {
    home = tempDir('ragline-asciidoc-');
    docs = path.join(home, 'docs');
    fs.mkdirSync(path.join(docs, 'subtree'), { recursive: true });
    fs.writeFileSync(path.join(docs, 'subtree', 'git-subtree.txt'), gitPage);
    // Chunks of a section or less, so that each cites its own lines.
    const result = await ragline(['ingest', docs, '--chunk-size', '200', '--chunk-overlap', '0'], { env: isolatedEnv(home) });
    expect(result.code, result.stderr).toBe(0);
  });
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  test('search cites the section\'s heading path and the file\'s lines', async () => {
    const result = await ragline(['search', '--json', 'squash a single commit differences'], { env: isolatedEnv(home) });
    expect(result.code, result.stderr).toBe(0);
    const top = JSON.parse(result.stdout).results[0];
    expect([top.documentPath, top.heading, top.startLine, top.endLine]).toEqual(['subtree/git-subtree.txt', 'git-subtree(1) > OPTIONS', 20, 24]);
    expect(gitPage.split('\n').slice(19, 24)).toEqual(['OPTIONS', '-------', '--squash::', expect.stringMatching(/^\tInstead of merging/), expect.stringMatching(/^\tonly a single commit/)]);
    expect(top.text).toMatch(/^OPTIONS\n-------\n--squash:\nInstead of merging/);
  });

  test('what the page is for is answered from its name and description, not its example or footer', async () => {
    const result = await ragline(['ask', 'What is git subtree used for?'], { env: isolatedEnv(home) });
    expect(result.code, result.stderr).toBe(0);
    const answer = result.stdout.slice(result.stdout.indexOf('Extractive answer'));
    expect(answer).toMatch(/git-subtree - Merge subtrees together and split repository into subtrees|Subtrees allow subprojects/);
    expect(answer).toMatch(/subtree\/git-subtree\.txt:(1-6|14-18)/);
    expect(answer).not.toMatch(/--prefix=lib|Avery|suite/);
  });
});
