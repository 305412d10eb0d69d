// A workspace: one database opened once, with the settings resolved for it and
// the providers and retriever it needs, made when first asked for. Every command
// of the CLI, the MCP server and a program that uses ragline as a library work
// through one; the operations in this folder take it as their first argument.

import fs from 'node:fs';
import { chooseEmbedder, resolveConfig, SETTING_KEYS, withEmbedder, type Config, type EmbedderChoice, type ResolvedConfig } from '../config/index.js';
import type { TurnContext } from '../chat/turn.js';
import { sqliteSessionStore, type SessionStore } from '../chat/session-store.js';
import type { ChatModel, Embedder } from '../providers/types.js';
import type { SearchAccelerators } from '../retrieve/memory/accelerators.js';
import type { Retriever } from '../retrieve/search.js';
import type { QueryRewriter } from '../rewrite/types.js';
import { openDatabase, removeUnusedDatabase, type Db } from '../store/db.js';
import { indexCounts } from '../store/documents.js';
import { conversationCounts } from '../store/inspect.js';
import { getFingerprint } from '../store/meta.js';
import { pgFingerprint } from '../store/postgres/index-writes.js';
import { isPostgresUrl, PostgresStore } from '../store/postgres/store.js';
import { UserError } from '../util/errors.js';
import { editDistance } from '../util/edit-distance.js';

/** What a search and a chat turn use of a retriever, on either store. */
export type SearchIndex = Pick<Retriever, 'search' | 'embedder'>;

/** Settings by dotted key, as in the config file: `{ 'retrieval.k': 8, provider: 'offline' }`. */
export type Settings = Record<string, string | number | undefined>;

export interface WorkspaceOptions {
  /** The database file (`:memory:` works). Default: the `db` setting, else RAGLINE_DB in `env`, else $XDG_DATA_HOME/ragline/ragline.db. */
  db?: string;
  /** Settings by dotted key, checked as the CLI checks its flags; they win over `env` and the config file. */
  settings?: Settings;
  /**
   * An environment to read RAGLINE_* and OPENAI_* variables and the config file
   * ($RAGLINE_CONFIG, else $XDG_CONFIG_HOME/ragline/config.json) from, e.g.
   * the environment of this process. Without it nothing outside `settings` is read: defaults apply.
   */
  env?: NodeJS.ProcessEnv;
  /** Settings resolved already (the CLI resolves its flags); `db`, `settings` and `env` are then not read. */
  resolved?: ResolvedConfig;
  /** Create the database (and its folder) when it does not exist, or make one of an empty file. Default: true. */
  create?: boolean;
}

/** Resolves the settings a workspace is opened with (see WorkspaceOptions). */
export function resolveSettings(options: Omit<WorkspaceOptions, 'resolved' | 'create'> = {}): ResolvedConfig {
  // A misspelt key would otherwise be dropped without a word, its setting left at its default.
  const unknown = Object.keys(options.settings ?? {}).filter((key) => !SETTING_KEYS.includes(key));
  if (unknown.length > 0) {
    const near = unknown.map((key) => [key, SETTING_KEYS.find((known) => editDistance(key, known) <= 2)] as const).filter(([, known]) => known !== undefined);
    throw new UserError(`Unknown setting${unknown.length > 1 ? 's' : ''}: ${unknown.map((key) => `settings['${key}']`).join(', ')}.`, {
      hint: near.length > 0 ? near.map(([key, known]) => `'${key}': did you mean '${known}'?`).join(' ') : `Known settings: ${SETTING_KEYS.join(', ')}.`,
      exitCode: 2,
    });
  }
  const flags: Settings = { ...options.settings };
  if (options.db !== undefined) flags.db = options.db;
  const flagNames = Object.fromEntries(Object.keys(flags).map((key) => [key, key === 'db' && options.db !== undefined ? 'db' : `settings['${key}']`]));
  return resolveConfig({ flags, flagNames, env: options.env ?? {}, configFile: options.env ? undefined : false });
}

/**
 * Opens the database named by the settings (created when missing unless `create:
 * false`): an SQLite file, or a Postgres database given as a postgres:// URL (its
 * ragline schema is made or migrated at the first query).
 */
export function openWorkspace(options: WorkspaceOptions = {}): Workspace {
  const settings = options.resolved ?? resolveSettings(options);
  const file = settings.config.db;
  if (isPostgresUrl(file)) return new Workspace(new PostgresStore(file, { user: settings.config.user }), settings);
  const created = (options.create ?? true) && file !== ':memory:' && !fs.existsSync(file);
  return new Workspace(openDatabase(file, { create: options.create ?? true }), settings, created);
}

