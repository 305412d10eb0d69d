// The checks of `ragline doctor` as data: the database, the index, an ingest left
// unfinished, SQLite and sqlite-vec, the embedder against the index, and the model
// server. Each check is ok, warn or fail with a one-line fix. Nothing is changed: the database is opened
// read-only (an outdated schema is reported, not migrated). Against a server: GET /models, what
// the server says of itself (src/providers/server-info.ts), a one-line reply from each chat role,
// and, with a remote embedder, one query and one document embedded.

import fs from 'node:fs';
import os from 'node:os';
import { chooseEmbedder, embeddingServer, usesRemoteChat, usesRemoteEmbeddings, withEmbedder, type Config, type EmbedderChoice, type ResolvedConfig } from '../config/index.js';
import { createEmbedder, embedderSettings, openAISettings } from '../providers/index.js';
import { complete, type Embedder } from '../providers/types.js';
import { describePrefixes, modelPrefixes, NO_PREFIXES, prefixRuleFor, samePrefixes, type EmbeddingPrefixes } from '../providers/embedding-prefixes.js';
import { displayURL } from '../providers/describe-error.js';
import { listModels, OPENAI_API_BASE_URL, OpenAIEmbedder } from '../providers/openai.js';
import { vocabularyTable } from '../retrieve/term-stats.js';
import { openDatabase, type Db } from '../store/db.js';
import { indexCounts, storedFolders, type IndexCounts, type StoredFolder } from '../store/documents.js';
import { documentChunkTotal, schemaVersion, sqliteVersions as readSqliteVersions } from '../store/inspect.js';
import { assertVectorLength, embedderMismatchHint, getFingerprint, ingestLockState, keywordTextVersion, pendingRebuild, readerVersionOf, type IndexFingerprint } from '../store/meta.js';
import { READER_VERSION } from '../ingest/reader.js';
import { OutdatedSchemaError, SCHEMA_VERSION } from '../store/migrations.js';
import { INDEX_TEXT_VERSION, SEARCHABLE_TEXT_VERSION } from '../text/symbols.js';
import { formatBytes } from '../util/bytes.js';
import { pgInventory } from '../store/postgres/inspect.js';
import { PG_SCHEMA_VERSION } from '../store/postgres/migrations.js';
import { isPostgresUrl, PostgresStore, redactedUrl } from '../store/postgres/store.js';
import { UserError } from '../util/errors.js';
import { fileSize } from './stats.js';
import { count, fewOf, shellWord } from '../util/words.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Check {
  /** Stable id, e.g. `database` or `model.embedding`. */
  id: string;
  status: CheckStatus;
  /** One line: what was found. */
  message: string;
  /** One line: what to do about it (warn and fail only). */
  fix?: string;
}

/** Everything `doctor --json` prints besides the checks. */
export interface DoctorFacts {
  configFile: string | null;
  versions: { sqlite: string | null; sqliteVec: string | null };
  database: { path: string; exists: boolean; sizeBytes: number | null; schemaVersion: number | null; expectedSchemaVersion: number };
  index: { fingerprint: IndexFingerprint | null; counts: IndexCounts | null; documentChunkTotal: number | null };
  provider: {
    mode: 'offline' | 'openai' | 'mixed';
    chat: 'offline' | 'openai';
    embeddings: 'offline' | 'openai';
    baseURL: string | null;
    apiKeySet: boolean;
    models: { chat: string; rewrite: string; embedding: string };
    /** The configured embedder's id, compared with the one recorded in the index. */
    embedder: string;
    /** Why this embedder: the setting that chose it, or the index it follows. */
    embedderReason: string;
    reachable: boolean | null;
    /** The server's model list, when it offered one. */
    serverModels: string[] | null;
    /** Each role's model tried once: its server, context window and a timed round trip. */
    roles: RoleCheck[];
    /** The remote embedder: where it is, what it puts before texts, and its round trip (null when it failed or was not tried). */
    embedding: {
      baseURL: string;
      model: string;
      prefixes: EmbeddingPrefixes;
      roundTrip: { ms: number; dimensions: number } | null;
    } | null;
  };
}

export interface RoleCheck {
  role: 'answer' | 'rewrite';
  server: string;
  /** Which server it is, when it says (ollama, llama.cpp, vllm, lmstudio, openai). */
  serverKind: string;
  model: string;
  contextTokens: number | null;
  contextSource: string | null;
  /** How long a one-line reply took, or null when it failed. */
  roundTripMs: number | null;
}

