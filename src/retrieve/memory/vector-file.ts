// The int8 vector copy kept beside its database (`<database>.vector-copy`), so a
// process reads it back with a few sequential reads instead of reading and
// quantizing every float vector of vec0 again (at a million 384-dimension vectors,
// 1.5 GB read and tens of seconds), and scores its candidates again from the float
// vectors the file also holds, with positioned reads, instead of writing a copy of
// them to a file of its own.
//
// The file is the copy's state (vector-index.ts) behind a small header: vec0's chunk
// layout as the copy last saw it (ids, first slots, sizes, validity and rowid blobs),
// per slot the chunk id, the scale factor and the two error-bound factors, the int8
// vectors, and last the float vectors, which are never read whole. The header holds
// the fingerprint the copy was taken at: the chunks' id sequence (a rebuild or an
// ingest that adds chunks moves it) and vec0's declaration. A file at another
// fingerprint is not used: the copy is loaded from vec0 and the file written again.
// A file at the database's fingerprint is brought up to date by the copy's usual
// refresh (deletions show in vec0's validity blobs). It is written to a temporary
// name and renamed, so a reader never sees half a file; any error reading or writing
// it means "no file".

import fs from 'node:fs';

/** The first bytes of the file; the last two digits are the layout's version. */
const MAGIC = 'ragline-vector-copy-01\n';

/** vec0's chunk layout as the copy saw it. */
export interface KeptChunk {
  chunkId: number;
  base: number;
  size: number;
  validity: Buffer;
  rowidBytes: Buffer;
}

/** What the file holds but the float vectors. */
export interface VectorFileState {
  fingerprint: string;
  dimensions: number;
  stride: number;
  slotCount: number;
  maxError: number;
  maxRoundedNorm: number;
  chunks: KeptChunk[];
  ids: Float64Array;
  invNorms: Float32Array;
  errors: Float32Array;
  roundedNorms: Float32Array;
  /** slotCount x stride bytes. */
  vectors: Uint8Array;
}

/** What the header holds: the state's numbers, and the sizes and offsets of what follows. */
interface Header extends Pick<VectorFileState, 'fingerprint' | 'dimensions' | 'stride' | 'slotCount' | 'maxError' | 'maxRoundedNorm'> {
  chunks: number;
  validityBytes: number;
  /** Byte offset of the float vectors (slotCount x dimensions x 4 bytes, to the end of the file). */
  floatsAt: number;
}

/** Reads and writes of at most 1 GiB (a single read is capped just under 2 GiB). */
const IO_CHUNK = 1 << 30;
/** The float vectors are copied in blocks of this size, yielding between them. */
const COPY_BLOCK = 32 << 20;

/** Where the copy of the database at `databaseFile` is kept. */
export function vectorFileOf(databaseFile: string): string {
  return `${databaseFile}.vector-copy`;
}

/** The sections after the header, in file order, 8-byte aligned; the float vectors follow the last. */
function sections(header: Header, start: number): { offsets: number[]; end: number } {
  const n = header.chunks;
  const sizes = [
    n * 8 * 4, // chunk id, base, size, validity length: Float64Array(4n)
    header.validityBytes,
    header.slotCount * 8, // rowids of every chunk's slots (the chunks' sizes add up to slotCount)
    header.slotCount * 8, // ids
    header.slotCount * 4, // invNorms
    header.slotCount * 4, // errors
    header.slotCount * 4, // roundedNorms
    header.slotCount * header.stride, // int8 vectors
  ];
  const offsets: number[] = [];
  let at = start;
  for (const size of sizes) {
    at += 8 - (at % 8 || 8);
    offsets.push(at);
    at += size;
  }
  at += 8 - (at % 8 || 8);
  return { offsets, end: at };
}

function writeAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.byteLength; ) done += fs.writeSync(fd, bytes, done, Math.min(IO_CHUNK, bytes.byteLength - done), position + done);
}

function readAll(fd: number, bytes: Uint8Array, position: number): void {
  for (let done = 0; done < bytes.byteLength; ) {
    const got = fs.readSync(fd, bytes, done, Math.min(IO_CHUNK, bytes.byteLength - done), position + done);
    if (got === 0) throw new Error('truncated');
    done += got;
  }
}

