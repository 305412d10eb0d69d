// Hex digests for content hashes. node:crypto is loaded at the first hash, not with
// the modules that hash: a re-ingest that finds nothing to write never sets it up.

let nodeCrypto: typeof import('node:crypto') | undefined;

/** The hex digest of `data` with `algorithm` (sha1 for chunk texts, sha256 for files). */
export function hexDigest(algorithm: 'sha1' | 'sha256', data: string | Buffer): string {
  nodeCrypto ??= process.getBuiltinModule('node:crypto');
  return nodeCrypto.createHash(algorithm).update(data).digest('hex');
}