export const DEFAULT_DOCTOR_TIMEOUT_MS = 5_000;

export interface DoctorReport {
  checks: Check[];
  /** Absent when the settings could not be resolved (the `config` check failed). */
  facts?: DoctorFacts;
}

/**
 * Runs every check; never throws for what it finds (a broken config, from
 * `resolve`, is itself a failed check).
 */
export async function runDoctor(resolve: () => ResolvedConfig, timeoutMs: number = DEFAULT_DOCTOR_TIMEOUT_MS): Promise<DoctorReport> {
  const checks: Check[] = [];
  let settings: ResolvedConfig;
  try {
    settings = resolve();
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    checks.push({ id: 'config', status: 'fail', message: error.message, fix: error.hint ?? 'Fix the setting named above; see `ragline config --help`.' });
    return { checks };
  }
  checks.push({
    id: 'config',
    status: 'ok',
    message: settings.configFile ? `Read ${settings.configFile}.` : 'No config file; flags, environment and defaults apply (see `ragline config show`).',
  });

  const versions = sqliteVersions(checks);
  const database = isPostgresUrl(settings.config.db) ? await inspectPostgres(settings.config.db, checks) : inspectDatabase(settings.config.db, checks);
  // embedProvider auto: an existing index keeps its own embedder (chooseEmbedder).
  const choice = chooseEmbedder(settings, database.fingerprint);
  const config = withEmbedder(settings.config, choice);
  const embedder = await createEmbedder(config);
  const facts: DoctorFacts = {
    configFile: settings.configFile ?? null,
    versions,
    database: database.facts,
    index: { fingerprint: database.fingerprint ?? null, counts: database.counts ?? null, documentChunkTotal: database.documentChunkTotal ?? null },
    provider: {
      mode: 'offline',
      chat: usesRemoteChat(config) ? 'openai' : 'offline',
      embeddings: usesRemoteEmbeddings(config) ? 'openai' : 'offline',
      baseURL: null,
      apiKeySet: Boolean(config.apiKey),
      models: { ...config.models },
      embedder: embedder.id,
      embedderReason: choice.reason,
      reachable: null,
      serverModels: null,
      roles: [],
      embedding: null,
    },
  };
  const provider = facts.provider;
  provider.mode = provider.chat === provider.embeddings ? provider.chat : 'mixed';

  if (database.fingerprint) checkIndex(database.fingerprint, database.counts!, database.documentChunkTotal!, config, checks);
  if (database.keywordsDamaged) {
    checks.push({
      id: 'keywords',
      status: 'fail',
      message: `The keyword index cannot be read whole (${database.keywordsDamaged}): searches that reach the damaged part fail.`,
      fix: 'Keep a copy of the file, then rebuild the index: `ragline ingest <folder> --reindex` (sessions are kept), or into a new --db.',
    });
  }
  if (database.missingFolders?.length) checks.push(missingFoldersCheck(database.missingFolders));
  if (database.readEarlier?.length) checks.push(readEarlierCheck(database.readEarlier));
  checks.push(...(database.unfinished ?? []));
  checkEmbedderMatchesIndex(embedder, config, database.fingerprint, choice, checks);
  await checkProvider(config, provider, timeoutMs, checks);
  if (provider.chat === 'openai' && provider.reachable !== false) await checkRoles(config, provider, timeoutMs, checks);
  await checkEmbeddingRoundTrip(embedder, config, settings, database.fingerprint, provider, timeoutMs, checks);
  return { checks, facts };
}

function sqliteVersions(checks: Check[]): DoctorFacts['versions'] {
  let db: Db | undefined;
  try {
    db = openDatabase(':memory:');
    const versions = readSqliteVersions(db);
    checks.push({ id: 'sqlite', status: 'ok', message: `SQLite ${versions.sqlite}, sqlite-vec ${versions.sqliteVec}.` });
    return versions;
  } catch (error) {
    checks.push({
      id: 'sqlite',
      status: 'fail',
      message: `SQLite with sqlite-vec could not be started: ${oneLine(error)}`,
      fix: 'Reinstall ragline (npm install -g ragline) so its native modules match this Node version and platform.',
    });
    return { sqlite: null, sqliteVec: null };
  } finally {
    db?.close();
  }
}

