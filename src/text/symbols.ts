// Names whose punctuation is their meaning. A word tokenizer (FTS5's unicode61, and
// tokenize.ts that follows it) drops `+` and `#`, so `C++` and `C#` are indexed and
// searched as `c`, and `.NET` as the word `net`: "How do I set the C++ standard?"
// finds pages about C. This spells such names as words, identically for the text
// that is indexed (both FTS5 columns, the in-memory keyword copy that re-reads them,
// the offline embedder) and for the queries run against it:
//
//   C++ -> cplusplus, g++ -> gplusplus, C++17 -> cplusplus 17
//   C# -> csharp, F# -> fsharp (one or two letters before the #)
//   .NET -> dotnet, ASP.NET -> ASP dotnet
//
// `node.js` and flags such as `--leak-check` need nothing: their parts are words, and
// the query builder keeps them together as one phrase ("node js", "leak check").
//
// The indexed text changes with this, so an index records which spelling its keyword
// side holds (INDEX_TEXT_VERSION, in the index fingerprint); see src/ingest/keywords.ts.

import { tokenize, type TokenizeOptions } from './tokenize.js';

/**
 * Version of what the keyword index holds for a chunk: 2 = names spelled by
 * {@link spellOutSymbols}; 3 = and camelCase names followed by their words; 4 = the
 * same, with plural acronyms and names such as IPv6 kept whole ({@link keywordText}).
 */
export const INDEX_TEXT_VERSION = 4;
/**
 * The oldest keyword text a search still reads: version 2 holds the terms the queries
 * are made of and lacks only the words of camelCase names, which the next ingest adds;
 * version 1 indexed C++ as `c` and is refused until then.
 */
export const SEARCHABLE_TEXT_VERSION = 2;

/** A cheap first look: most texts hold none of these. */
const MAY_HOLD = /[a-z0-9]\+\+|\b[a-z]{1,2}#|\.net\b/i;
/**
 * One pass over the text: `name++` (not `+++`), a one- or two-letter `name#` (not
 * `issue#12`, not `##`), `.net` standing alone, `.NET` (so written) after a name (ASP.NET).
 */
const SYMBOLS = /\b([a-z][a-z0-9]*)\+\+(?!\+)([\p{L}\p{N}])?|\b([a-z]{1,2})#(?![#\p{L}\p{N}])|(?<![\p{L}\p{N}_.])\.net\b|(?<=[\p{L}\p{N}])\.NET\b/giu;

/** `text` with C++, C#, F#, .NET (and the like) spelled as words; unchanged when it holds none. */
export function spellOutSymbols(text: string): string {
  if (!MAY_HOLD.test(text)) return text;
  return text.replace(SYMBOLS, (match: string, plus?: string, next?: string, sharp?: string, offset?: number) => {
    if (plus !== undefined) return `${plus}plusplus${next ? ` ${next}` : ''}`;
    if (sharp !== undefined) return `${sharp}sharp`;
    // .net standing alone; after a name only as written .NET (ASP.NET, not example.net)
    const afterName = offset !== undefined && offset > 0 && /[\p{L}\p{N}]/u.test(text[offset - 1]!);
    if (!afterName) return 'dotnet';
    return match === '.NET' ? ' dotnet' : match;
  });
}

/**
 * The words of `text` as the index holds them: `C++` as `cplusplus` and so on, then
 * {@link tokenize}. Every query-side reading of text that is compared with indexed
 * text (keyword queries, rescoring, the offline embedder, the extractive answer)
 * goes through this one function.
 */
export function indexedTokens(text: string, options?: TokenizeOptions): string[] {
  return tokenize(spellOutSymbols(text), options);
}

/** A camelCase or PascalCase name with at least two words: `createServer`, `EventEmitter`, `parseHTTPResponse`. */
const CAMEL_CASE = /\b[A-Za-z][A-Za-z0-9]*?[a-z0-9][A-Z][A-Za-z0-9]*/g;

/**
 * The text the keyword index holds for `text`: {@link spellOutSymbols}, and every
 * camelCase name followed by its words (`http.createServer()` -> `http.createServer
 * create Server()`), so that "How do I create an HTTP server?" finds the section of
 * `http.createServer` and a query that types the name still finds it whole. Only the
 * keyword side: the embedded text and the answer read the text as written.
 */
export function keywordText(text: string): string {
  const spelled = spellOutSymbols(text);
  if (!/[a-z0-9][A-Z]/.test(spelled)) return spelled;
  return spelled.replace(CAMEL_CASE, (name: string) => {
    // getURLs -> get URLs (a plural acronym stays whole), IPv6Address -> IPv6 Address, XMLHttpRequest -> XML Http Request.
    const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]{2,})([A-Z](?!s\b)[a-z])/g, '$1 $2');
    return words === name ? name : `${name} ${words}`;
  });
}
