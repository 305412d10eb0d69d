// What the bench scripts that play chat turns (and a few others) share: the project
// root, --flags, a seeded random generator, the dist/ modules a turn is set up with,
// and the 100k-chunk database that turn-cost.mjs builds.

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const shared = path.resolve(root, '../shared/bench');

/** The number after `--name` on the command line, or `fallback`. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

/** The word after `--name` on the command line, or `fallback`. */
export function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/** A seeded generator of numbers in [0, 1) (mulberry32): the same sequence for the same seed. */
export function seededRandom(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The half of a question set a case belongs to, fixed by its key (a conversation id,
 * a question's text) and nothing else: 'dev' when the first byte of the key's SHA-1 is
 * even, else 'held-out'. Changes are tuned on the dev half and checked on the other.
 */
export function halfOf(key) {
  return createHash('sha1').update(key).digest()[0] % 2 === 0 ? 'dev' : 'held-out';
}

/** The path of the turn database for `chunks`. */
export function turnDbPath(chunks) {
  return path.join(root, `bench/out/turn/turn-${chunks}.db`);
}

/** The turn database for `chunks`; exits with how to build it when it is missing. */
export function existingTurnDb(chunks) {
  const file = turnDbPath(chunks);
  if (!fs.existsSync(file)) {
    console.error(`error: ${file} not found; build it with: node bench/turn/turn-cost.mjs --chunks ${chunks}`);
    process.exit(2);
  }
  return file;
}

/** The MTRAG questions, in the order of ../shared/bench/retrieval_tasks.jsonl. */
export function mtragQuestions() {
  return fs
    .readFileSync(path.join(shared, 'retrieval_tasks.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line).question);
}

/**
 * The search-path settings of this process's environment (RAGLINE_VECTOR_SEARCH,
 * RAGLINE_KEYWORD_SEARCH, RAGLINE_VECTOR_THREADS), to pass to resolveConfig beside a
 * bench's own env so `RAGLINE_KEYWORD_SEARCH=fts5 node bench/...` still chooses the path.
 */
export function searchEnv(env = process.env) {
  const names = ['RAGLINE_VECTOR_SEARCH', 'RAGLINE_KEYWORD_SEARCH', 'RAGLINE_VECTOR_THREADS'];
  return Object.fromEntries(names.filter((name) => env[name] !== undefined).map((name) => [name, env[name]]));
}

/**
 * The dist/ modules the bench scripts set a chat turn up with, from the build at
 * `buildRoot` (this checkout by default; turn-cost-ab.mjs passes each build's).
 */
export async function turnModules(buildRoot = root) {
  const lib = (p) => import(path.join(buildRoot, 'dist', p));
  const { openDatabase } = await lib('store/db.js');
  const { resolveConfig } = await lib('config/index.js');
  const { createEmbedder } = await lib('providers/index.js');
  const { Retriever } = await lib('retrieve/search.js');
  const { createRewriter } = await lib('rewrite/index.js');
  const { runTurn } = await lib('chat/turn.js');
  const { createSession } = await lib('store/sessions.js');
  const { ingest } = await lib('ingest/ingest.js');
  const accelerate = await acceleratorsOf(buildRoot);
  return { openDatabase, resolveConfig, createEmbedder, Retriever, createRewriter, runTurn, createSession, ingest, accelerate };
}

/**
 * `accelerate(db, search)`: the in-memory copies of `db` as the build at `buildRoot`
 * keeps them: `warmVectors()` and `warmKeywords()` load them now, `keywordIndex()` is
 * the keyword copy, and `retrieverOptions` goes to `new Retriever(db, embedder,
 * search, retrieverOptions)`. Builds before the copies moved to dist/retrieve/memory/
 * kept them per database in module state (retrieve/knn.js, retrieve/keyword.js).
 */
async function acceleratorsOf(buildRoot) {
  const lib = (p) => import(path.join(buildRoot, 'dist', p));
  if (fs.existsSync(path.join(buildRoot, 'dist/retrieve/memory/accelerators.js'))) {
    const { SearchAccelerators } = await lib('retrieve/memory/accelerators.js');
    return (db, search) => {
      const accelerators = new SearchAccelerators(db);
      return {
        warmVectors: () => accelerators.vectors.warm(search),
        warmKeywords: () => accelerators.keywords.warm(search.keyword),
        keywordIndex: () => accelerators.keywords.index,
        retrieverOptions: { accelerators },
      };
    };
  }
  const { warmVectorIndex } = await lib('retrieve/knn.js');
  const { loadedKeywordIndex, warmKeywordIndex } = await lib('retrieve/keyword.js');
  return (db, search) => ({
    warmVectors: () => warmVectorIndex(db, search),
    warmKeywords: () => warmKeywordIndex(db, search?.keyword),
    keywordIndex: () => loadedKeywordIndex(db),
    retrieverOptions: undefined,
  });
}