interface DatabaseFindings {
  facts: DoctorFacts['database'];
  fingerprint?: IndexFingerprint;
  counts?: IndexCounts;
  documentChunkTotal?: number;
  /** Why the keyword index could not be read whole, when it could not. */
  keywordsDamaged?: string;
  /** An ingest running or left unfinished: its lock, the folders a rebuild has still to read. */
  unfinished?: Check[];
  /** Folders of the index that are no longer folders on disk. */
  missingFolders?: StoredFolder[];
  /** Folders on disk last read in full by an earlier reader (src/ingest/reader.ts). */
  readEarlier?: StoredFolder[];
}

function inspectDatabase(file: string, checks: Check[]): DatabaseFindings {
  const facts: DoctorFacts['database'] = { path: file, exists: false, sizeBytes: null, schemaVersion: null, expectedSchemaVersion: SCHEMA_VERSION };
  if (!fs.existsSync(file)) {
    checks.push({
      id: 'database',
      status: 'warn',
      message: `No database exists yet at ${file}.`,
      fix: 'Run `ragline ingest <folder>` to create it, or point --db / RAGLINE_DB at an existing one.',
    });
    return { facts };
  }
  facts.exists = true;
  facts.sizeBytes = fileSize(file);
  let db: Db;
  try {
    db = openDatabase(file, { readonly: true });
  } catch (error) {
    const outdated = error instanceof OutdatedSchemaError;
    checks.push({
      id: 'database',
      status: outdated ? 'warn' : 'fail',
      message: error instanceof UserError ? error.message : `Cannot open ${file}: ${oneLine(error)}`,
      fix: outdated ? 'Run `ragline stats` (or any command) once to upgrade it.' : ((error as UserError).hint ?? 'Choose another --db.'),
    });
    return { facts };
  }
  try {
    facts.schemaVersion = schemaVersion(db);
    checks.push({
      id: 'database',
      status: 'ok',
      message: `${file} (${formatBytes(facts.sizeBytes)}, schema ${facts.schemaVersion} of ${SCHEMA_VERSION}).`,
    });
    const counts = indexCounts(db);
    const fingerprint = getFingerprint(db);
    if (!fingerprint && counts.documents === 0) {
      checks.push({ id: 'index', status: 'warn', message: 'Nothing is ingested yet.', fix: 'Run `ragline ingest <folder>`.' });
    } else if (!fingerprint) {
      checks.push({
        id: 'index',
        status: 'fail',
        message: `The index holds ${count(counts.documents, 'document')} but records no embedder (fingerprint missing).`,
        fix: 'Rebuild it with `ragline ingest <folder> --reindex` (sessions are kept).',
      });
    }
    const folders = storedFolders(db);
    const onDisk = new Set(folders.filter((folder) => isFolder(folder.root)));
    return {
      facts,
      fingerprint,
      counts,
      documentChunkTotal: documentChunkTotal(db),
      keywordsDamaged: keywordIndexDamage(db),
      unfinished: unfinishedIngest(db, file),
      missingFolders: folders.filter((folder) => !onDisk.has(folder)),
      readEarlier: folders.filter((folder) => onDisk.has(folder) && (readerVersionOf(db, folder.root) ?? 1) < READER_VERSION),
    };
  } finally {
    db.close();
  }
}

/**
 * A Postgres database: reached, its ragline schema and index, and how keyword search
 * runs there (pg_textsearch's BM25, or full-text search ranked with ts_rank_cd). A
 * database without the schema is left as it is.
 */
