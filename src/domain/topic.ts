/** Where a topic was last seen: the user's question (strongest), the carried-over rewrite, or the answer. */
export type TopicSource = 'question' | 'rewrite' | 'answer';

/** A term or noun phrase the conversation is about, tracked across turns. */
export interface Topic {
  /** Surface form as last seen, e.g. `API key`, `ORBIT_TOKEN`, `orbit login`. */
  term: string;
  /** Salience: grows when the term recurs, decays every turn it does not. */
  weight: number;
  /** Ordinal of the turn that last mentioned it. */
  lastTurn: number;
  /** Where it was last seen. */
  source?: TopicSource;
}
