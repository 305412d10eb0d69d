import { describe, expect, test } from 'vitest';
import { EXTRACTIVE_LABEL, NOT_COVERED } from '../src/chat/extractive.js';
import { MAX_PASSAGE_CHARS, passageAnswer, passageUnits } from '../src/chat/passage.js';
import type { RetrievedChunk } from '../src/retrieve/search.js';

function chunk(id: number, text: string, extra: Partial<RetrievedChunk> = {}): RetrievedChunk {
  return {
    chunkId: id, root: '/docs', documentPath: `docs/${id}.md`, title: null, heading: '', text, startLine: 1, endLine: 9,
    locator: 'line', textHash: `h${id}`, rank: id, score: 1 / id, ...extra,
  };
}

describe('the units of a chunk', () => {
  test('sentences of paragraphs and list items, code lines as written; headings, rules, definitions and directives are none', () => {
    const text = [
      'Title',
      '=====',
      '',
      'First sentence here. Second sentence here.',
      '',
      '* an item with words',
      '',
      '.. code-block:: python',
      '',
      '    >>> from requests.auth import HTTPBasicAuth',
      '    >>> requests.get(url, auth=HTTPBasicAuth("user", "pass"))',
      '',
      '[home]: https://example.com',
      '',
      '## Next section',
      '',
      'Text of the next section.',
    ].join('\n');
    const units = passageUnits(text);
    expect(units.map((unit) => [unit.text, unit.code, unit.heading])).toEqual([
      ['First sentence here.', false, 'Title'],
      ['Second sentence here.', false, 'Title'],
      ['* an item with words', false, 'Title'],
      ['    >>> from requests.auth import HTTPBasicAuth', true, 'Title'],
      ['    >>> requests.get(url, auth=HTTPBasicAuth("user", "pass"))', true, 'Title'],
      ['Text of the next section.', false, 'Next section'],
    ]);
    expect(new Set(units.slice(0, 5).map((unit) => unit.section)).size).toBe(1);
    expect(units[5]!.section).not.toBe(units[0]!.section);
  });

  test('a block indented past the prose before it is code (an HTML page\'s <pre> as read), a directive\'s indented body is prose', () => {
    const html = 'Here is an example:\n\n  int main( void )\n  {\n    exit(0);\n  }\n\nYou get this.';
    expect(passageUnits(html).map((unit) => [unit.text, unit.code])).toEqual([
      ['Here is an example:', false],
      ['  int main( void )', true],
      ['  {', true],
      ['    exit(0);', true],
      ['  }', true],
      ['You get this.', false],
    ]);
    const rst = '.. command:: add_test\n\n  Add a test to the project to be run by ctest.';
    expect(passageUnits(rst).map((unit) => [unit.text, unit.code])).toEqual([['Add a test to the project to be run by ctest.', false]]);
  });

  test('a heading is read without its inline markup', () => {
    const units = passageUnits('## <a name="reserve-memory"></a> Reserve **memory** (--reserve-memory)\n\nThe managers schedule by reservations.');
    expect(units.map((unit) => unit.heading)).toEqual(['Reserve memory (--reserve-memory)']);
  });

  test('a "See also" section and a heading that names a part of a page', () => {
    const units = passageUnits('# npm-ci\n\n## Description\n\nThis command installs a project with a clean slate.\n\n## See also\n\n* npm install\n* npm test');
    expect(units.map((unit) => [unit.text, unit.heading])).toEqual([['This command installs a project with a clean slate.', 'npm-ci']]);
  });
});

