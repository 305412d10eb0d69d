// How a retrieved chunk is shown on one line: its snippet starts at the text, not at
// the heading the heading column already shows or at lines that only mark up structure.

import { describe, expect, test } from 'vitest';
import { chunkLine, describePrune, fitHeading, shownHeading, snippetSource } from '../src/cli/render.js';

const plain = (text: string) => text;
const colors = { bold: plain, dim: plain, red: plain, green: plain, yellow: plain, cyan: plain, magenta: plain };

describe('a snippet for the query it was found for', () => {
  const text = 'Merging joins two histories.\nIt records a merge commit.\n\n--abort\nAbort the merge: the conflict resolution stops.';
  test('starts at the line holding most of the query\'s words, marked as cut', () => {
    expect(snippetSource(text, undefined, 'how do I abort a merge?')).toBe('…Abort the merge: the conflict resolution stops.');
  });
  test('starts at the beginning when no later line holds more of them, or without a query', () => {
    expect(snippetSource(text, undefined, 'two histories merging')).toBe('Merging joins two histories. It records a merge commit. --abort Abort the merge: the conflict resolution stops.');
    expect(snippetSource(text, undefined, 'nothing alike')).toBe(snippetSource(text));
    expect(snippetSource(text)).toMatch(/^Merging joins/);
  });
});

describe('snippets', () => {
  test('heading lines, underlines, rules and code fences are left out', () => {
    expect(snippetSource('## Usage\n\n```sh\nnpm install orbit\n```\nThen run it.')).toBe('npm install orbit Then run it.');
    expect(snippetSource('Exit codes\n==========\n\nScripts can rely on these exit codes.')).toBe('Scripts can rely on these exit codes.');
    expect(snippetSource('=====\nTitle\n=====\n\n---\n\nBody text.')).toBe('Body text.');
    expect(snippetSource('~~~python\nprint(1)\n~~~')).toBe('print(1)');
  });

  test('text that only looks like markup is kept', () => {
    // a list item, a line longer than the rule under it, an arrow, a short ASCII row
    expect(snippetSource('- first item\n- second')).toBe('- first item - second');
    expect(snippetSource('A long line of prose before a rule\n---\nmore')).toBe('A long line of prose before a rule more');
    expect(snippetSource('a -> b\n<= c')).toBe('a -> b <= c');
  });

  test('the titles of small sections a chunk holds under their parent stay in its snippet; the heading column\'s own do not', () => {
    const text = '## Process\n\n### `process.cpuUsage([previousValue])`\n\nReturns the user and system CPU time.\n\n### `process.cwd()`\n\nReturns the current working directory.';
    expect(snippetSource(text, 'Process')).toBe('process.cpuUsage([previousValue]) Returns the user and system CPU time. process.cwd() Returns the current working directory.');
    expect(snippetSource('Exit codes\n==========\n\nScripts rely on them.\n\nSignals\n-------\n\nSIGTERM stops it.', 'CLI > Exit codes')).toBe('Scripts rely on them. Signals SIGTERM stops it.');
  });

  test('the one-line view shows the snippet after the heading path', () => {
    const line = chunkLine(
      { rank: 1, score: 1.9, documentPath: 'reference/cli.rst', startLine: 228, endLine: 259, locator: 'line', heading: 'orbit CLI reference > Exit codes', text: 'Exit codes\n==========\n\nScripts can rely on these exit codes.', vectorRank: 1, keywordRank: 1 },
      colors,
      160,
    );
    expect(line).toBe('  1  1.9000  reference/cli.rst:228-259  orbit CLI reference > Exit codes  v1 k1  “Scripts can rely on these exit codes.”');
  });
});

describe('a narrow terminal', () => {
  test('puts the snippet on a line of its own under the chunk when the heading leaves it too little room', () => {
    const chunk = { rank: 3, score: 1.3025, documentPath: 'prop_tgt/CXX_STANDARD.rst', startLine: 1, endLine: 66, locator: 'line' as const, heading: 'CXX_STANDARD', text: 'CXX_STANDARD\n------------\n\nThe C++ standard whose features are requested to build this target.', vectorRank: 60, keywordRank: 1 };
    const lines = chunkLine(chunk, colors, 80, 'C++ standard for a target').split('\n');
    expect(lines).toEqual(['  3  1.3025  prop_tgt/CXX_STANDARD.rst:1-66  CXX_STANDARD  v60 k1', expect.stringMatching(/^ {5}“The C\+\+ standard whose features are requested to build/)]);
    for (const line of lines) expect(line.length).toBeLessThan(80);
    // Wide enough, one line as before.
    expect(chunkLine(chunk, colors, 140, 'C++ standard for a target')).not.toContain('\n');
  });
});

