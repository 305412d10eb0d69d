// Which files are documents, and of what kind, from the name alone: the walk asks
// this of every file, so it lives apart from the loaders (a re-ingest that finds
// nothing changed never loads them).

import { orList } from '../util/words.js';

export type DocumentKind = 'markdown' | 'text' | 'html' | 'pdf';

const KIND_BY_EXTENSION = new Map<string, DocumentKind>([
  ['md', 'markdown'],
  ['mdx', 'markdown'],
  ['txt', 'text'],
  ['rst', 'text'],
  ['adoc', 'text'],
  ['asciidoc', 'text'],
  ['info', 'text'],
  ['html', 'html'],
  ['htm', 'html'],
  ['pdf', 'pdf'],
]);

/** What a person is told each kind is called. */
const KIND_NAMES: Record<DocumentKind, string> = { markdown: 'Markdown', text: 'text', html: 'HTML', pdf: 'PDF' };

/**
 * The kinds of file that `byExtension` reads, as a person is told them: each kind with
 * its extensions, in the map's order, and the files it reads by name (`byName`):
 * `Markdown (.md, .mdx), text (.txt; README, NEWS and the like) or PDF (.pdf)`.
 */
export function describeKinds(byExtension: ReadonlyMap<string, DocumentKind>, byName: Partial<Record<DocumentKind, string>> = {}): string {
  const extensions = new Map<DocumentKind, string[]>();
  for (const [extension, kind] of byExtension) extensions.set(kind, [...(extensions.get(kind) ?? []), `.${extension}`]);
  return orList([...extensions].map(([kind, names]) => `${KIND_NAMES[kind]} (${names.join(', ')}${byName[kind] ? `; ${byName[kind]}` : ''})`));
}

/**
 * What a README's suffix is when the file is a program, an image, an archive or an office
 * document, not a README for one platform or tool (`README.php`, `README.png`, `README.SH`; any case).
 */
const NOT_A_README_SUFFIX = new Set(
  `sh bash zsh fish py pyc pl pm rb js mjs cjs ts tsx jsx vue svelte json yml yaml toml xml sql bat cmd ps1 c h cc cpp hpp
  cs java kt kts scala go rs swift php lua tcl r wasm exe dll so o a jar class bin deb rpm apk msi dmg iso png jpg jpeg gif
  svg ico webp bmp tiff mp3 mp4 wav ogg flac avi mov mkv webm ttf otf woff woff2 zip tar bz2 xz tgz rar 7z zst lock
  doc docx odt rtf xls xlsx ods ppt pptx odp`.split(/\s+/),
);

/**
 * A project's plain-text files named by custom, not by an extension, as projects
 * write them: `README`, `INSTALL`, `NEWS`, `ChangeLog`, `AUTHORS`, ... in capitals (or
 * capitalised: `Readme`, `Changes`), also as Debian ships them (`README.Debian`,
 * `NEWS.gz`, `changelog.Debian.gz`), and a README for one platform or tool
 * (`README.emacs`, `README.win32`; not a script, `README.sh`). Read as text. In small letters only `readme` and
 * `changelog`: an `install` or a `todo` is as likely a script. Licences (`COPYING`,
 * Debian's `copyright`) are not read: the same text in every package.
 */
const TEXT_BY_NAME = /^(?:(?:README|Readme|readme)(?:\.([A-Za-z][A-Za-z0-9]*))?|(?:INSTALL|Install|NEWS|News|CHANGES|Changes|CHANGELOG|ChangeLog|Changelog|changelog|FAQ|USAGE|HACKING|CONTRIBUTING|TODO|BUGS|AUTHORS|THANKS|CREDITS|FEATURES)(?:\.Debian|\.source)?)$/;

/** Whether a file's name makes it a text file of TEXT_BY_NAME. */
function isTextByName(name: string): boolean {
  const match = TEXT_BY_NAME.exec(name);
  return match !== null && (match[1] === undefined || !NOT_A_README_SUFFIX.has(match[1].toLowerCase()));
}

/** The kinds of file read, as a person is told them: every extension of KIND_BY_EXTENSION, and the names of TEXT_BY_NAME (a few, "and the like"). */
export const READ_KINDS = describeKinds(KIND_BY_EXTENSION, { text: 'README, NEWS, ChangeLog and the like' });

const SLASH = 0x2f;
const BACKSLASH = 0x5c;

/**
 * Maps a file name to its kind by extension (case-insensitive): .md .mdx -> markdown;
 * .txt .rst .adoc .asciidoc .info (and .info-1, .info-2: a split manual's parts) -> text; .html .htm -> html; .pdf -> pdf; a name of
 * TEXT_BY_NAME (`README`, `NEWS`) -> text; else undefined. A gzip-compressed one
 * (`user_guide.rst.gz`, `NEWS.gz`, as Debian ships documentation) is of the kind of
 * the name it has without `.gz`.
 */
export function kindOf(path: string): DocumentKind | undefined {
  const extension = documentExtension(path);
  const kind = extension === undefined ? undefined : KIND_BY_EXTENSION.get(extension);
  if (kind !== undefined) return kind;
  return isTextByName(baseName(isGzipped(path) ? path.slice(0, -3) : path)) ? 'text' : undefined;
}

/** The last part of a path, after its last `/` or `\\`. */
function baseName(path: string): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return path.slice(slash + 1);
}

/** Whether the file is gzip-compressed by its name (`.gz`): read decompressed. */
export function isGzipped(path: string): boolean {
  return extensionOf(path) === 'gz';
}

/** The extension that says what a document is: `rst` for `guide.rst` and for `guide.rst.gz`; `info` for a part of a split Info manual, `find.info-2.gz`. */
export function documentExtension(path: string): string | undefined {
  const extension = isGzipped(path) ? extensionOf(path.slice(0, -3)) : extensionOf(path);
  return extension !== undefined && /^info-\d+$/.test(extension) ? 'info' : extension;
}

/** A file name's extension in lower case (`docs/guide.RST` -> `rst`); undefined for none, or a name such as `.md`. */
export function extensionOf(path: string): string | undefined {
  // One search from the end, as the walk asks this of every file: a dot in a
  // folder name leaves a separator in the "extension", which matches no kind.
  const dot = path.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const before = path.charCodeAt(dot - 1);
  if (before === SLASH || before === BACKSLASH) return undefined;
  return path.slice(dot + 1).toLowerCase();
}
