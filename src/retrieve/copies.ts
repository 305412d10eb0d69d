// One result slot per document, whatever the formats it is in. Folders of real
// documentation hold the same text several times: a manual as `manual.html`,
// `manual.txt.gz` and `manual.pdf.gz`, a Node.js page as `fs.md` and `fs.html` with
// `all.html` holding every page again. Without this, the copies of one passage fill
// the top of the results and push out everything else. Three tests tell a copy, each
// cheap enough to run on every chunk a search returns:
//   - the same document: the same name in the same folder, the format extensions left
//     out (`manual.html`, `manual.pdf.gz`): the format that ranks first stands for it;
//   - the same section: the same section title and mostly the same words (`all.html`);
//   - the same text in another format: most runs of eight words of one chunk are in a
//     chunk of a document in another format kept before (`all.html` beside `fs.md`: a copy
//     under another name, cut in other places, its headings read otherwise). Documents of
//     one format that say nearly the same thing are kept apart: they are the folder's own
//     pages (on MTRAG's Cloud passages, collapsing them lost R@5 0.327 -> 0.310).

import type { ChunkSource } from './search.js';
import { indexedTokens } from '../text/symbols.js';

/** Share of the same words (Jaccard of the tokens) above which two chunks of a section with the same title are one. */
const SAME_SECTION = 0.6;
/** Share of the smaller chunk's words found in the other above which it is a piece of the same section. */
const PIECE_OF_SECTION = 0.8;
/** Words in a run compared (a shingle): long enough that pages written from one template differ in most runs. */
const RUN = 8;
/**
 * Share of a chunk's runs of RUN words found in one kept chunk of another format above
 * which it is a copy of it. Measured on Node's docs: the chunks of `dns.md` in `all.html`,
 * cut in other places and read from other markup, 0.78-1.0 for most; CMake's pages written
 * from one template, for scale, share 0.54-0.68 (`CXX_STANDARD` and `OBJCXX_STANDARD`,
 * `CXX_EXTENSIONS` and `HIP_EXTENSIONS`).
 */
const SAME_TEXT = 0.75;
/** Fewer runs than this say too little to call a chunk a copy by its text alone. */
const MIN_RUNS = 8;

/** The extensions that say which format a document is read as (ingest/kinds.ts), and the compression around them. */
const FORMAT = /\.(?:md|mdx|txt|rst|adoc|asciidoc|html?|pdf)$/i;
const COMPRESSION = /\.gz$/i;

/**
 * The document a path holds, whatever its format: the path less its compression and
 * format extensions (`docs/manual.pdf.gz` -> `docs/manual`), or undefined when the name has no
 * format extension (a `README` is its own document).
 */
export function documentIdentity(documentPath: string): string | undefined {
  const plain = documentPath.replace(COMPRESSION, '');
  return FORMAT.test(plain) ? plain.replace(FORMAT, '') : undefined;
}

/** The format a path is in, by its extension (`html` for `manual.html.gz`); '' for none. */
function formatOf(documentPath: string): string {
  return FORMAT.exec(documentPath.replace(COMPRESSION, ''))?.[0].toLowerCase() ?? '';
}

/** The runs of RUN words of `text`, hashed: a fingerprint that does not care where the text was cut or how it was marked up. */
function shingles(text: string): Set<number> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const out = new Set<number>();
  for (let i = RUN; i <= words.length; i++) out.add(hash(words.slice(i - RUN, i).join(' ')));
  return out;
}

/** FNV-1a, 32 bits. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

interface Kept {
  path: string;
  text: string;
  words?: Set<string>;
}

/**
 * The chunks kept so far, to tell a copy of one of them (see the module header). Only
 * the better-ranked copy is returned. Section words are read only once a second chunk
 * with a title comes (in a turn's few results, seldom), and shared words and
 * runs are counted through indexes of the kept chunks, so k = 1000 stays cheap.
 */
export class Copies {
  /** Each document identity's path that was kept first. */
  readonly #documents = new Map<string, string>();
  readonly #byTitle = new Map<string, { kept: Kept[]; sizes: number[]; postings: Map<string, number[]> }>();
  readonly #texts: { path: string; format: string }[] = [];
  readonly #runPostings = new Map<number, number[]>();

  /** True when `chunk` is a copy of a kept chunk; else keeps it. */
  copyOrKeep(chunk: ChunkSource): boolean {
    const identity = documentIdentity(chunk.documentPath);
    const first = identity === undefined ? undefined : this.#documents.get(identity);
    if (first !== undefined && first !== chunk.documentPath) return true;
    const fingerprint = shingles(chunk.text);
    if (this.#sameText(chunk.documentPath, fingerprint) || this.#sameSection(chunk)) return true;
    if (identity !== undefined && first === undefined) this.#documents.set(identity, chunk.documentPath);
    const index = this.#texts.push({ path: chunk.documentPath, format: formatOf(chunk.documentPath) }) - 1;
    for (const run of fingerprint) {
      const list = this.#runPostings.get(run);
      if (list) list.push(index);
      else this.#runPostings.set(run, [index]);
    }
    return false;
  }

  /** Most of the chunk's runs of words are in one kept chunk of a document in another format (a longer chunk that holds a kept one is no copy of it). */
  #sameText(path: string, fingerprint: Set<number>): boolean {
    if (fingerprint.size < MIN_RUNS) return false;
    const format = formatOf(path);
    const shared = new Map<number, number>();
    for (const run of fingerprint) for (const kept of this.#runPostings.get(run) ?? []) shared.set(kept, (shared.get(kept) ?? 0) + 1);
    for (const [kept, n] of shared) {
      if (this.#texts[kept]!.format !== format && n / fingerprint.size >= SAME_TEXT) return true;
    }
    return false;
  }

  /** A kept chunk of another document has the same section title and mostly the same words. */
  #sameSection(chunk: ChunkSource): boolean {
    if (!chunk.heading) return false;
    const title = (chunk.heading.split(' > ').pop() ?? '').trim().toLowerCase();
    const group = this.#byTitle.get(title);
    if (group === undefined) {
      this.#byTitle.set(title, { kept: [{ path: chunk.documentPath, text: chunk.text }], sizes: [], postings: new Map() });
      return false;
    }
    // Index the kept chunks not indexed yet (the first of a title waits for a second).
    for (let index = group.sizes.length; index < group.kept.length; index++) {
      const words = group.kept[index]!.words ?? new Set(indexedTokens(group.kept[index]!.text));
      group.sizes.push(words.size);
      for (const word of words) {
        const list = group.postings.get(word);
        if (list) list.push(index);
        else group.postings.set(word, [index]);
      }
    }
    const words = new Set(indexedTokens(chunk.text));
    const shared = new Map<number, number>();
    for (const word of words) for (const kept of group.postings.get(word) ?? []) shared.set(kept, (shared.get(kept) ?? 0) + 1);
    for (const [kept, n] of shared) {
      if (group.kept[kept]!.path === chunk.documentPath) continue;
      // Mostly the same words, or a piece whose words nearly all are in the other (a section cut at other places).
      if (n / (group.sizes[kept]! + words.size - n) >= SAME_SECTION || n / Math.min(group.sizes[kept]!, words.size) >= PIECE_OF_SECTION) return true;
    }
    group.kept.push({ path: chunk.documentPath, text: chunk.text, words });
    return false;
  }
}
