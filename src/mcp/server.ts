// `ragline mcp`: the conversational retrieval of `chat` for MCP clients (agents,
// desktop assistants, editors). Tools `search`, `ask`, `sessions` and `replay`, and
// the indexed documents as resources (documents.ts). Every search and ask runs the
// same runTurn as the chat and is stored as a turn of a session, so `ragline replay`
// shows what a client asked, how it was rewritten and what it got.
//
// The database is opened when the server starts (and again at the next call if it
// was missing then); the in-memory vector and keyword copies load in the
// background meanwhile, and searches are answered from SQLite until they are ready.
// What a client can fix (an empty query, an unknown session, a missing database or
// one built with another embedder) comes back as a tool error it can read; the
// server keeps serving.
//
// Calls run side by side: a search, the sessions list, a replay or a resource is
// answered while an ask waits on its model. Each write (a turn's question, then its
// whole trail) is one synchronous SQLite transaction, so calls in flight together
// cannot interleave inside one; a follow-up sees the turns of its session that had
// finished when it started, as a second chat on the same session does.

import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RewriteEvent, RetrievalEvent, DoneEvent, ErrorEvent } from '../chat/events.js';
import type { TurnContext, TurnOptions } from '../chat/turn.js';
import { askIn, askWithoutStoring } from '../app/chat.js';
import { checkAskable } from '../app/limits.js';
import { listIndexedDocuments, readIndexedDocument } from '../app/documents.js';
import { replay } from '../app/replay.js';
import { createSession, findSession, getSession, listSessions } from '../app/sessions.js';
import type { SessionInfo, Workspace } from '../app/index.js';
import type { Config } from '../config/index.js';
import { UserError } from '../util/errors.js';
import { isReadOnlyError, sqliteRuntimeError } from '../util/sqlite-errors.js';
import { oneLine, sanitizeForTerminal } from '../util/sanitize.js';
import { redactSecrets } from '../util/secrets.js';
import { DOC_URI_PREFIX, documentUri, parseDocumentUri } from './documents.js';
import {
  askText,
  chunkResult,
  replayResult,
  replayText,
  rewriteResult,
  searchText,
  sessionsResult,
  sessionsText,
  type AskResult,
  type TurnResult,
} from './format.js';

/** JSON-RPC error code the MCP specification gives a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;
/** Sessions the sessions tool lists when not told how many. */
const DEFAULT_SESSIONS = 50;
/** Most chunks one call may ask for. */
const MAX_K = 50;

export interface McpDependencies {
  config: Config;
  /** Opens the workspace; a UserError when the database is missing or not a ragline database. */
  openWorkspace(): Workspace;
  /** Providers for turns in `workspace` (default: its own); a UserError when the index was built with another embedder. */
  createContext?(workspace: Workspace): Promise<TurnContext>;
  /** The session of calls that name none (`--session`); default: one named after the client. */
  sessionName?: string;
  version: string;
  /** Diagnostics; never to stdout, which carries the protocol. */
  log(message: string): void;
}

interface TurnRun {
  rewrite?: RewriteEvent;
  retrieval?: RetrievalEvent;
  error?: ErrorEvent;
  done: DoneEvent;
}

