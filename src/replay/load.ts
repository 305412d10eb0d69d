// A stored session as replay shows it: each turn's question, the standalone query
// with the rewrite decision, the chunks exactly as they were retrieved (with where
// they stand in today's index), the answer, status, prompts and judgment. Reads only.

import type { SessionStore } from '../chat/session-store.js';
import { turnsPhrase, type SessionInfo, type StoredTurn, type StoredTurnChunk } from '../store/sessions.js';
import type { TurnJudgment } from '../store/judgments.js';
import { UserError } from '../util/errors.js';
import { IndexStateLookup, type ChunkPlace } from './index-state.js';

/** A stored chunk, with where it stands in the index now (`indexState`) and the name its document has now if another (`indexedAs`). */
export interface ReplayChunk extends StoredTurnChunk, ChunkPlace {}

export interface ReplayTurn extends StoredTurn {
  /** The chunks the turn retrieved, by rank. */
  chunks: ReplayChunk[];
  /** The k the turn asked for (its stored settings; else the number of chunks it got). */
  k: number | null;
  /** Which documents a person judged relevant to the question, if the turn was judged. */
  judgment: TurnJudgment | null;
}

export interface ReplaySession {
  session: SessionInfo;
  /** Ordinal of the session's last turn (0 without turns), whatever `turn` selected. */
  lastOrdinal: number;
  /** How many turns the session holds, whatever `turn` selected (fewer than lastOrdinal once `prune` removed its first). */
  turnCount: number;
  turns: ReplayTurn[];
}

/** The k a stored turn used. */
export function storedK(turn: StoredTurn, chunks: number): number | null {
  const k = turn.settings?.k;
  if (typeof k === 'number' && Number.isInteger(k) && k > 0) return k;
  return chunks > 0 ? chunks : null;
}

/** Loads `session` for replay; with `turn`, only that turn (a UserError when it does not exist). */
export async function loadReplay(store: SessionStore, session: SessionInfo, options: { turn?: number } = {}): Promise<ReplaySession> {
  const all = await store.turns(session.id);
  const lastOrdinal = all.at(-1)?.ordinal ?? 0;
  let selected = all;
  if (options.turn !== undefined) {
    selected = all.filter((turn) => turn.ordinal === options.turn);
    if (selected.length === 0) {
      throw new UserError(
        lastOrdinal === 0
          ? `Session ${session.name ?? session.id} has no turns.`
          : `Session ${session.name ?? session.id} has ${turnsPhrase(all.map((turn) => turn.ordinal))}; there is no turn ${options.turn}.`,
        { exitCode: 2 },
      );
    }
  }
  // One query after another: a Postgres connection answers one at a time.
  const stored: StoredTurnChunk[][] = [];
  for (const turn of selected) stored.push(await store.turnChunks(turn.id));
  const index = await store.index(stored.flat().map((chunk) => chunk.textHash));
  const lookup = new IndexStateLookup(index);
  const judgments = await store.judgments(session.id);
  const turns = selected.map((turn, i): ReplayTurn => {
    const chunks = stored[i]!.map((chunk) => ({ ...chunk, ...lookup.locate(chunk) }));
    return { ...turn, chunks, k: storedK(turn, chunks.length), judgment: judgments.get(turn.id) ?? null };
  });
  return { session, lastOrdinal, turnCount: all.length, turns };
}