describe('passage answers', () => {
  const keys = [
    chunk(1, '# Keys\n\nAPI keys expire after 90 days by default. You can rotate a key at any time.\n\n- Rotated keys keep working for 24 hours.'),
    chunk(2, 'Webhooks are signed with HMAC-SHA256. Deliveries retry for three days.'),
  ];

  test('quote one passage of the best chunk as it stands, under its citation and section title', () => {
    const answer = passageAnswer('When do API keys expire?', keys);
    expect(answer.covered).toBe(true);
    expect(answer.text).toBe(
      `${EXTRACTIVE_LABEL}\n[1] Keys\nAPI keys expire after 90 days by default. You can rotate a key at any time.\n- Rotated keys keep working for 24 hours.`,
    );
  });

  test('quote code verbatim: prompts and indentation kept', () => {
    const auth = chunk(1, 'Authentication\n==============\n\nMany web services require authentication. To use HTTP Basic Auth::\n\n    >>> from requests.auth import HTTPBasicAuth\n    >>> basic = HTTPBasicAuth("user", "pass")\n    >>> requests.get("https://httpbin.org/basic-auth/user/pass", auth=basic)\n    <Response [200]>\n');
    const answer = passageAnswer('How do I use HTTP basic authentication?', [auth]);
    expect(answer.text).toContain('\n    >>> from requests.auth import HTTPBasicAuth\n    >>> basic = HTTPBasicAuth("user", "pass")\n');
  });

  test('a code line opens a passage only for a question that asks how', () => {
    const page = chunk(1, 'Intro words.\n\n```js\nconst timer = setTimeout(stop, 500); // clears the retry timer\n```\n\nThe retry timer is cleared when the request ends.');
    expect(passageAnswer('What clears the retry timer?', [page]).passages[0]!.text).toBe('The retry timer is cleared when the request ends.');
    expect(passageAnswer('How do I clear the retry timer?', [page]).passages[0]!.text).toMatch(/^const timer = setTimeout/);
  });

  test('a passage stays in its section and within its length', () => {
    const long = Array.from({ length: 40 }, (_, i) => `Sentence ${i} says more about the cache.`).join(' ');
    const page = chunk(1, `## Cache\n\nThe cache keeps responses for an hour. ${long}\n\n## Cookies\n\nCookies are kept per session.`);
    const passage = passageAnswer('How long does the cache keep responses?', [page]).passages[0]!.text;
    expect(passage.startsWith('The cache keeps responses for an hour.')).toBe(true);
    expect(passage.length).toBeLessThanOrEqual(MAX_PASSAGE_CHARS);
    expect(passage).not.toContain('Cookies');
  });

  test('of two chunks that hold the same words, the better-ranked one is quoted; words in a section title count', () => {
    const same = 'The timeout option stops the request after the given time.';
    expect(passageAnswer('What does the timeout option do?', [chunk(1, same), chunk(2, same)]).passages.map((p) => p.n)).toEqual([1]);
    const titled = [chunk(1, 'The option stops the request after a while.'), chunk(2, 'The option stops the request after the given time.', { heading: 'Options > timeout' })];
    expect(passageAnswer('What does the timeout option do?', titled).passages[0]!.n).toBe(2);
  });

  test('a second passage, from another chunk, only when it holds a word asked that the first lacks', () => {
    const chunks = [chunk(1, 'Rotate the signing key from the dashboard.'), chunk(2, 'Webhooks are signed with the signing key.'), chunk(3, 'A rotated key also expires webhooks sent before.')];
    const both = passageAnswer('How do I rotate the signing key of webhooks?', chunks, 'How do I rotate the signing key of webhooks?');
    expect(both.passages.map((p) => p.n)).toEqual([1, 2]);
    expect(passageAnswer('How do I rotate the signing key?', chunks, 'How do I rotate the signing key?').passages.map((p) => p.n)).toEqual([1]);
  });

  test('declines when the best chunk holds too few of the words asked, or a name no document mentions', () => {
    const answer = passageAnswer('What is the capital city of France?', keys);
    expect(answer).toMatchObject({ covered: false, passages: [] });
    expect(answer.text).toBe(`${EXTRACTIVE_LABEL} ${NOT_COVERED}`);
    expect(passageAnswer('anything', []).covered).toBe(false);
    expect(passageAnswer('How do I rotate API keys in Kafka?', keys, undefined, ['Kafka']).text).toBe(`${EXTRACTIVE_LABEL} ${NOT_COVERED} No document mentions \u201cKafka\u201d.`);
  });

  test('a question that sets a scene is covered when the part that asks is', () => {
    const decoder = [chunk(1, 'A StringDecoder decodes a Buffer to a string. Multibyte characters split across chunks are decoded safely: the decoder keeps the incomplete bytes until the next chunk.', { heading: 'String decoder' })];
    const scene = "I'm reading UTF-8 text from a socket in chunks and now and then an accented letter or emoji comes out garbled. How do I decode the chunks safely?";
    expect(passageAnswer(scene, decoder, scene).text).toContain('decoded safely');
    const other = 'I read UTF-8 text from a socket in chunks. How do I open a window in the browser?';
    expect(passageAnswer(other, decoder, other).covered).toBe(false);
  });

  test('only chunks that mention a rare name asked are quoted; when none does, the answer says so', () => {
    const decoy = chunk(1, 'Turn on link-time optimization for a target by setting the optimization flags in the target.');
    const right = chunk(2, 'Set INTERPROCEDURAL_OPTIMIZATION to turn on IPO for a target.');
    const question = 'How do I turn on link-time optimization (IPO) for a target?';
    expect(passageAnswer(question, [decoy, right], undefined, [], ['IPO']).passages.map((p) => p.n)).toEqual([2]);
    expect(passageAnswer(question, [decoy], undefined, [], ['IPO']).text).toBe(`${EXTRACTIVE_LABEL} ${NOT_COVERED} None of the passages found mentions \u201cIPO\u201d.`);
  });

  test('words the rewrite added count less than words the user typed', () => {
    const chunks = [chunk(1, 'Helgrind and DRD detect data races in threaded programs.'), chunk(2, 'The second line of a suppression names the tool it is for.')];
    const answer = passageAnswer('tell me more about (Helgrind, DRD)', chunks, 'tell me more about');
    expect(answer.passages[0]!.n).toBe(1);
  });
});