export class RaglineMcpServer {
  readonly mcp: McpServer;
  private workspace?: Workspace;
  private context?: Promise<TurnContext>;
  private defaultSessionId?: string;
  /** The default session being made (by the first of the calls that need it). */
  private makingDefault?: Promise<SessionInfo>;
  /** Tool calls running now: close() lets them store their turns first. */
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly deps: McpDependencies) {
    this.mcp = new McpServer(
      { name: 'ragline', version: deps.version },
      {
        instructions:
          'Searches and answers from the documents indexed by ragline, with citations (path:lines). ' +
          'Pass the session named in a result to have follow-up questions ("what about its limits?") rewritten against that conversation. ' +
          'Open what a result cites with its ragline://doc/<path>#L<from>-<to> resource.',
      },
    );
    // e.g. a line on stdin that is not JSON-RPC: said on stderr, the server goes on.
    this.mcp.server.onerror = (error) => deps.log(`protocol error: ${error.message}`);
    this.registerTools();
    this.registerResources();
  }

  /**
   * Opens the database if it is there and starts loading the in-memory copies; then
   * serves on `transport`, every message sent passing redactSecrets on its way out.
   */
  async connect(transport: Transport): Promise<void> {
    try {
      this.open();
    } catch (error) {
      // Not fatal: each call reports it (and opens the database once it exists).
      this.deps.log(message(error));
    }
    await this.mcp.connect(redacting(transport));
  }

  async close(): Promise<void> {
    // Closing aborts the calls in flight (a turn waiting on its model is stored interrupted).
    await this.mcp.close();
    await Promise.allSettled([...this.inFlight]);
    await this.workspace?.close();
    this.workspace = undefined;
  }

  /** The workspace, opened at the first call that finds its database; its in-memory copies then start loading. */
  private open(): Workspace {
    if (this.workspace?.isOpen) return this.workspace;
    const workspace = this.deps.openWorkspace();
    this.workspace = workspace;
    void workspace.warmInBackground().then(
      () => workspace.isOpen && this.deps.log('in-memory vector and keyword copies loaded'),
      () => {},
    );
    // The providers too, so the first call does not wait for them; a failure (another
    // embedder) is reported by the calls that need them.
    this.turnContext(workspace).catch(() => {});
    return workspace;
  }

  /** The providers for turns in `workspace`, made once; made again at the next call if they failed. */
  private turnContext(workspace: Workspace): Promise<TurnContext> {
    const context = (this.context ??= this.deps.createContext ? this.deps.createContext(workspace) : workspace.turnContext(''));
    context.catch(() => {
      if (this.context === context) this.context = undefined;
    });
    return context;
  }

  /** Runs `fn`, kept in `inFlight` until it settles. */
  private tracked<T>(fn: () => Promise<T>): Promise<T> {
    const run = fn();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run)).catch(() => {});
    return run;
  }

  /** The session a call names (conversational), or this server's own (searched as written). */
  private async sessionFor(workspace: Workspace, ref: string | undefined): Promise<{ session: SessionInfo; conversational: boolean }> {
    if (ref !== undefined && ref.trim() !== '') {
      const session = await findSession(workspace, ref);
      if (!session) {
        throw new UserError(`No session with the id or name "${ref.trim()}".`, {
          hint: `Call the sessions tool to list them, or leave session out to use this server's session${await this.defaultLabel(workspace)}.`,
        });
      }
      return { session, conversational: true };
    }
    return { session: await this.defaultSession(workspace), conversational: false };
  }

  private async defaultLabel(workspace: Workspace): Promise<string> {
    const session = this.defaultSessionId ? await getSession(workspace, this.defaultSessionId) : undefined;
    const name = session ? (session.name ?? session.id) : this.deps.sessionName;
    return name ? ` ("${oneLine(name, 200)}")` : '';
  }

  /**
   * Created at the first turn: the `--session` one (continued if it exists), else
   * `<client name>-<n>`. Calls that arrive together before it exists wait for the one
   * making it: one session for them all, not one each.
   */
  private async defaultSession(workspace: Workspace): Promise<SessionInfo> {
    const existing = this.defaultSessionId ? await getSession(workspace, this.defaultSessionId) : undefined;
    if (existing) return existing;
    this.makingDefault ??= this.makeDefaultSession(workspace).finally(() => (this.makingDefault = undefined));
    return this.makingDefault;
  }

  private async makeDefaultSession(workspace: Workspace): Promise<SessionInfo> {
    let session: SessionInfo;
    if (this.deps.sessionName) {
      session = (await findSession(workspace, this.deps.sessionName)) ?? (await createOrFind(workspace, this.deps.sessionName));
    } else {
      const base = clientSessionBase(this.mcp.server.getClientVersion()?.name);
      session = await createNumbered(workspace, base);
    }
    this.defaultSessionId = session.id;
    return session;
  }

  /** The session a call names, or this server's own if it is stored: for a turn that stores nothing (and so creates no session). */
  private async sessionToRead(workspace: Workspace, ref: string | undefined): Promise<{ session?: SessionInfo; conversational: boolean }> {
    if (ref !== undefined && ref.trim() !== '') return this.sessionFor(workspace, ref);
    const own = this.defaultSessionId
      ? await getSession(workspace, this.defaultSessionId)
      : this.deps.sessionName
        ? await findSession(workspace, this.deps.sessionName)
        : undefined;
    return { session: own, conversational: false };
  }

  /**
   * The turn's events gathered; undefined when the call was cancelled before it started
   * (nothing stored). `stored: false`: the turn is run without writing anything.
   */
  private async turn(
    question: string,
    ref: string | undefined,
    options: TurnOptions,
    { stored = true } = {},
  ): Promise<{ run: TurnRun; session?: SessionInfo; conversational: boolean; stored: boolean } | undefined> {
    const workspace = this.open();
    const context = await this.turnContext(workspace);
    if (options.signal?.aborted) return undefined;
    const { session, conversational } = stored ? await this.sessionFor(workspace, ref) : await this.sessionToRead(workspace, ref);
    const run: Partial<TurnRun> = {};
    const turnOptions: TurnOptions = { ...options, ...(conversational ? {} : { rewritePolicy: 'never' }) };
    const events = stored ? askIn(context, session!.id, question, turnOptions) : askWithoutStoring(context, session?.id ?? '', question, turnOptions);
    for await (const event of events) {
      if (event.type === 'rewrite') run.rewrite = event;
      else if (event.type === 'retrieval') run.retrieval = event;
      else if (event.type === 'error') run.error = event;
      else if (event.type === 'done') run.done = event;
    }
    return { run: run as TurnRun, session, conversational, stored };
  }

  private registerTools(): void {
    const sessionArg = z
      .string()
      .optional()
      .describe(
        'A session id or name from an earlier result (or "last"): the question is read as a follow-up in that conversation and rewritten to stand alone when it needs to be. Leave out to search the text as written (stored in this server\'s own session).',
      );
    const kArg = z.number().int().min(1).max(MAX_K).optional().describe(`How many chunks to return (1-${MAX_K}; default ${this.deps.config.retrieval.k}).`);

    this.mcp.registerTool(
      'search',
      {
        title: 'Search the documents',
        description:
          'Hybrid (vector + keyword) search of the indexed documents. Returns the query actually searched (a follow-up in a session is rewritten to stand alone), why it was or was not rewritten, and the best chunks with path:lines, heading, score, text and a ragline://doc resource URI for each. Stored as a turn of the session.',
        inputSchema: { query: z.string().describe('What to look for, in words: a question or keywords.'), k: kArg, session: sessionArg },
        annotations: { readOnlyHint: false, openWorldHint: false },
      },
      async ({ query, k, session }, extra) =>
        this.guard(() =>
          this.tracked(async () => {
            const question = requireText(query, 'query');
            const options: TurnOptions = { k, retrieveOnly: true, signal: extra.signal };
            let ran;
            try {
              ran = await this.turn(question, session, options);
            } catch (error) {
              // A database this user cannot write: searched as the CLI's `search` searches it, and not kept.
              if (!isReadOnlyError(error)) throw error;
              ran = await this.turn(question, session, options, { stored: false });
            }
            if (!ran) return abandoned();
            const { run, session: stored, conversational } = ran;
            if (run.done.status === 'failed') return failure(run.error?.message ?? 'The search failed.', run.error?.hint);
            const result = sanitizedTurn(turnResult(run, stored, question, ran.stored));
            return ok(searchText(result, stored, conversational), result);
          }),
        ),
    );

    this.mcp.registerTool(
      'ask',
      {
        title: 'Ask the documents',
        description:
          'Answers a question from the indexed documents, citing them as [n]. Returns the answer (from the configured model, or extractive: sentences quoted from the best chunks when no model is configured), the citations with path:lines and resource URIs, the query actually searched with the rewrite decision, and the chunks retrieved. Stored as a turn of the session.',
        inputSchema: { question: z.string().describe('The question, as a person would ask it.'), k: kArg, session: sessionArg },
        annotations: { readOnlyHint: false, openWorldHint: false },
      },
      async ({ question: asked, k, session }, extra) =>
        this.guard(() =>
          this.tracked(async () => {
            const question = requireText(asked, 'question');
            const ran = await this.turn(question, session, { k, signal: extra.signal });
            if (!ran) return abandoned();
            const { run, session: stored, conversational } = ran;
            if (run.done.status === 'failed') return failure(run.error?.message ?? 'The answer failed.', run.error?.hint);
            const chunks = run.retrieval?.chunks ?? [];
            const { chunks: chunkResults, ...turn } = turnResult(run, stored, question, true);
            const result: AskResult = {
              ...turn,
              answer: run.done.answer,
              answerKind: run.done.answerKind,
              citations: run.done.citations.map((citation) => {
                const chunk = chunks.find((c) => c.chunkId === citation.chunkId);
                return { ...citation, uri: chunk ? documentUri(chunk.documentPath, { from: chunk.startLine, to: chunk.endLine }) : '' };
              }),
              chunks: chunkResults,
            };
            const clean = sanitizedAsk(result);
            return ok(askText(clean, stored!, conversational), clean);
          }),
        ),
    );

    this.mcp.registerTool(
      'sessions',
      {
        title: 'List sessions',
        description: 'Lists the stored sessions (conversations), most recently active first: id, name, number of turns, last activity and first question.',
        inputSchema: { limit: z.number().int().min(1).max(1000).optional().describe('At most this many sessions (default 50).') },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async ({ limit }) =>
        this.guard(async () => {
          const all = await listSessions(this.open());
          const sessions = sessionsResult(all.slice(0, limit ?? DEFAULT_SESSIONS));
          return ok(sessionsText(sessions, all.length), { sessions, total: all.length });
        }),
    );

    this.mcp.registerTool(
      'replay',
      {
        title: 'Replay a session',
        description:
          "One session's trail, turn by turn: what was asked, the query searched (and whether and why it was rewritten), the chunks retrieved with their scores and whether they are still in the index, and the answer (none for a search).",
        inputSchema: {
          session: z.string().describe('Session id or name, or "last" for the most recently active.'),
          turn: z.number().int().min(1).optional().describe('Only this turn (1-based).'),
        },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      async ({ session: ref, turn }) =>
        this.guard(async () => {
          const workspace = this.open();
          const session = await findSession(workspace, requireText(ref, 'session', 'Give a session id or name from the sessions tool, or "last".'));
          if (!session) {
            throw new UserError(`No session with the id or name "${ref.trim()}".`, { hint: 'Call the sessions tool to list them.' });
          }
          const result = replayResult(await replay(workspace, session, turn === undefined ? {} : { turn }));
          return ok(replayText(result), result);
        }),
    );
  }

  private registerResources(): void {
    this.mcp.registerResource(
      'document',
      new ResourceTemplate(`${DOC_URI_PREFIX}{+path}`, {
        list: async () => {
          try {
            const documents = listIndexedDocuments(this.open());
            return {
              resources: documents.map((doc) => ({
                uri: documentUri(doc.path),
                name: sanitizeForTerminal(doc.path),
                ...(doc.title ? { title: sanitizeForTerminal(doc.title) } : {}),
                mimeType: mimeType(doc.kind),
              })),
            };
          } catch (error) {
            this.deps.log(message(error));
            return { resources: [] };
          }
        },
      }),
      {
        title: 'Indexed document',
        description:
          'The text of an indexed document as the index holds it: ragline://doc/<path>, or a range of it with #L<from>-<to> (lines; pages for a PDF), as search and ask results cite it.',
      },
      async (uri) => {
        const parsed = parseDocumentUri(uri.toString());
        if (!parsed) throw new McpError(RESOURCE_NOT_FOUND, `Not a ragline document URI: ${uri}. Use ragline://doc/<path>#L<from>-<to>.`);
        let doc;
        try {
          doc = readIndexedDocument(this.open(), parsed.path, parsed.range);
        } catch (error) {
          throw new McpError(-32602, message(error));
        }
        if (!doc) throw new McpError(RESOURCE_NOT_FOUND, `No document ${JSON.stringify(parsed.path)} in the index. Resources serve indexed documents only.`);
        return {
          contents: [{ uri: uri.toString(), mimeType: mimeType(doc.kind), text: sanitizeForTerminal(doc.text) }],
        };
      },
    );
  }

  /** A tool error the client can read for anything `fn` throws; the server keeps serving. */
  private async guard(fn: () => Promise<CallToolResult>): Promise<CallToolResult> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof UserError) return failure(error.message, error.hint);
      // In the CLI's words: "The database is read-only for this user ...", "The disk holding the database is full ...".
      const known = sqliteRuntimeError(error);
      if (known) return failure(known.message, known.hint);
      this.deps.log(error instanceof Error ? (error.stack ?? error.message) : String(error));
      return failure(`Unexpected error: ${message(error)}`);
    }
  }
}

