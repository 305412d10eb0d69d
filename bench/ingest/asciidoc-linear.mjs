#!/usr/bin/env node
// Time to read AsciiDoc that once took time out of proportion to its length, on the
// built dist/: (1) a page that is one long run of a macro's opening (`link:`,
// `<<a,`, ...), closed or not, at 40 KB and at four times that, read by
// asciidocToPlain and by looksLikeAsciidoc: four times the text should take about
// four times as long, not sixteen (as when each opening scans on to the line's end);
// (2) the same amount of text in lines that may be a title, a labelled-list term,
// an attribute entry or a block image, 120 and 480 characters wide: about as long,
// not four times (as when each space of a run is tried as the end of the line).
// Each time is the best of R runs. Exits 1 when a ratio passes its bound (8 and 1.5).
//
//   npx tsc -p . && node bench/ingest/asciidoc-linear.mjs [--runs 3] [--size 40000]

import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const runs = Number(arg('runs', 3));
const size = Number(arg('size', 40_000));
const { asciidocToPlain, looksLikeAsciidoc } = await import(pathToFileURL(path.join(root, 'dist/ingest/asciidoc.js')).href);

/** The shortest of `runs` runs of `read`, in milliseconds. */
const fastest = (read) => {
  let best = Infinity;
  for (let run = 0; run < runs; run++) {
    const start = performance.now();
    read();
    best = Math.min(best, performance.now() - start);
  }
  return best;
};

let failed = 0;
console.log(`| reader | input | ms, first | ms, second | ratio | bound |`);
console.log('|---|---|---|---|---|---|');
const row = (reader, input, small, large, ratio, bound) => {
  if (ratio >= bound) failed++;
  console.log(`| ${reader} | ${input} | ${small.toFixed(1)} | ${large.toFixed(1)} | ${ratio.toFixed(2)}${ratio >= bound ? ' (over)' : ''} | ${bound} |`);
};

for (const opening of ['link:', 'http://', 'image:', 'anchor:', '<<a,', '[[a,', 'link:x[', 'image:x[a,', 'anchor:x[']) {
  const page = (chars) => `= Title\n\n${opening.repeat(Math.ceil(chars / opening.length))}`;
  for (const read of [asciidocToPlain, looksLikeAsciidoc]) {
    const small = fastest(() => read(page(size)));
    const large = fastest(() => read(page(4 * size)));
    row(read.name, `\`${opening}\` repeated, ${size / 1000} KB`, small, large, large / Math.max(small, 1), 8);
  }
}

const lines = {
  title: (width) => `= a${' '.repeat(width)}b`,
  term: (width) => `a:: x${' '.repeat(width)}y`,
  attribute: (width) => `:a: x${' '.repeat(width)}y`,
  image: (width) => `image::x[${'a'.repeat(width)}`,
};
for (const [name, line] of Object.entries(lines)) {
  const page = (width) => `= Title\n\n${`${line(width)}\n\n`.repeat(Math.ceil((10 * size) / width))}`;
  const short = fastest(() => asciidocToPlain(page(120)));
  const long = fastest(() => asciidocToPlain(page(480)));
  row('asciidocToPlain', `${name} lines 120 vs 480 wide, ${(10 * size) / 1000} KB`, short, long, long / Math.max(short, 1), 1.5);
}

if (failed > 0) {
  console.error(`${failed} reading(s) took time out of proportion to the text`);
  process.exitCode = 1;
}
