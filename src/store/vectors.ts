// The sqlite-vec table holding one vector per chunk (rowid = chunk id). Its
// dimension is fixed when the first vectors arrive, so it is created here and
// not in a migration.

import type { Db } from './db.js';

export function hasVectorTable(db: Db): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_chunks'").get() !== undefined;
}

export function createVectorTable(db: Db, dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions <= 0 || dimensions > 16384) {
    throw new Error(`invalid embedding dimension ${dimensions}`);
  }
  db.exec(`CREATE VIRTUAL TABLE vec_chunks USING vec0(embedding float[${dimensions}] distance_metric=cosine)`);
}

export function dropVectorTable(db: Db): void {
  db.exec('DROP TABLE IF EXISTS vec_chunks');
}

export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export function bytesToVector(bytes: Buffer): Float32Array {
  // Copy: the buffer better-sqlite3 hands back may be reused.
  const copy = new Float32Array(bytes.byteLength / 4);
  new Uint8Array(copy.buffer).set(bytes);
  return copy;
}
