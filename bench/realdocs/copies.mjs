#!/usr/bin/env node
// How many of the top 5 result slots copies of a better-ranked result take, over the
// real-document set's first questions searched in the folder as users have it: Node's
// pages as Markdown and as HTML with `all.html` beside them (the index of
// `run.mjs --with-copies`, which must have run first). A result is a copy when it is
// the same document in another format (the same path less its format extensions) or
// when four fifths of its runs of five words (links and URLs left out) are in one better-ranked
// result: a yardstick kept apart from the retriever's own tests.
//
//   node bench/realdocs/run.mjs --with-copies && node bench/realdocs/copies.mjs [--dist <folder>]
//
// --dist measures another build (a folder holding its dist/), on the same index.

import fs from 'node:fs';
import path from 'node:path';
import { option, root } from '../turn/common.mjs';

const dist = path.resolve(option('dist', root), 'dist');
const dbPath = path.join(root, 'bench/out/realdocs-copies/realdocs.db');
if (!fs.existsSync(dbPath)) {
  console.error(`no index at ${dbPath}: run node bench/realdocs/run.mjs --with-copies first`);
  process.exit(2);
}
const { openDatabase } = await import(path.join(dist, 'store/db.js'));
const { resolveConfig } = await import(path.join(dist, 'config/index.js'));
const { createEmbedder } = await import(path.join(dist, 'providers/index.js'));
const { Retriever } = await import(path.join(dist, 'retrieve/search.js'));

const set = JSON.parse(fs.readFileSync(path.join(root, 'bench/realdocs/conversations.json'), 'utf8'));
const questions = set.conversations.map((conversation) => conversation.turns[0].user);
const { config } = resolveConfig({ env: { HOME: path.dirname(dbPath), RAGLINE_PROVIDER: 'offline' }, flags: { db: dbPath } });
const db = openDatabase(dbPath);
const retriever = new Retriever(db, await createEmbedder(config));

const formatless = (documentPath) => documentPath.replace(/\.gz$/, '').replace(/\.(?:md|html?|txt|rst|pdf)$/, '');
const runs = (text) => {
  const words = text.replace(/\]\([^)]*\)|https?:\/\/\S+/g, ' ').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const out = new Set();
  for (let i = 5; i <= words.length; i++) out.add(words.slice(i - 5, i).join(' '));
  return out;
};
let copies = 0;
let slots = 0;
let withCopy = 0;
let allHtml = 0;
for (const question of questions) {
  const top = (await retriever.search(question, { k: 5 })).slice(0, 5);
  const seen = [];
  let here = 0;
  for (const chunk of top) {
    const own = runs(chunk.text);
    const copy = seen.some((kept) => {
      if (kept.path !== chunk.documentPath && formatless(kept.path) === formatless(chunk.documentPath)) return true;
      let shared = 0;
      for (const run of own) if (kept.runs.has(run)) shared++;
      return own.size > 0 && kept.path !== chunk.documentPath && shared / own.size >= 0.8;
    });
    if (copy) here++;
    if (chunk.documentPath.endsWith('all.html')) allHtml++;
    seen.push({ path: chunk.documentPath, runs: own });
  }
  copies += here;
  slots += top.length;
  if (here > 0) withCopy++;
}
retriever.close?.();
db.close();
console.log(`first questions: ${questions.length}; top-5 slots: ${slots}; taken by a copy of a better-ranked result: ${copies}; questions with a copy in their top 5: ${withCopy}; slots from all.html: ${allHtml}`);