describe('heading paths that do not fit', () => {
  const path = 'Child process > Asynchronous process creation > child_process.spawn(command[, args][, options])';

  test('give way from the front, so the section\'s own name stays', () => {
    expect(fitHeading(path, 200)).toBe(path);
    expect(fitHeading(path, 70)).toBe('Child process > … > child_process.spawn(command[, args][, options])');
    expect(fitHeading(path, 55)).toBe('… > child_process.spawn(command[, args][, options])');
    expect(fitHeading(path, 30)).toBe('child_process.spawn(command[,…');
    expect(fitHeading('Short > Path', 40)).toBe('Short > Path');
  });

  test('in the one-line view at 120 columns the function name is shown', () => {
    const line = chunkLine({ rank: 1, score: 1, documentPath: 'node/child_process.md', startLine: 1, endLine: 9, locator: 'line', heading: path, text: 'Spawns a process.' }, colors, 120);
    expect(line).toContain('  child_process.spawn(command[, args][, options])  ');
  });
});

describe('the heading shown for a chunk of small sections merged under their parent', () => {
  const merged = '## `path.join([...paths])`\n\nJoins the segments.\n\n## `path.normalize(path)`\n\nNormalizes a path.\n\n## `path.parse(path)`\n\nParses a path.';

  test('names the first section it holds and how many more; a chunk that opens with its own section\'s text keeps its path', () => {
    expect(shownHeading('Path', merged)).toBe('Path > path.join([...paths]) (+2)');
    expect(shownHeading('Path', '## `path.join([...paths])`\n\nJoins the segments.')).toBe('Path > path.join([...paths])');
    expect(shownHeading('LINK_INTERFACE_LIBRARIES', 'List public interface libraries.\n\nCreating Relocatable Packages\n^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n\nText.')).toBe('LINK_INTERFACE_LIBRARIES');
    expect(shownHeading('CLI > Exit codes', 'Exit codes\n==========\n\nScripts rely on them.')).toBe('CLI > Exit codes');
    expect(shownHeading('Shell', '```sh\n# comment in a fence\n## build it\nls -la\n```')).toBe('Shell');
    expect(shownHeading('Path', '## `a()`\n\nText.\n\n```sh\n## build it\n```')).toBe('Path > a()');
    expect(shownHeading('Lang', '## C#  ##\n\nText.')).toBe('Lang > C#');
    // A title read as its path holds it: a README's badge is no other section.
    expect(shownHeading('Frobnicator', '# Frobnicator [![Build Status](https://ci.example.com/b.svg)](https://ci.example.com)\n\nText.')).toBe('Frobnicator');
  });

  test('in the one-line view: the first section\'s name in the heading column, the next ones in the snippet', () => {
    const line = chunkLine({ rank: 1, score: 1, documentPath: 'node/path.md', startLine: 347, endLine: 423, locator: 'line', heading: 'Path', text: merged }, colors, 160);
    expect(line).toContain('  Path > path.join([...paths]) (+2)  ');
    expect(line).toContain('“Joins the segments. path.normalize(path) Normalizes a path.');
  });
});

describe('what prune says it removed', () => {
  test('a count of one is singular, others plural', () => {
    const cutoff = '2025-03-01T12:00:00.000Z';
    expect(describePrune({ cutoff, turns: 1, retrievalRows: 1, sessions: 1, dryRun: false })).toBe(`Removed 1 turn (1 retrieval row) and 1 emptied session older than ${cutoff}.`);
    expect(describePrune({ cutoff, turns: 2, retrievalRows: 0, sessions: 0, dryRun: true })).toBe(`Would remove 2 turns (0 retrieval rows) and 0 emptied sessions older than ${cutoff}.`);
  });
});