const bytesOf = (array: ArrayBufferView) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/**
 * Writes `state` to `file` (through a temporary file and a rename), the float vectors
 * copied from `floats` (a file holding them by slot from byte 0) in blocks, yielding
 * between blocks; `stillValid` is asked after each and a false answer abandons the
 * write. True when the file was written.
 */
export async function writeVectorFile(file: string, state: VectorFileState, floats: number, stillValid: () => boolean): Promise<boolean> {
  const temporary = `${file}.${process.pid}.tmp`;
  let fd: number | undefined;
  try {
    const validityBytes = state.chunks.reduce((sum, chunk) => sum + chunk.validity.byteLength, 0);
    const { fingerprint, dimensions, stride, slotCount, maxError, maxRoundedNorm } = state;
    const provisional: Header = { fingerprint, dimensions, stride, slotCount, maxError, maxRoundedNorm, chunks: state.chunks.length, validityBytes, floatsAt: 0 };
    // The header's length does not depend on floatsAt's digits once it is padded to 32 of them.
    const head = (header: Header) => Buffer.from(MAGIC + JSON.stringify({ ...header, floatsAt: String(header.floatsAt).padStart(32, '0') }) + '\n', 'utf8');
    const { offsets, end } = sections(provisional, head(provisional).byteLength);
    const header: Header = { ...provisional, floatsAt: end };
    fd = fs.openSync(temporary, 'w', 0o600);
    writeAll(fd, head(header), 0);
    const table = new Float64Array(state.chunks.length * 4);
    state.chunks.forEach((chunk, i) => table.set([chunk.chunkId, chunk.base, chunk.size, chunk.validity.byteLength], i * 4));
    writeAll(fd, bytesOf(table), offsets[0]!);
    let at = offsets[1]!;
    for (const chunk of state.chunks) {
      writeAll(fd, chunk.validity, at);
      at += chunk.validity.byteLength;
    }
    const rowids = new Uint8Array(state.slotCount * 8);
    for (const chunk of state.chunks) rowids.set(chunk.rowidBytes.subarray(0, chunk.size * 8), chunk.base * 8);
    writeAll(fd, rowids, offsets[2]!);
    writeAll(fd, bytesOf(state.ids.subarray(0, state.slotCount)), offsets[3]!);
    writeAll(fd, bytesOf(state.invNorms.subarray(0, state.slotCount)), offsets[4]!);
    writeAll(fd, bytesOf(state.errors.subarray(0, state.slotCount)), offsets[5]!);
    writeAll(fd, bytesOf(state.roundedNorms.subarray(0, state.slotCount)), offsets[6]!);
    writeAll(fd, state.vectors.subarray(0, state.slotCount * state.stride), offsets[7]!);
    const floatBytes = state.slotCount * state.dimensions * 4;
    const block = Buffer.alloc(Math.min(COPY_BLOCK, Math.max(1, floatBytes)));
    for (let done = 0; done < floatBytes; ) {
      await new Promise<void>((resolve) => setTimeout(resolve, 0).unref());
      if (!stillValid()) throw new Error('changed');
      const want = Math.min(block.byteLength, floatBytes - done);
      // Slots never written (vec0's latest chunk is seldom full) read past the spill's end: zeros.
      let got = 0;
      for (let n = -1; got < want && n !== 0; got += n) n = fs.readSync(floats, block, got, want - got, done + got);
      block.fill(0, got, want);
      writeAll(fd, block.subarray(0, want), end + done);
      done += want;
    }
    fs.closeSync(fd);
    fd = undefined;
    if (!stillValid()) throw new Error('changed');
    fs.renameSync(temporary, file);
    return true;
  } catch {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(temporary, { force: true });
    return false;
  }
}


