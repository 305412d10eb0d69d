// Reads the text of a PDF page by page with pdfjs-dist, so chunks of a PDF can
// cite page numbers. pdfjs is imported lazily: most ingests never see a PDF
// and it is a large module. A wide vertical gap between text lines becomes a
// blank line so the chunker can split at paragraphs.

import type { TextUnit } from './load.js';

/** Pages and metadata title of a parsed PDF. */
export interface LoadedPdf {
  /** Metadata title (Info dictionary or XMP dc:title), if any. */
  title?: string;
  /** One 'page' unit per page, in order, page numbers from 1; a page without text has empty text. */
  units: TextUnit[];
}

interface PositionedText {
  str: string;
  hasEOL: boolean;
  transform: number[];
  height: number;
}

/** Parses PDF bytes. Throws an Error (with the pdfjs error as cause) when the file cannot be parsed. */
export async function loadPdf(bytes: Uint8Array): Promise<LoadedPdf> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const task = pdfjs.getDocument({
    // pdfjs takes ownership of (and may detach) the buffer it is given, and refuses a
    // Node Buffer (what readFileSync returns): it gets a copy as a plain Uint8Array.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  try {
    const doc = await task.promise;
    const units: TextUnit[] = [];
    for (let pageNumber = 1; pageNumber <= doc.numPages; pageNumber++) {
      const page = await doc.getPage(pageNumber);
      const content = await page.getTextContent();
      units.push({ text: pageText(content.items as unknown[]), locator: 'page', page: pageNumber });
      page.cleanup();
    }
    let title: string | undefined;
    try {
      const meta = await doc.getMetadata();
      const info = meta.info as { Title?: unknown } | undefined;
      const candidates = [info?.Title, meta.metadata?.get('dc:title')];
      for (const candidate of candidates) {
        if (typeof candidate === 'string' && candidate.trim() !== '') {
          title = candidate.trim();
          break;
        }
      }
    } catch {
      // A broken metadata stream is not a reason to drop the document's text.
    }
    return { title, units };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`cannot parse PDF: ${reason}`, { cause: error });
  } finally {
    await task.destroy().catch(() => undefined);
  }
}

/** Joins text items in content order; ends of lines become newlines, large vertical gaps blank lines. */
function pageText(items: unknown[]): string {
  const parts: string[] = [];
  let lastY: number | undefined;
  let lastHeight = 0;
  let atLineStart = true;
  for (const raw of items) {
    const item = raw as Partial<PositionedText>;
    if (typeof item.str !== 'string') continue;
    const y = Array.isArray(item.transform) ? item.transform[5] : undefined;
    const height = typeof item.height === 'number' ? item.height : 0;
    if (atLineStart && item.str.trim() !== '' && lastY !== undefined && y !== undefined) {
      const lineHeight = Math.max(height, lastHeight);
      if (lineHeight > 0 && lastY - y > 1.8 * lineHeight) parts.push('\n');
    }
    parts.push(item.str);
    if (item.str.trim() !== '') {
      atLineStart = false;
      if (y !== undefined) lastY = y;
      lastHeight = height;
    }
    if (item.hasEOL) {
      parts.push('\n');
      atLineStart = true;
    }
  }
  const lines: string[] = [];
  for (const line of parts.join('').split('\n')) {
    const trimmed = line.trimEnd();
    if (trimmed === '' && (lines.length === 0 || lines[lines.length - 1] === '')) continue;
    lines.push(trimmed);
  }
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines.join('\n');
}