/** What runs on a Postgres database so far; every other operation refuses it with notOnPostgres. */
export const POSTGRES_COMMANDS = ['ingest', 'search', 'ask', 'chat', 'sessions', 'replay', 'eval', 'prune', 'forget', 'stats', 'doctor', 'migrate'];

/** The error of an operation that needs the SQLite store, asked of a Postgres database. */
export function notOnPostgres(what = 'This command'): UserError {
  return new UserError(`${what} does not run on a Postgres database yet.`, {
    hint: `On Postgres: ${POSTGRES_COMMANDS.join(', ')}. Use an SQLite database (--db ./ragline.db) for the rest; see docs/postgres.md.`,
    exitCode: 2,
  });
}

// The providers, the retriever and the rewriter are imported when first needed:
// a command that only reads the store (stats, sessions, prune) does not load them.
const providers = () => import('../providers/index.js');
const rewriters = () => import('../rewrite/index.js');

/**
 * A promise kept once it is fulfilled; one that was rejected is forgotten, so the
 * next call tries again (the database may have been ingested meanwhile).
 */
function once<T>(make: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    const made = (pending ??= make());
    made.catch(() => {
      if (pending === made) pending = undefined;
    });
    return made;
  };
}

export class Workspace {
  private readonly embedders: Embedder[] = [];
  private bulk?: { reindex: boolean; embedder: Promise<Embedder> };
  private copies?: SearchAccelerators;
  private readonly sqlite?: Db;
  /** The Postgres database, when the workspace is on one (`--db postgres://...`). */
  readonly postgres?: PostgresStore;
  private postgresOpen = true;

  constructor(
    /** The open database: an SQLite connection, or a Postgres store. */
    database: Db | PostgresStore,
    /** The resolved settings, with where each came from. */
    readonly settings: ResolvedConfig,
    /** The database file was made by this workspace's opening. */
    readonly created = false,
  ) {
    if (database instanceof PostgresStore) this.postgres = database;
    else this.sqlite = database;
  }

  /** The SQLite database; a UserError on Postgres, for the operations that need SQLite still. */
  get db(): Db {
    if (!this.sqlite) throw notOnPostgres();
    return this.sqlite;
  }

  get config(): Config {
    return this.settings.config;
  }

  /** Whether the database is still open. */
  get isOpen(): boolean {
    return this.sqlite ? this.sqlite.open : this.postgresOpen;
  }

  /**
   * The embedder this database needs (chooseEmbedder): with embedProvider auto, an
   * existing index keeps its own. `reindex`: the index is about to be rebuilt, so
   * it is not followed.
   */
  embedderChoice(options: { reindex?: boolean } = {}): EmbedderChoice {
    return chooseEmbedder(this.settings, options.reindex ? undefined : getFingerprint(this.db));
  }

  /** The configuration with the embedder this database needs (on either store). */
  async embedderConfigOf(options: { reindex?: boolean } = {}): Promise<Config> {
    if (!this.postgres) return this.embedderConfig(options);
    const stored = options.reindex ? undefined : (await pgFingerprint(this.postgres))?.embedder;
    return withEmbedder(this.config, chooseEmbedder(this.settings, stored));
  }

  /** The configuration with the embedder this database needs. */
  embedderConfig(options: { reindex?: boolean } = {}): Config {
    return withEmbedder(this.config, this.embedderChoice(options));
  }

  /** The embedder searches use. */
  readonly embedder = once(async () => this.keep(await (await providers()).createEmbedder(await this.embedderConfigOf())));

  /** The embedder an ingest uses (on a worker thread offline); `reindex`: the one the settings choose, whatever the index holds. */
  ingestEmbedder(options: { reindex?: boolean } = {}): Promise<Embedder> {
    const reindex = Boolean(options.reindex);
    if (!this.bulk || this.bulk.reindex !== reindex) {
      const config = this.embedderConfigOf({ reindex });
      this.bulk = {
        reindex,
        embedder: Promise.all([providers(), config]).then(([{ createEmbedder }, resolved]) => createEmbedder(resolved, { bulk: true })).then((embedder) => this.keep(embedder)),
      };
    }
    return this.bulk.embedder;
  }

  /** The in-memory copies of the vector and keyword indexes, shared by the workspace's searches. */
  async accelerators(): Promise<SearchAccelerators> {
    const { SearchAccelerators } = await import('../retrieve/memory/accelerators.js');
    return (this.copies ??= new SearchAccelerators(this.db));
  }