async function inspectPostgres(url: string, checks: Check[]): Promise<DatabaseFindings> {
  const shown = redactedUrl(url);
  const facts: DoctorFacts['database'] = { path: shown, exists: false, sizeBytes: null, schemaVersion: null, expectedSchemaVersion: PG_SCHEMA_VERSION };
  const store = new PostgresStore(url, { max: 1 });
  try {
    const schema = await store.withClient(async (client) => (await client.query<{ found: boolean }>(`SELECT to_regclass('ragline.meta') IS NOT NULL AS found`)).rows[0]!.found);
    if (!schema) {
      checks.push({ id: 'database', status: 'warn', message: `${shown} has no ragline schema yet.`, fix: 'Run `ragline ingest <folder>` to create it.' });
      return { facts };
    }
    const found = await pgInventory(store);
    facts.exists = true;
    facts.sizeBytes = found.sizeBytes;
    facts.schemaVersion = found.schemaVersion;
    const vector = found.extensions.vector ? `pgvector ${found.extensions.vector}` : 'pgvector not created yet';
    checks.push({ id: 'database', status: 'ok', message: `${shown}: Postgres ${found.serverVersion}, ${vector}, schema ragline ${found.schemaVersion} of ${PG_SCHEMA_VERSION} (${formatBytes(found.sizeBytes)}).` });
    checks.push(
      found.keywordMethod === 'bm25'
        ? { id: 'keywords', status: 'ok', message: `Keyword search: BM25 (pg_textsearch ${found.extensions.pg_textsearch ?? ''}).`.replace(' )', ')') }
        : {
            id: 'keywords',
            status: 'ok',
            message: 'Keyword search: full-text search ranked with ts_rank_cd (pg_textsearch was not installed when the schema was made).',
          },
    );
    const counts = { documents: found.documents, chunks: found.chunks, ftsRows: found.chunks, vectors: found.chunks };
    if (!found.fingerprint && counts.documents === 0) checks.push({ id: 'index', status: 'warn', message: 'Nothing is ingested yet.', fix: 'Run `ragline ingest <folder>`.' });
    return { facts, fingerprint: found.fingerprint, counts, documentChunkTotal: found.folders.reduce((sum, folder) => sum + folder.chunks, 0) };
  } catch (error) {
    checks.push({
      id: 'database',
      status: 'fail',
      message: error instanceof UserError ? error.message : `Cannot use ${shown}: ${oneLine(error)}`,
      fix: error instanceof UserError ? (error.hint ?? 'Check --db.') : 'Check the URL in --db / RAGLINE_DB and that the server is running.',
    });
    return { facts };
  } finally {
    await store.close();
  }
}

/**
 * An ingest that did not finish: the lock of a process that is gone, and the folders
 * an interrupted rebuild (`ingest --reindex`) has still to read again. While an
 * ingest runs, both are its own and only said.
 */
function unfinishedIngest(db: Db, file: string): Check[] {
  const checks: Check[] = [];
  const state = ingestLockState(db);
  const who = state?.lock ? `An ingest (pid ${state.lock.pid}, started ${state.lock.startedAt})` : 'An ingest (its lock names no process)';
  // A lock taken before the system last started names a pid that is another process's
  // now (ingest takes that process for the holder and refuses).
  const beforeBoot = state?.lock !== undefined && Date.parse(state.lock.startedAt) < Date.now() - os.uptime() * 1000 - 60_000;
  const running = state?.running === true && !beforeBoot;
  if (running) {
    checks.push({ id: 'lock', status: 'ok', message: `${who} is writing to this database now: the counts may change until it finishes.` });
  } else if (state?.running) {
    checks.push({
      id: 'lock',
      status: 'fail',
      message: `${who} did not finish before the system restarted, and pid ${state.lock!.pid} is another process now: every ingest takes it for the holder of the ingest lock, waits for it and then refuses.`,
      fix: `With no ragline ingest running, clear the lock: sqlite3 ${shellWord(file)} "DELETE FROM meta WHERE key = 'ingest.lock'"; then run the ingest again.`,
    });
  } else if (state) {
    checks.push({
      id: 'lock',
      status: 'warn',
      message: `${who} did not finish (its process is gone; its ingest lock is still recorded): what it had not written yet is missing from the index.`,
      fix: 'Run that ingest again (`ragline ingest <folder>`, with --reindex if it was a rebuild): it takes the lock over and finishes the work; the lock needs no clearing by hand.',
    });
  }
  const folders = Object.entries(pendingRebuild(db)).map(([root, paths]) => `${root} (${count(paths.length, 'document')})`);
  if (folders.length === 0) return checks;
  const what = `${count(folders.length, 'folder')} to read again: ${fewOf(folders)}`;
  if (running) {
    checks.push({ id: 'rebuild', status: 'ok', message: `The rebuild running now has ${what}.` });
  } else {
    checks.push({
      id: 'rebuild',
      status: 'warn',
      message: `An interrupted rebuild (\`ingest --reindex\`) has ${what}; until it does, the index lacks some or all of their documents.`,
      fix: 'Run `ragline ingest <folder> --reindex` again (any folder of the index): it rebuilds these folders too.',
    });
  }
  return checks;
}

