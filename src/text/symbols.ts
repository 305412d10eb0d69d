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
// side holds (INDEX_TEXT_VERSION, in the index fingerprint); see ingest.ts.

/** Version of what the keyword index holds for a chunk: 2 = names spelled by {@link spellOutSymbols}. */
export const INDEX_TEXT_VERSION = 2;

const MAY_HOLD = /\+\+|#|\.net/i;
const PLUS_PLUS = /\b([a-z][a-z0-9]*)\+\+(?!\+)(?=([\p{L}\p{N}])?)/giu;
const SHARP = /\b([a-z]{1,2})#(?![#\p{L}\p{N}])/giu;
const DOT_NET_ALONE = /(?<![\p{L}\p{N}_.])\.net\b/giu;
const DOT_NET_SUFFIX = /(?<=[\p{L}\p{N}])\.NET\b/gu;

/** `text` with C++, C#, F#, .NET (and the like) spelled as words; unchanged when it holds none. */
export function spellOutSymbols(text: string): string {
  if (!MAY_HOLD.test(text)) return text;
  return text
    .replace(PLUS_PLUS, (_, name: string, next: string | undefined) => `${name}plusplus${next ? ' ' : ''}`)
    .replace(SHARP, '$1sharp')
    .replace(DOT_NET_ALONE, 'dotnet')
    .replace(DOT_NET_SUFFIX, ' dotnet');
}
