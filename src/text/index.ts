// Text utilities: tokenizer, Porter stemmer, stopwords.
export { tokenize, identifierParts, type TokenizeOptions } from './tokenize.js';
export { ftsStem, stem } from './stem.js';
export { STOPWORDS, isStopword } from './stopwords.js';