function isFolder(file: string): boolean {
  try {
    return fs.statSync(file).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Folders of the index gone from the disk (moved, renamed or deleted): their documents
 * are still searched and cited, at paths that no longer exist, until they are removed.
 */
function missingFoldersCheck(missing: StoredFolder[]): Check {
  const which = fewOf(missing.map((folder) => `${folder.root} (${count(folder.documents, 'document')})`));
  const forget = missing.length === 1 ? `\`ragline forget ${shellWord(missing[0]!.root)}\`` : '`ragline forget <folder>` for each';
  return {
    id: 'folders',
    status: 'warn',
    message: `${missing.length === 1 ? 'A folder of the index is' : `${missing.length} folders of the index are`} no longer on disk: ${which}; ${missing.length === 1 ? 'its' : 'their'} documents are still searched and cited at paths that no longer exist.`,
    fix: `If it moved, ingest it where it is now (\`ragline ingest <new folder>\`); then remove the old one from the index: ${forget}.`,
  };
}

/** Folders read by an earlier version of the reader: their next ingest reads every file again, as this version reads them. */
function readEarlierCheck(folders: StoredFolder[]): Check {
  const which = fewOf(folders.map((folder) => folder.root));
  return {
    id: 'reader',
    status: 'warn',
    message: `${folders.length === 1 ? 'A folder was' : `${folders.length} folders were`} indexed by an earlier version of ragline, which read documents differently: ${which}.`,
    fix: `Ingest ${folders.length === 1 ? `it again: \`ragline ingest ${shellWord(folders[0]!.root)}\`` : 'each again (`ragline ingest <folder>`)'}; every file is read anew, and chunks whose text did not change keep their vectors.`,
  };
}

/**
 * Reads the keyword index's whole vocabulary (the table the term statistics read): a
 * damaged index fails here as a search reaching the damage would. About 1 s at 100k chunks.
 */
function keywordIndexDamage(db: Db): string | undefined {
  try {
    db.prepare(`SELECT count(*) FROM ${vocabularyTable(db)}`).get();
    return undefined;
  } catch (error) {
    return oneLine(error instanceof Error ? error.message : String(error));
  }
}

function checkIndex(fingerprint: IndexFingerprint, counts: IndexCounts, documentChunkTotal: number, config: Config, checks: Check[]): void {
  const summary =
    `${count(counts.documents, 'document')}, ${count(counts.chunks, 'chunk')}, ${count(counts.ftsRows, 'FTS row')}, ${count(counts.vectors, 'vector')}; ` +
    `embedder ${fingerprint.embedder} (${count(fingerprint.dimensions, 'dimension')}), chunks of ${fingerprint.chunker.size} with overlap ${fingerprint.chunker.overlap}`;
  const mismatches: string[] = [];
  if (counts.ftsRows !== counts.chunks) mismatches.push(count(counts.ftsRows, 'FTS row'));
  if (counts.vectors !== counts.chunks) mismatches.push(count(counts.vectors, 'vector'));
  if (documentChunkTotal !== counts.chunks) mismatches.push(`${count(documentChunkTotal, 'chunk')} recorded on the documents`);
  if (mismatches.length > 0) {
    checks.push({
      id: 'index',
      status: 'fail',
      message: `The index is inconsistent: ${count(counts.chunks, 'chunk')} but ${mismatches.join(', ')} (${summary}).`,
      fix: 'Rebuild it with `ragline ingest <folder> --reindex` (sessions are kept).',
    });
  } else if (counts.documents === 0) {
    checks.push({ id: 'index', status: 'warn', message: `The index is empty (${summary}).`, fix: 'Run `ragline ingest <folder>`.' });
  } else {
    checks.push({ id: 'index', status: 'ok', message: `${summary}.` });
  }
  if (keywordTextVersion(fingerprint) < SEARCHABLE_TEXT_VERSION) {
    checks.push({
      id: 'keywords',
      status: 'fail',
      message: 'The keyword index was written by an earlier version of ragline (C++, C# and .NET indexed as plain letters); search will refuse.',
      fix: 'Run `ragline ingest <folder>` once: it rewrites the keyword index from the stored chunks, without embedding anything again (`--reindex` instead when the embedder check fails too).',
    });
  } else if (keywordTextVersion(fingerprint) < INDEX_TEXT_VERSION) {
    checks.push({
      id: 'keywords',
      status: 'warn',
      message: 'The keyword index was written by an earlier version of ragline, which read camelCase names (createServer) otherwise: they may not be found by their words.',
      fix: 'Run `ragline ingest <folder>` once: it rewrites the keyword index from the stored chunks, without embedding anything again.',
    });
  }
  if (fingerprint.chunker.size !== config.chunk.size || fingerprint.chunker.overlap !== config.chunk.overlap) {
    checks.push({
      id: 'chunker',
      status: 'warn',
      message: `The index was chunked with size ${fingerprint.chunker.size} and overlap ${fingerprint.chunker.overlap}; size ${config.chunk.size} and overlap ${config.chunk.overlap} are configured, so the next ingest will refuse.`,
      fix: 'Set chunk.size and chunk.overlap back, or rebuild with `ragline ingest <folder> --reindex`.',
    });
  }
}

function checkEmbedderMatchesIndex(
  embedder: { id: string; dimensions: number },
  config: Config,
  fingerprint: IndexFingerprint | undefined,
  choice: EmbedderChoice,
  checks: Check[],
): void {
  if (!fingerprint) {
    checks.push({ id: 'embedder', status: 'ok', message: `No index yet; ingest will embed with ${embedder.id} (${choice.reason}).` });
    return;
  }
  // A remote embedder's dimension is unknown until it answers, unless configured.
  const dimensions = embedder.dimensions || config.embedding.dimensions;
  const sameId = fingerprint.embedder === embedder.id;
  const sameDimensions = !dimensions || dimensions === fingerprint.dimensions;
  if (sameId && sameDimensions) {
    checks.push({ id: 'embedder', status: 'ok', message: `The embedder ${embedder.id} matches the index (${choice.reason}).` });
    return;
  }
  const configured = dimensions ? `${embedder.id} (${count(dimensions, 'dimension')})` : embedder.id;
  checks.push({
    id: 'embedder',
    status: 'fail',
    message: `The index was built with ${fingerprint.embedder} (${count(fingerprint.dimensions, 'dimension')}), but ${configured} is configured (${choice.reason}); search and ingest will refuse.`,
    fix: embedderMismatchHint(fingerprint.embedder, embedder.id),
  });
}

async function checkProvider(config: Config, provider: DoctorFacts['provider'], timeoutMs: number, checks: Check[]): Promise<void> {
  if (provider.mode === 'offline') {
    checks.push({
      id: 'provider',
      status: 'ok',
      message: 'Offline: built-in embedder, rewriter and extractive answers; no network, no key.',
    });
    return;
  }
  // The chat's server; with the chat offline, the embeddings' own.
  const server = provider.chat === 'openai' ? { baseURL: config.baseURL, apiKey: config.apiKey } : embeddingServer(config);
  const baseURL = server.baseURL ?? OPENAI_API_BASE_URL;
  provider.baseURL = displayURL(baseURL);
  // Embeddings at a server of their own are checked by their round trip, not in this server's list.
  const remote = remoteModels(config, provider, displayURL(embeddingServer(config).baseURL ?? OPENAI_API_BASE_URL) === provider.baseURL);
  const uses = [...new Set(remote.map(({ role, model }) => `${role} ${model}`))].join(', ') || 'embeddings';
  const offlineNote = provider.mode === 'mixed' ? `; ${provider.chat === 'offline' ? 'chat' : 'embeddings'} offline` : '';
  checks.push({
    id: 'provider',
    status: 'ok',
    message: `OpenAI-compatible server at ${provider.baseURL} (${uses}${offlineNote}); API key ${provider.apiKeySet ? 'set' : 'not set'}.`,
  });

  let models: string[];
  try {
    models = await listModels(
      {
        baseURL: server.baseURL,
        apiKey: server.apiKey,
        model: remote[0]!.model,
        timeoutMs,
        maxRetries: 0,
      },
    );
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    if ((error.cause as { status?: unknown } | undefined)?.status === 404) {
      // The server answered, so it is reachable; some OpenAI-compatible servers have no model list.
      provider.reachable = true;
      checks.push({
        id: 'server',
        status: 'warn',
        message: `${provider.baseURL} answered but has no model list (GET /models: 404), so the models could not be checked.`,
        fix: 'Fine if your server does not offer one; otherwise check the base URL (it usually ends in /v1).',
      });
      return;
    }
    provider.reachable = false;
    checks.push({ id: 'server', status: 'fail', message: error.message, fix: error.hint ?? 'Check the base URL with `ragline config show`.' });
    return;
  }
  provider.reachable = true;
  provider.serverModels = models;
  checks.push({ id: 'server', status: 'ok', message: `${provider.baseURL} is reachable and lists ${count(models.length, 'model')}.` });

  // Missing from the list is a warning, not a failure: proxies and some servers
  // (Azure deployments, aliases) serve models they do not list.
  const seen = new Set<string>();
  for (const { role, model, variable } of remote) {
    if (seen.has(`${role}:${model}`)) continue;
    seen.add(`${role}:${model}`);
    if (listed(models, model)) {
      checks.push({ id: `model.${role}`, status: 'ok', message: `The ${role} model "${model}" is available.` });
    } else {
      const some = models.slice(0, 8).join(', ') + (models.length > 8 ? ', ...' : '');
      checks.push({
        id: `model.${role}`,
        status: 'warn',
        message: `The ${role} model "${model}" is not in the server's model list${models.length ? ` (${some})` : ' (it lists none)'}.`,
        fix: `Set ${variable} to a model the server has, or install it (for Ollama: \`ollama pull ${model}\`).`,
      });
    }
  }
}

