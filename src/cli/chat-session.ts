// Builds what a chat turn needs from the resolved configuration, and runs one
// turn with its output: shared by `chat` (REPL and piped) and `ask`.

import type { ResolvedConfig } from '../config/index.js';
import type { ChunkLocation, RewritePolicy } from '../domain/index.js';
import { runTurn, type TurnContext } from '../chat/turn.js';
import { createChatModel, createEmbedder, createRewriteModel } from '../providers/index.js';
import type { SearchAccelerators } from '../retrieve/memory/accelerators.js';
import { formatLocation, Retriever } from '../retrieve/search.js';
import { createRewriter } from '../rewrite/index.js';
import type { Db } from '../store/db.js';
import { embedderConfig } from './context.js';
import { toJson, type Output } from './output.js';
import { TurnView } from './turn-view.js';

/** `accelerators`: the in-memory copies of `db`'s indexes, when the caller made them (and closes them). */
export async function createTurnContext(settings: ResolvedConfig, db: Db, sessionId: string, accelerators?: SearchAccelerators): Promise<TurnContext> {
  const { config } = settings;
  const rewriteModel = await createRewriteModel(config);
  return {
    db,
    config,
    sessionId,
    retriever: new Retriever(db, await createEmbedder(embedderConfig(settings, db).config), config.search, { accelerators }),
    rewriter: createRewriter(rewriteModel),
    answerModel: await createChatModel(config),
    topicModel: config.topics?.extractor === 'local' ? undefined : rewriteModel,
  };
}

export interface TurnSettings {
  k?: number;
  rewritePolicy?: RewritePolicy;
  json: boolean;
  /** The answer and its citations only. */
  quiet?: boolean;
  signal?: AbortSignal;
}

/** Runs one turn, rendering (or printing NDJSON); returns the final `done` event's status and the retrieved chunks. */
export async function runTurnWithOutput(
  context: TurnContext,
  question: string,
  output: Output,
  settings: TurnSettings,
): Promise<{ status: string; chunks: (ChunkLocation & { text: string; heading: string })[] }> {
  // Answers wrap at the terminal's width; piped output is left as it comes.
  const wrapWidth = output.isTTY && process.stdout.columns ? process.stdout.columns - 1 : undefined;
  const view = new TurnView(output, { showChunks: true, quiet: settings.quiet, wrapWidth });
  let status = 'failed';
  let chunks: Awaited<ReturnType<typeof runTurnWithOutput>>['chunks'] = [];
  for await (const event of runTurn(context, question, { signal: settings.signal, k: settings.k, rewritePolicy: settings.rewritePolicy })) {
    if (settings.json) {
      // Retrieved chunks carry their `path:lines` location, as in `search --json`.
      const printed = event.type === 'retrieval' ? { ...event, chunks: event.chunks.map((chunk) => ({ ...chunk, location: formatLocation(chunk) })) } : event;
      output.write(toJson(printed) + '\n');
    }
    else view.render(event);
    if (event.type === 'retrieval') chunks = event.chunks;
    if (event.type === 'done') status = event.status;
  }
  return { status, chunks };
}
