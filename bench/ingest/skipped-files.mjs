#!/usr/bin/env node
// A no-change re-ingest of a folder whose PDFs have no text (as scanned ones without
// an OCR layer): every such file is skipped as empty. Writes N PDFs of P pages with
// empty pages, plus M Markdown files, into bench/out/skipped/docs, ingests them once
// into a new database, then times the same ingest again (median of R runs).
//
//   node bench/ingest/skipped-files.mjs [--pdfs 100] [--pages 20] [--markdown 200] [--runs 7] [--bin bin/ragline.js]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const pdfs = Number(arg('pdfs', 100));
const pages = Number(arg('pages', 20));
const markdown = Number(arg('markdown', 200));
const runs = Number(arg('runs', 7));
const bin = path.resolve(arg('bin', path.join(root, 'bin/ragline.js')));
const out = path.join(root, 'bench/out/skipped');
const docs = path.join(out, 'docs');
const db = path.join(out, 'skipped.db');

/** A PDF whose pages draw nothing. */
function textlessPdf(pageCount) {
  const objects = [];
  const pageIds = Array.from({ length: pageCount }, (_, i) => 3 + i);
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageCount} >>`;
  for (const id of pageIds) objects[id] = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>';
  let file = '%PDF-1.4\n';
  const offsets = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = file.length;
    file += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = file.length;
  file += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) file += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  return `${file}trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(docs, { recursive: true });
for (let i = 0; i < pdfs; i++) fs.writeFileSync(path.join(docs, `scan-${i}.pdf`), textlessPdf(pages));
for (let i = 0; i < markdown; i++) fs.writeFileSync(path.join(docs, `note-${i}.md`), `# Note ${i}\n\nSome text about topic ${i} and its settings.\n`);

const ingest = () => {
  const started = performance.now();
  const result = spawnSync(process.execPath, [bin, '--db', db, 'ingest', docs, '--json'], { encoding: 'utf8', env: { ...process.env, RAGLINE_PROVIDER: 'offline' } });
  if (result.status !== 0) throw new Error(result.stderr);
  return { seconds: (performance.now() - started) / 1000, summary: JSON.parse(result.stdout) };
};
const first = ingest();
const again = [];
for (let i = 0; i < runs; i++) again.push(ingest());
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${pdfs} textless PDFs of ${pages} pages and ${markdown} Markdown files (${path.relative(root, bin)})`);
console.log(`first ingest ${first.seconds.toFixed(2)} s, skipped ${JSON.stringify(first.summary.files.skipped)}`);
console.log(`no-change re-ingest: median ${median(again.map((r) => r.seconds)).toFixed(3)} s of ${runs}, skipped ${JSON.stringify(again.at(-1).summary.files.skipped)}`);