/** A one-line reply from the answer model and the rewrite model, timed, with what the server says of the context window. */
async function checkRoles(config: Config, provider: DoctorFacts['provider'], timeoutMs: number, checks: Check[]): Promise<void> {
  const { OpenAIChatModel } = await import('../providers/openai.js');
  const { serverKind } = await import('../providers/server-info.js');
  const baseURL = config.baseURL ?? OPENAI_API_BASE_URL;
  const roles: Array<{ role: RoleCheck['role']; model: string; variable: string }> = [{ role: 'answer', model: config.models.chat, variable: 'RAGLINE_CHAT_MODEL' }];
  if (config.models.rewrite !== config.models.chat) roles.push({ role: 'rewrite', model: config.models.rewrite, variable: 'RAGLINE_REWRITE_MODEL' });
  const kind = await serverKind(baseURL, config.apiKey);
  for (const { role, model, variable } of roles) {
    const chatModel = new OpenAIChatModel({
      ...openAISettings(config, model, timeoutMs),
      // --timeout bounds each wait: the reply's first token, a stalled stream, a model still loading.
      idleMs: timeoutMs,
      loadTimeoutMs: timeoutMs,
      contextTokens: config.answer?.contextTokens,
      maxRetries: 0,
      operation: role === 'rewrite' ? 'rewrite' : 'chat',
    });
    const window = await chatModel.contextWindow().catch(() => undefined);
    const facts: RoleCheck = {
      role,
      server: displayURL(baseURL),
      serverKind: kind,
      model,
      contextTokens: window?.tokens ?? null,
      contextSource: window?.source ?? null,
      roundTripMs: null,
    };
    provider.roles.push(facts);
    const contextText = window ? `context ${window.tokens.toLocaleString('en-US')} tokens (${window.source})` : 'context length not reported';
    await chatModel.ready();
    const started = performance.now();
    try {
      await complete(chatModel, [{ role: 'user', content: 'Reply with the single word OK.' }], { maxTokens: 16, temperature: 0, thinking: false });
      facts.roundTripMs = Math.round(performance.now() - started);
      checks.push({
        id: `roundtrip.${role}`,
        status: window ? 'ok' : 'warn',
        message: `The ${role} model "${model}" at ${facts.server}${kind === 'unknown' ? '' : ` (${kind})`} replied in ${facts.roundTripMs} ms; ${contextText}.`,
        ...(window ? {} : { fix: 'Set RAGLINE_CONTEXT_TOKENS to the context the model is served with, so that prompts are fitted to it.' }),
      });
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      checks.push({ id: `roundtrip.${role}`, status: 'fail', message: `The ${role} model "${model}": ${error.message}`, fix: error.hint ?? `Check ${variable}.` });
    }
  }
}