/** The header of the open file `fd` and its sections' offsets; throws unless it is a whole copy taken at `fingerprint`. */
function readHeader(fd: number, fingerprint: string, dimensions: number, stride: number): { header: Header; offsets: number[] } {
  const size = fs.fstatSync(fd).size;
  const start = Buffer.alloc(Math.min(size, 4096));
  fs.readSync(fd, start, 0, start.byteLength, 0);
  if (start.toString('latin1', 0, MAGIC.length) !== MAGIC) throw new Error('not a vector copy');
  const newline = start.indexOf(10, MAGIC.length);
  if (newline < 0) throw new Error('no header');
  const raw = JSON.parse(start.toString('utf8', MAGIC.length, newline)) as Header & { floatsAt: string };
  const header: Header = { ...raw, floatsAt: Number(raw.floatsAt) };
  if (header.fingerprint !== fingerprint || header.dimensions !== dimensions || header.stride !== stride) throw new Error('another copy');
  const { offsets, end } = sections(header, newline + 1);
  if (end !== header.floatsAt || size !== end + header.slotCount * dimensions * 4) throw new Error('truncated');
  return { header, offsets };
}

/** The float vectors of the copy kept in `file`: the open file and where they start; undefined unless it is a whole copy taken at `fingerprint`. */
export function openVectorFloats(file: string, fingerprint: string, dimensions: number, stride: number): { fd: number; floatsAt: number } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const { header } = readHeader(fd, fingerprint, dimensions, stride);
    const opened = fd;
    fd = undefined;
    return { fd: opened, floatsAt: header.floatsAt };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * The copy kept in `file` if it was taken at `fingerprint` with these dimensions and
 * stride; its int8 vectors are read into `vectors(slotCount)`, the memory the caller
 * scans. Also the open file and the offset of its float vectors, which the caller
 * reads candidates from and closes. Undefined otherwise (no file, another
 * fingerprint, a damaged or truncated file).
 */
export function readVectorFile(
  file: string,
  fingerprint: string,
  dimensions: number,
  stride: number,
  vectors: (slotCount: number) => Uint8Array,
): { state: VectorFileState; fd: number; floatsAt: number } | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const { header, offsets } = readHeader(fd, fingerprint, dimensions, stride);
    const n = header.chunks;
    const table = new Float64Array(n * 4);
    readAll(fd, bytesOf(table), offsets[0]!);
    const validity = Buffer.alloc(header.validityBytes);
    readAll(fd, validity, offsets[1]!);
    const rowids = Buffer.alloc(header.slotCount * 8);
    readAll(fd, rowids, offsets[2]!);
    const chunks: KeptChunk[] = [];
    let validityAt = 0;
    for (let i = 0; i < n; i++) {
      const [chunkId, base, chunkSize, validityLength] = table.subarray(i * 4, i * 4 + 4) as unknown as number[];
      if (base! + chunkSize! > header.slotCount || validityAt + validityLength! > header.validityBytes) throw new Error('inconsistent');
      chunks.push({
        chunkId: chunkId!,
        base: base!,
        size: chunkSize!,
        validity: Buffer.from(validity.subarray(validityAt, validityAt + validityLength!)),
        rowidBytes: Buffer.from(rowids.subarray(base! * 8, (base! + chunkSize!) * 8)),
      });
      validityAt += validityLength!;
    }
    const ids = new Float64Array(header.slotCount);
    readAll(fd, bytesOf(ids), offsets[3]!);
    const invNorms = new Float32Array(header.slotCount);
    readAll(fd, bytesOf(invNorms), offsets[4]!);
    const errors = new Float32Array(header.slotCount);
    readAll(fd, bytesOf(errors), offsets[5]!);
    const roundedNorms = new Float32Array(header.slotCount);
    readAll(fd, bytesOf(roundedNorms), offsets[6]!);
    const target = vectors(header.slotCount);
    // Read through a plain buffer: the scanned memory is shared with a worker thread.
    const block = Buffer.alloc(Math.min(COPY_BLOCK, Math.max(1, header.slotCount * stride)));
    for (let done = 0; done < header.slotCount * stride; ) {
      const want = Math.min(block.byteLength, header.slotCount * stride - done);
      readAll(fd, block.subarray(0, want), offsets[7]! + done);
      target.set(block.subarray(0, want), done);
      done += want;
    }
    const state: VectorFileState = {
      fingerprint,
      dimensions,
      stride,
      slotCount: header.slotCount,
      maxError: header.maxError,
      maxRoundedNorm: header.maxRoundedNorm,
      chunks,
      ids,
      invNorms,
      errors,
      roundedNorms,
      vectors: target,
    };
    const opened = fd;
    fd = undefined;
    return { state, fd: opened, floatsAt: header.floatsAt };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