  /** Hybrid search over the SQLite index; a UserError when the index was built with another embedder. */
  readonly retriever = once(async (): Promise<Retriever> => {
    const db = this.db;
    const [{ Retriever }, embedder] = await Promise.all([import('../retrieve/search.js'), this.embedder()]);
    return new Retriever(db, embedder, this.config.search, { accelerators: await this.accelerators() });
  });

  /** Hybrid search over the index, on either store: what a search and a chat turn need of it. */
  readonly searchIndex = once(async (): Promise<SearchIndex> => {
    if (!this.postgres) return this.retriever();
    const [{ PostgresRetriever }, embedder] = await Promise.all([import('../retrieve/postgres.js'), this.embedder()]);
    const retriever = new PostgresRetriever(this.postgres, embedder);
    await retriever.check();
    return retriever;
  });

  /** The sessions, turns and judgments, on either store: on Postgres, those of this user. */
  readonly sessions = once(async (): Promise<SessionStore> => {
    if (!this.postgres) return sqliteSessionStore(this.db);
    const { postgresSessionStore } = await import('../chat/postgres-session-store.js');
    return postgresSessionStore(this.postgres, await this.postgres.owner());
  });

  /** The model follow-ups are rewritten with; undefined offline. */
  readonly rewriteModel = once(async () => (await providers()).createRewriteModel(this.config));

  /** The model answers come from; undefined offline (extractive answers). */
  readonly answerModel = once(async () => (await providers()).createChatModel(this.config));

  /** The follow-up rewriter (the configured model's, or the offline one). */
  async rewriter(): Promise<QueryRewriter> {
    const model = await this.rewriteModel();
    return (await rewriters()).createRewriter(model, { timeoutMs: this.config.rewrite.timeoutMs, maxTokens: this.config.rewrite.maxTokens });
  }

  /** The model that extracts each exchange's topics: the rewrite model unless topics.extractor is local; undefined offline. */
  async topicModel(): Promise<ChatModel | undefined> {
    return this.config.topics?.extractor === 'local' ? undefined : this.rewriteModel();
  }

  /** What a turn in `sessionId` runs with: the providers are made once and shared. */
  async turnContext(sessionId: string): Promise<TurnContext> {
    const [retriever, rewriter, answerModel, topicModel] = await Promise.all([this.searchIndex(), this.rewriter(), this.answerModel(), this.topicModel()]);
    const loadingModels = [answerModel, topicModel].filter((model) => model !== undefined);
    if (this.postgres) {
      const { postgresTurnStore } = await import('../chat/stages/postgres-store.js');
      const store = postgresTurnStore(this.postgres, await this.postgres.owner());
      return { store, config: this.config, sessionId, retriever, rewriter, answerModel, topicModel, loadingModels };
    }
    return { db: this.db, config: this.config, sessionId, retriever, rewriter, answerModel, topicModel, loadingModels };
  }

  /** Starts loading the configured models on their server (a local server loads a model on its first request). */
  async warmModels(): Promise<void> {
    const models = [await this.rewriteModel(), await this.answerModel()];
    for (const model of models) void model?.ready?.().catch(() => {});
  }

  /**
   * Starts copying the vectors and the keyword index into memory (the keyword copy
   * on a worker thread), for a workspace that will answer many searches.
   */
  async warmInBackground(): Promise<void> {
    await (await this.accelerators()).warmInBackground(this.config.search);
  }

  /** Closes the in-memory copies and the embedders it made (worker threads), and the database. */
  /**
   * Closes the database and the providers. `removeIfEmpty`: a database this workspace
   * created that holds no document and no session is removed (an ingest that indexed
   * nothing leaves no file behind), unless another process has it open. Returns
   * whether it was removed.
   */
  async close(options: { removeIfEmpty?: boolean } = {}): Promise<boolean> {
    let empty = false;
    try {
      this.copies?.close();
      this.copies = undefined;
      for (const embedder of this.embedders.splice(0)) await embedder.close?.();
    } finally {
      if (this.sqlite?.open) {
        empty = Boolean(options.removeIfEmpty && this.created) && holdsNothing(this.sqlite);
        this.sqlite.close();
      }
      if (this.postgres && this.postgresOpen) {
        this.postgresOpen = false;
        await this.postgres.close();
      }
    }
    return empty && removeUnusedDatabase(this.config.db);
  }

  private keep(embedder: Embedder): Embedder {
    this.embedders.push(embedder);
    return embedder;
  }
}

/** No document, and no session: what a database that only an ingest of nothing touched holds. */
function holdsNothing(db: Db): boolean {
  try {
    return indexCounts(db).documents === 0 && conversationCounts(db).sessions === 0;
  } catch {
    return false; // unreadable: kept, for `ragline doctor` to say why
  }
}