/** Texts of the round trip: a question and a passage that answers it. */
const ROUND_TRIP = { query: 'How do I rotate an API key?', document: 'API keys are rotated from Settings > Keys; the old key stays valid for a day.' };

/**
 * Embeds one query and one document with the remote embedder, as a search and an ingest
 * would (prefixes included), within the doctor's time limit and without retries; says how
 * long it took, the vector length, and whether that fits the index. Also says when an index
 * was built without the prefixes its model's family is trained with.
 */
async function checkEmbeddingRoundTrip(
  embedder: Embedder,
  config: Config,
  settings: ResolvedConfig,
  fingerprint: IndexFingerprint | undefined,
  provider: DoctorFacts['provider'],
  timeoutMs: number,
  checks: Check[],
): Promise<void> {
  if (provider.embeddings !== 'openai') return;
  const model = config.models.embedding;
  const baseURL = displayURL(embeddingServer(config).baseURL ?? OPENAI_API_BASE_URL);
  const prefixes = embedder.prefixes ?? NO_PREFIXES;
  provider.embedding = { baseURL, model, prefixes, roundTrip: null };
  // A server the model list could not reach is said once, by the `server` check.
  if (baseURL === provider.baseURL && provider.reachable === false) return;
  const probe = new OpenAIEmbedder({ ...embedderSettings(config), prefixes, timeoutMs, maxRetries: 0, concurrency: 1 });
  const started = performance.now();
  let dimensions: number;
  try {
    const [query] = await probe.embed([ROUND_TRIP.query], undefined, 'query');
    await probe.embed([ROUND_TRIP.document], undefined, 'document');
    dimensions = query!.length;
  } catch (error) {
    if (!(error instanceof UserError)) throw error;
    checks.push({ id: 'embeddings', status: 'fail', message: error.message, fix: error.hint ?? 'Check RAGLINE_EMBED_BASE_URL and RAGLINE_EMBED_MODEL with `ragline config show`.' });
    return;
  }
  const ms = Math.round(performance.now() - started);
  provider.embedding.roundTrip = { ms, dimensions };
  const said = `Embedded a query and a document with "${model}" at ${baseURL} in ${ms} ms: ${count(dimensions, 'dimension')}; prefixes ${describePrefixes(prefixes)}.`;
  if (fingerprint?.embedder === embedder.id) {
    try {
      assertVectorLength(fingerprint, dimensions);
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      checks.push({ id: 'embeddings', status: 'fail', message: `${said} ${error.message}`, fix: error.hint ?? '' });
      return;
    }
    const expected = modelPrefixes(model);
    const chosen = settings.config.embedding.queryPrefix !== undefined || settings.config.embedding.documentPrefix !== undefined;
    if (!chosen && !samePrefixes(prefixes, expected)) {
      checks.push({
        id: 'embeddings',
        status: 'warn',
        message: `${said} The index was built with prefixes ${describePrefixes(prefixes)}, but ${prefixRuleFor(model)?.family ?? model} is trained with ${describePrefixes(expected)}; searches follow the index.`,
        fix: 'Rebuild it to embed with the prefixes the model expects: `ragline ingest <folder> --reindex` (sessions are kept).',
      });
      return;
    }
  }
  checks.push({ id: 'embeddings', status: 'ok', message: said });
}

function remoteModels(config: Config, provider: DoctorFacts['provider'], embeddingsHere: boolean): Array<{ role: string; model: string; variable: string }> {
  const models: Array<{ role: string; model: string; variable: string }> = [];
  if (provider.chat === 'openai') {
    models.push({ role: 'chat', model: config.models.chat, variable: 'RAGLINE_CHAT_MODEL' });
    if (config.models.rewrite !== config.models.chat) models.push({ role: 'rewrite', model: config.models.rewrite, variable: 'RAGLINE_REWRITE_MODEL' });
  }
  if (provider.embeddings === 'openai' && embeddingsHere) models.push({ role: 'embedding', model: config.models.embedding, variable: 'RAGLINE_EMBED_MODEL' });
  return models;
}

/** Whether `model` is in the list; Ollama lists `name:latest` for a model used as `name`. */
function listed(models: string[], model: string): boolean {
  return models.includes(model) || models.includes(`${model}:latest`) || (model.endsWith(':latest') && models.includes(model.slice(0, -':latest'.length)));
}

function oneLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').trim();
}
