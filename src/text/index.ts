// Text utilities: tokenizers, Porter stemmer, stopwords.
export { ABBREVIATION, askingClause, THREE_WORDS } from './clauses.js';
export { tokenize, identifierParts, type TokenizeOptions } from './tokenize.js';
export { unicode61Tokens } from './unicode61.js';
export { ftsStem, stem } from './stem.js';
export { STOPWORDS, isStopword } from './stopwords.js';
export { INDEX_TEXT_VERSION, indexedTokens, keywordText, SEARCHABLE_TEXT_VERSION, spellOutSymbols } from './symbols.js';
