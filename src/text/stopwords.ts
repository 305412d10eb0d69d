// English stopwords: function words that carry little topical signal. Used to drop
// words from keyword queries and to down-weight (never drop) them in the offline embedder.
// The list is the classic short English list (SMART/Lucene-like core) plus question
// words common in chat ("how", "what", "can", "please"), since every chat turn has them.

const WORDS = `
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can cannot could did do does doing don't down during each few
for from further had has have having he her here hers herself him himself his how i if in into
is isn't it it's its itself just let me more most my myself no nor not now of off on once only
or other our ours ourselves out over own please same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up very was
we were what when where which while who whom why will with would you your yours yourself
yourselves also may might must shall tell know like get got using use used want need
s t d ll re ve don doesn didn isn aren wasn weren won wouldn couldn shouldn haven hasn
`;

/** Lower-case English stopwords, with apostrophe forms and the pieces a tokenizer splits them into. */
export const STOPWORDS: ReadonlySet<string> = new Set(WORDS.split(/\s+/).filter(Boolean));

/** True when `word` (already lower-case) is a stopword. */
export function isStopword(word: string): boolean {
  return STOPWORDS.has(word);
}
