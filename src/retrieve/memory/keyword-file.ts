// The keyword copy kept beside its database (`<database>.keyword-copy`), so a process
// reads it back with a few sequential reads instead of building it again from every
// chunk's text (at 100k chunks 7 s of tokenizing, at a million well over a minute).
//
// The file is the packed copy (a KeywordSnapshot: a few flat arrays) behind a small
// header holding the fingerprint the copy was built at (the chunks sequence and FTS5's
// structure record, as KeywordIndex checks before every search). A file whose
// fingerprint is not the database's current one is not used: the copy is built again
// and the file rewritten. It is written to a temporary name and renamed, so a reader
// never sees half a file; any error reading or writing it means "no file".

import fs from 'node:fs';
import type { Counts, KeywordSnapshot } from './keyword-index.js';

/** The first bytes of the file; the last two digits are the layout's version. */
const MAGIC = 'ragline-keyword-copy-02\n';

type ArrayName = 'rowids' | 'lengths' | 'alive' | 'docStart' | 'positionStart' | 'docs' | 'titleHits' | 'bodyHits' | 'positions';
const ARRAYS: ArrayName[] = ['rowids', 'lengths', 'alive', 'docStart', 'positionStart', 'docs', 'titleHits', 'bodyHits', 'positions'];
const TYPES = { Float64Array, Int32Array, Uint32Array, Uint16Array, Uint8Array } as const;
type TypeName = keyof typeof TYPES;

interface Header {
  fingerprint: string;
  /** The version of the keyword text the copy was built from (INDEX_TEXT_VERSION, the tokenizer's rules). */
  textVersion: number;
  rowCount: number;
  tokenTotal: number;
  live: number;
  termBytes: number;
  arrays: { name: ArrayName; type: TypeName; length: number }[];
}

/** Reads and writes of at most 1 GiB (a single read is capped just under 2 GiB). */
const IO_CHUNK = 1 << 30;

/** Where the copy of the database at `databaseFile` is kept. */
export function keywordFileOf(databaseFile: string): string {
  return `${databaseFile}.keyword-copy`;
}

/** Writes `snapshot` to `file` (through a temporary file and a rename). False if it could not. */
export function writeKeywordFile(file: string, snapshot: KeywordSnapshot, textVersion: number): boolean {
  const temporary = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    const terms = Buffer.from(snapshot.terms, 'utf8');
    const header: Header = {
      fingerprint: snapshot.fingerprint,
      textVersion,
      rowCount: snapshot.rowCount,
      tokenTotal: snapshot.tokenTotal,
      live: snapshot.live,
      termBytes: terms.byteLength,
      arrays: ARRAYS.map((name) => ({ name, type: snapshot[name].constructor.name as TypeName, length: snapshot[name].length })),
    };
    const head = Buffer.from(MAGIC + JSON.stringify(header) + '\n', 'utf8');
    fd = fs.openSync(temporary, 'w', 0o600);
    let at = 0;
    const write = (bytes: Uint8Array) => {
      for (let done = 0; done < bytes.byteLength; ) done += fs.writeSync(fd!, bytes, done, Math.min(IO_CHUNK, bytes.byteLength - done), at + done);
      at += bytes.byteLength;
    };
    write(head);
    write(terms);
    for (const name of ARRAYS) {
      write(new Uint8Array(8 - (at % 8 || 8))); // each array starts 8-byte aligned
      const array = snapshot[name];
      write(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    }
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temporary, file);
    return true;
  } catch {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(temporary, { force: true });
    return false;
  }
}

/**
 * The copy kept in `file` if it was built at `fingerprint` from keyword text of
 * `textVersion` and fits `budgetBytes`; undefined otherwise (no file, another
 * fingerprint, a damaged or truncated file).
 */
export function readKeywordFile(file: string, fingerprint: string, textVersion: number, budgetBytes = Infinity): KeywordSnapshot | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const size = fs.fstatSync(fd).size;
    const start = Buffer.alloc(Math.min(size, 64 * 1024));
    fs.readSync(fd, start, 0, start.byteLength, 0);
    if (start.toString('latin1', 0, MAGIC.length) !== MAGIC) return undefined;
    const newline = start.indexOf(10, MAGIC.length);
    if (newline < 0) return undefined;
    const header = JSON.parse(start.toString('utf8', MAGIC.length, newline)) as Header;
    if (header.fingerprint !== fingerprint || header.textVersion !== textVersion) return undefined;
    let at = newline + 1;
    const sections: { name: ArrayName; type: TypeName; length: number; offset: number }[] = [];
    let end = at + header.termBytes;
    for (const array of header.arrays) {
      if (!(array.type in TYPES) || !ARRAYS.includes(array.name)) return undefined;
      end += 8 - (end % 8 || 8);
      sections.push({ ...array, offset: end });
      end += array.length * TYPES[array.type].BYTES_PER_ELEMENT;
    }
    if (end !== size || sections.length !== ARRAYS.length || size > budgetBytes) return undefined;
    const read = (bytes: Uint8Array, position: number) => {
      for (let done = 0; done < bytes.byteLength; ) {
        const got = fs.readSync(fd!, bytes, done, Math.min(IO_CHUNK, bytes.byteLength - done), position + done);
        if (got === 0) throw new Error('truncated');
        done += got;
      }
    };
    const terms = Buffer.alloc(header.termBytes);
    read(terms, at);
    at += header.termBytes;
    const arrays = {} as Record<ArrayName, Float64Array | Int32Array | Counts>;
    for (const section of sections) {
      const array = new TYPES[section.type](section.length);
      read(new Uint8Array(array.buffer), section.offset);
      arrays[section.name] = array;
    }
    const snapshot = {
      fingerprint: header.fingerprint,
      rowCount: header.rowCount,
      tokenTotal: header.tokenTotal,
      live: header.live,
      terms: terms.toString('utf8'),
      ...arrays,
    } as KeywordSnapshot;
    return consistent(snapshot) ? snapshot : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The arrays' lengths agree with one another (a file from a damaged write is refused, not searched). */
function consistent(s: KeywordSnapshot): boolean {
  const terms = s.terms === '' ? 0 : s.terms.split('\0').length;
  return (
    s.rowids instanceof Float64Array &&
    s.docStart instanceof Float64Array &&
    s.positionStart instanceof Float64Array &&
    s.docs instanceof Int32Array &&
    s.lengths.length === s.rowids.length &&
    s.alive.length === s.rowids.length &&
    s.docStart.length === terms + 1 &&
    s.positionStart.length === terms + 1 &&
    s.docStart[terms] === s.docs.length &&
    s.titleHits.length === s.docs.length &&
    s.bodyHits.length === s.docs.length &&
    s.positionStart[terms] === s.positions.length
  );
}