/**
 * `transport`, sending every message with the known secrets (the API keys) and bearer
 * tokens removed from each string in it: tool text, structuredContent, resources and
 * errors alike, through the one redaction function the CLI's output uses. A document
 * that holds the key is served with `[redacted]` in its place, as `ragline search` prints it.
 */
function redacting(transport: Transport): Transport {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(redactStrings(message), options);
  return transport;
}

function redactStrings<T>(value: T): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (Array.isArray(value)) return value.map(redactStrings) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactStrings(item)])) as T;
  return value;
}

/** What search and ask both return of a turn. */
function turnResult(run: TurnRun, session: SessionInfo | undefined, question: string, stored: boolean): TurnResult {
  return {
    stored,
    session: session ? { id: session.id, name: session.name } : null,
    turn: run.done.ordinal,
    question: run.rewrite?.question ?? question,
    standaloneQuery: run.rewrite?.standaloneQuery ?? question,
    rewrite: rewriteResult(run.rewrite),
    chunks: (run.retrieval?.chunks ?? []).map(chunkResult),
  };
}

function sanitizedTurn<T extends TurnResult>(result: T): T {
  const session = result.session && { ...result.session, name: result.session.name === null ? null : sanitizeForTerminal(result.session.name) };
  return { ...result, question: sanitizeForTerminal(result.question), standaloneQuery: sanitizeForTerminal(result.standaloneQuery), session };
}

