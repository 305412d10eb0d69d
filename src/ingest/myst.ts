// MyST, the Markdown that Sphinx reads (pip's docs and many Python projects), out
// of the indexed text as the rendered page shows it, line for line like rst.ts:
// a directive fence (```{note}, :::{warning}) reads as its word ("Note:") with its
// content as prose, ```{versionadded} 22.3 as "New in version 22.3.", a toctree's
// entries as the pages' names, ```{code-block} python as a ```python fence, `meta`
// or `index` as nothing, and a directive it does not know (```{pip-cli}) as a plain
// fence around its content; a directive's options (`:caption: Project`) go, and so
// do target lines (`(requirements-file-format)=`). Roles keep their text
// ({ref}`Requirement Specifiers <req>` reads "Requirement Specifiers"). Pure; linear.

import { directiveLine, knownDirective, roleText, tocEntry } from './rst.js';

/** An opening fence of a directive: three or more backquotes or colons, then `{name}` and an argument. */
const OPEN = /^(\s*)(`{3,}|:{3,})\{([A-Za-z][\w.:+-]*)\}[ \t]*(.*?)[ \t]*$/;
/** A role: {name}`text`. */
const ROLE = /\{[A-Za-z][\w.:+-]*\}`([^`\n]+)`/g;
/** A target line: (name)= */
const TARGET = /^\s*\([^()\s]+\)=\s*$/;
/** A directive option at the top of its content: `:caption: Project`, `:hidden:`. */
const OPTION = /^\s*:[\w-]+:(?:\s.*)?$/;
/** Directives whose content is code, kept as a fence of that language. */
const CODE = new Set(['code-block', 'code', 'sourcecode', 'code-cell']);
/** Directives of which nothing is shown. */
const HIDDEN = new Set(['meta', 'index', 'raw', 'contents']);

/** Whether `text` holds MyST markup worth reading: a directive fence, a role or a target line. */
export function hasMyst(text: string): boolean {
  // [ \t]*, not \s*: from every newline of a run of blank lines \s* would scan the rest of the run (quadratic).
  return /(^|\n)[ \t]*(`{3,}|:{3,})\{[A-Za-z]|\{[A-Za-z][\w.:+-]*\}`|(^|\n)[ \t]*\([^()\s]+\)=[ \t]*(\r?\n|$)/.test(text);
}

/** The text with MyST directives, roles and targets replaced by what they show, line for line. */
export function mystToMarkdown(text: string): string {
  const lines = text.split('\n');
  /** The directive fences open around the current line, innermost last; `kept`: its fence stays, around code. */
  const open: { fence: string; name: string; options: boolean; kept: boolean }[] = [];
  /** A plain code fence open (```sh): its marker; nothing inside is markup. */
  let code: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const cr = raw.endsWith('\r') ? '\r' : '';
    let line = cr ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (code !== undefined) {
      if (trimmed.startsWith(code) && /^(`+|~+)$/.test(trimmed)) code = undefined;
      continue;
    }
    const inner = open.at(-1);
    if (inner && /^(`{3,}|:{3,})$/.test(trimmed) && trimmed[0] === inner.fence[0] && trimmed.length >= inner.fence.length) {
      open.pop();
      lines[i] = (inner.kept ? line.replace(/:/g, '`') : '') + cr;
      continue;
    }
    const directive = OPEN.exec(line);
    if (directive) {
      const [, indent = '', fence = '', rawName = '', argument = ''] = directive;
      const name = rawName.toLowerCase();
      const isCode = CODE.has(name);
      const known = isCode || HIDDEN.has(name) || name === 'toctree' || knownDirective(name);
      open.push({ fence, name, options: true, kept: !known || isCode });
      const backquotes = '`'.repeat(fence.length);
      if (isCode) line = `${indent}${backquotes}${argument}`;
      else if (!known) line = `${indent}${backquotes}`;
      else if (HIDDEN.has(name) || name === 'toctree') line = '';
      else line = directiveLine(indent, name, argument);
      lines[i] = line + cr;
      continue;
    }
    if (!inner?.kept && /^(`{3,}|~{3,})/.test(trimmed)) {
      code = /^(`+|~+)/.exec(trimmed)![1]!;
      continue;
    }
    if (inner) {
      if (inner.options && OPTION.test(line)) {
        lines[i] = cr;
        continue;
      }
      if (trimmed !== '') inner.options = false;
      if (HIDDEN.has(inner.name)) {
        lines[i] = cr;
        continue;
      }
      if (inner.name === 'toctree') {
        lines[i] = tocEntry(line) + cr;
        continue;
      }
      if (inner.kept) continue;
    }
    if (TARGET.test(line)) line = '';
    else if (line.includes('}`')) line = line.replace(ROLE, (_match, text: string) => roleText(text));
    lines[i] = line + cr;
  }
  return lines.join('\n');
}
