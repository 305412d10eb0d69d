// MyST, the Markdown Sphinx reads (pip's docs), indexed as the page shows it, line
// for line: directive fences as their words and content, toctrees as page names,
// options and targets gone, roles as their text, unknown directives as plain fences.

import { describe, expect, test } from 'vitest';
import { chunkDocument } from '../src/ingest/chunk.js';
import { loadDocument } from '../src/ingest/load.js';
import { hasMyst, mystToMarkdown } from '../src/ingest/myst.js';

describe('MyST Markdown', () => {
  const page = [
    '(requirements-file-format)=', // 1
    '',
    '# Requirements File Format',
    '',
    'See {ref}`Requirement Specifiers <requirement-specifiers>` and {pypi}`pip-tools`.', // 5
    '',
    '```{toctree}',
    ':caption: Project',
    ':hidden:',
    '',
    'getting-started',
    'topics/index',
    'Code of Conduct <https://example.org/coc>',
    '```',
    '', // 15
    '```{note}',
    'Constraints files only control versions.',
    '```',
    '',
    '```{versionadded} 22.3', // 20
    'The --report option.',
    '```',
    '',
    '````{pip-cli}',
    'in-project $ pip install -r requirements.txt', // 25
    '```',
    'nested',
    '```',
    '````',
    '', // 30
    '```{code-block} python',
    ':linenos:',
    'import pip',
    '```',
    '', // 35
    '```{meta}',
    ':description: not shown',
    '```',
    '',
    '```sh', // 40
    'echo "{ref}`kept in code`"',
    '```',
  ];
  const text = page.join('\n');

  test('reads as the page shows it, line for line', () => {
    expect(hasMyst(text)).toBe(true);
    expect(mystToMarkdown(text).split('\n')).toEqual([
      '',
      '',
      '# Requirements File Format',
      '',
      'See Requirement Specifiers and pip-tools.',
      '',
      '',
      '',
      '',
      '',
      'getting-started',
      'topics',
      'Code of Conduct',
      '',
      '',
      'Note:',
      'Constraints files only control versions.',
      '',
      '',
      'New in version 22.3.',
      'The --report option.',
      '',
      '',
      '````',
      'in-project $ pip install -r requirements.txt',
      '```',
      'nested',
      '```',
      '````',
      '',
      '```python',
      '',
      'import pip',
      '```',
      '',
      '',
      '',
      '',
      '',
      '```sh',
      'echo "{ref}`kept in code`"',
      '```',
    ]);
    expect(hasMyst('# Plain\n\nA `code` span and {braces}.\n')).toBe(false);
    // `only` shows its content in the builds it names; an admonition its title and text.
    expect(mystToMarkdown('```{only} html\nShown in HTML.\n```\n```{admonition} Mind the gap\nTake care.\n```').split('\n')).toEqual(['', 'Shown in HTML.', '', 'Mind the gap', 'Take care.', '']);
    expect(hasMyst('Text\r\n\r\n  ```{note}\r\nx\r\n```\r\n')).toBe(true);
    expect(hasMyst('(a-target)=\r\n# Title\r\n')).toBe(true);
  });

  test('a page is chunked from what it shows, and still cites its own lines', async () => {
    const doc = await loadDocument('reference/requirements-file-format.md', new TextEncoder().encode(text));
    const chunks = chunkDocument(doc);
    const all = chunks.map((c) => c.text).join('\n');
    expect(all.replace('echo "{ref}`kept in code`"', '')).not.toMatch(/\{(ref|pypi|toctree|note|meta)\}|:caption:|:hidden:|\(requirements-file-format\)=/);
    expect(all).toContain('Note:\nConstraints files only control versions.');
    const lines = text.split('\n');
    for (const chunk of chunks) expect(chunk.endLine).toBeLessThanOrEqual(lines.length);
    expect(chunks[0]!.startLine).toBe(3);
  });
});
