#!/usr/bin/env node
// How much page furniture (navigation sidebars, tables of contents, "copy"
// buttons, "#" permalinks) ends up in the chunks of a real documentation site:
// ingests the Node.js API docs installed on this machine (the HTML pages only)
// into a new database and counts the chunks that hold the sidebar's module list,
// the chunks with the words "Table of contents", and the chunks with a
// "copy" button's word or a "#" permalink left in them. Skips when the docs are
// absent. `--bin` runs another build (e.g. a copy of an older dist/).
//
//   node bench/ingest/html-boilerplate.mjs [--docs /usr/share/doc/nodejs/api] [--bin bin/ragline.js]

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { option, root } from '../turn/common.mjs';
const docs = option('docs', '/usr/share/doc/nodejs/api');
const bin = path.resolve(option('bin', path.join(root, 'bin/ragline.js')));
if (!fs.existsSync(path.join(docs, 'synopsis.html'))) {
  console.log(`skipped: no Node.js API docs at ${docs}`);
  process.exit(0);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ragline-html-bench-'));
const db = path.join(work, 'node-api.db');
try {
  const started = performance.now();
  const ingest = spawnSync(process.execPath, [bin, '--db', db, 'ingest', docs, '--include', '*.html', '--json'], { encoding: 'utf8' });
  if (ingest.status !== 0) throw new Error(`ingest failed: ${ingest.stderr}`);
  const seconds = (performance.now() - started) / 1000;
  const summary = JSON.parse(ingest.stdout);

  // Entries of the sidebar's module list, spread over the alphabet.
  const modules = ['Assertion testing', 'Async hooks', 'Child processes', 'Command-line options', 'Diagnostics Channel', 'File system', 'Readline', 'Worker threads', 'Zlib'];
  const conn = new Database(db, { readonly: true });
  const chunks = conn.prepare('SELECT text FROM chunks').pluck().all();
  conn.close();
  const count = (test) => chunks.filter(test).length;
  const result = {
    docs,
    files: summary.files.added,
    chunks: chunks.length,
    chunksWithModuleList: count((text) => modules.every((m) => text.includes(m))),
    chunksWithTableOfContents: count((text) => text.includes('Table of contents')),
    chunksWithCopyButtonWord: count((text) => /(^|\s)copy$/m.test(text)),
    chunksWithHashPermalink: count((text) => /\S ?#$/m.test(text)),
    ingestSeconds: Number(seconds.toFixed(1)),
  };
  console.log(JSON.stringify(result, null, 2));
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
