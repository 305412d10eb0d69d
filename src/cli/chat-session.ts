// Runs one turn of a chat with its output: shared by `chat` (REPL and piped) and `ask`.

import type { Chat, Workspace } from '../app/index.js';
import { hasChunksIn } from '../app/stats.js';
import type { ChunkLocation, RewritePolicy } from '../domain/index.js';
import { formatLocation } from '../retrieve/search.js';
import { toJson, type Output } from './output.js';
import { TurnView } from './turn-view.js';
import { SecretStream } from '../util/secrets.js';

/** Said before a question is asked over an index with nothing in it: every search would come back empty. */
export async function warnWhenNothingIngested(workspace: Workspace, output: Output): Promise<void> {
  if (await hasChunksIn(workspace)) return;
  output.err(output.errColor.yellow(`Nothing is ingested in ${workspace.config.db} yet: every question will find nothing.`));
  output.err(output.errColor.dim('Run `ragline ingest <folder>` first (or choose another --db).'));
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
  chat: Chat,
  question: string,
  output: Output,
  settings: TurnSettings,
): Promise<{ status: string; chunks: (ChunkLocation & { text: string; heading: string })[] }> {
  // Answers wrap at the terminal's width; piped output is left as it comes.
  const wrapWidth = output.isTTY && output.columns ? output.columns - 1 : undefined;
  const view = new TurnView(output, { showChunks: true, quiet: settings.quiet, wrapWidth });
  let status = 'failed';
  let chunks: Awaited<ReturnType<typeof runTurnWithOutput>>['chunks'] = [];
  // A secret split across token events is redacted whole (each event is redacted as it is written, too).
  const tokens = new SecretStream();
  for await (const event of chat.ask(question, { signal: settings.signal, k: settings.k, rewritePolicy: settings.rewritePolicy })) {
    if (settings.json) {
      if (event.type === 'token') {
        const text = tokens.push(event.text);
        if (text) output.write(toJson({ ...event, text }) + '\n');
      } else {
        const rest = tokens.flush();
        if (rest) output.write(toJson({ type: 'token', text: rest }) + '\n');
        // Retrieved chunks carry their `path:lines` location, as in `search --json`.
        const printed = event.type === 'retrieval' ? { ...event, chunks: event.chunks.map((chunk) => ({ ...chunk, location: formatLocation(chunk) })) } : event;
        output.write(toJson(printed) + '\n');
      }
    }
    else view.render(event);
    if (event.type === 'retrieval') chunks = event.chunks;
    if (event.type === 'done') status = event.status;
  }
  return { status, chunks };
}
