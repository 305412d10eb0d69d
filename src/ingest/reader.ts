// The version of how files become chunks (load.ts, chunk.ts, html.ts, rst.ts,
// rst-include.ts, cmake-module.ts, myst.ts, asciidoc.ts, text-headings.ts). Raise it
// when a change makes the same bytes give other chunks or titles: an ingest of a folder last read
// by an earlier version then reads every file again (the vectors of chunks whose
// text did not change are kept), since an unchanged file is otherwise never read again.
//
// 2: CMake module pages read with their module's block; reStructuredText comments,
//    references and toctrees; headings with nothing under them; HTML <title> as the title only.
// 3: the page's metadata fields and `meta`/`index` bodies dropped; redirect pages skipped;
//    HTML read in its declared character set when it is not UTF-8.
// 4: MyST Markdown (Sphinx's) read as it shows: directive fences, roles, targets.
// 5: a table cell that is a menu of links (an older site's sidebar) dropped from HTML.
// 6: an empty RST comment keeps the quote after it; a directive in a list item ends at the
//    item's text; MyST `only` and titled admonitions shown; a redirect needs a short delay and little text.
// 7: reStructuredText `include` fragments read in where they are included; substitutions replaced.
// 8: reStructuredText titles of two or three characters (`if`, `CC`) underlined as long as themselves.
// 9: a tab's label (`.. tab:: Unix/macOS`) reads "Unix/macOS:" over what the tab holds.
// 10: reStructuredText inline literals read as Markdown code (``X`` as `X`); a `replace`
//     definition written over several lines, or referring to another, read whole.
// 11: a long section's next chunk never opens on a line that goes on with the sentence
//     before it (hard-wrapped prose); with no sentence or item in the tail, no overlap.
// 12: nor on a word inside a sentence the previous chunk ends with (one-line paragraphs, HTML).
// 13: headings with nothing under them and no section after end the chunk before them.
// 14: GNU Texinfo's Next / Previous / Up navigation line and its "¶" permalinks dropped from HTML;
//     a reStructuredText hyperlink reference written over a line break read as its text.
// 15: AsciiDoc read as it shows, line for line: `.adoc`, `.asciidoc`, and a `.txt` that clearly is
//     one (git's manual pages); underlined titles as headings; git's manual-page footer dropped.
// 16: the argument of a reStructuredText directive with a hyphen in its name that this reader
//     does not know (a Sphinx extension's, `pip-command-usage:: uninstall`) not read as text.
// 17: reStructuredText literal blocks (after `::`, in a code directive) read as written; nested
//     `replace` definitions kept short.
// 18: an AsciiDoc link, cross reference, image, anchor or index term written over a line break
//     keeps the lines it spans, so what follows it stays on the line it is cited at; the space
//     that a construct showing nothing leaves at a line's start or end goes; a title that shows
//     nothing is named as written.

// 19: a file that is not UTF-8 and holds no UTF-8 sequence read as Windows-1252 (it was read
//     with replacement characters: "Pokorn\uFFFD").

// 20: a GNU Texinfo manual's menus and tables of contents dropped from its HTML pages.
// 21: and its indexes (`@printindex` tables, the "Jump to" letters).
// 22: a paragraph, list, table or preformatted block opening inside an HTML heading ends
//     the heading (makeinfo's footnotes, "<h5>(1)</h3>", had their text as a heading).

export const READER_VERSION = 22;