function sanitizedAsk(result: AskResult): AskResult {
  return { ...sanitizedTurn(result), answer: sanitizeForTerminal(result.answer), citations: result.citations.map((c) => ({ ...c, location: sanitizeForTerminal(c.location) })) };
}

function ok(text: string, structured: object): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured as Record<string, unknown> };
}

function failure(text: string, hint?: string): CallToolResult {
  // Secrets are removed on the way out, with everything else sent (redacting).
  return { content: [{ type: 'text', text: sanitizeForTerminal(hint ? `${text}\n${hint}` : text) }], isError: true };
}

/** A call cancelled (or whose client left) before its turn started (the providers were still loading): not run, nothing stored. */
function abandoned(): CallToolResult {
  return failure('Cancelled before it started; nothing was stored.');
}

/** The question or query trimmed; a UserError when it is empty or too long (checkAskable, as the CLI and the library check it). */
function requireText(value: string, name: string, hint = `Give the ${name} in words, e.g. "how do I rotate an API key?".`): string {
  checkAskable(value, name, hint);
  return value.trim();
}

function message(caught: unknown): string {
  const error = sqliteRuntimeError(caught) ?? caught;
  if (error instanceof UserError) return error.hint ? `${error.message} ${error.hint}` : error.message;
  return error instanceof Error ? error.message : String(error);
}

function mimeType(kind: string): string {
  return kind === 'markdown' ? 'text/markdown' : 'text/plain';
}

/** A session name from the client's name in the handshake: `claude-code`, or `mcp`. */
export function clientSessionBase(clientName: string | undefined): string {
  const base = (clientName ?? '')
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 40);
  return base || 'mcp';
}

/**
 * The session `name`, created now; or, when another process created it since it was
 * looked for (several servers started at once with one `--session`), that one.
 */
async function createOrFind(workspace: Workspace, name: string): Promise<SessionInfo> {
  try {
    return await createSession(workspace, { name });
  } catch (error) {
    const created = await findSession(workspace, name);
    if (created) return created;
    throw error;
  }
}

/** A new session named `<base>-<n>`, the first n not taken. */
async function createNumbered(workspace: Workspace, base: string): Promise<SessionInfo> {
  for (let n = 1; ; n++) {
    const name = `${base}-${n}`;
    if (await findSession(workspace, name)) continue;
    try {
      return await createSession(workspace, { name });
    } catch (error) {
      // Taken meanwhile by another process: try the next number. Anything else (a
      // database locked by another writer, a read-only file) fails the call now.
      if (!(await findSession(workspace, name))) throw error;
    }
  }
}
