// A minimal valid PDF written by hand, for the tests that load, ingest and cite PDFs.

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/**
 * A minimal valid PDF: one page per string, each drawing its lines in Helvetica,
 * an Info dictionary with a title, and a cross-reference table whose byte
 * offsets are computed as the file is written. Text must be ASCII without
 * parentheses or backslashes (no escaping is done).
 */
export function makePdf(pages: string[][], title: string): Uint8Array {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + 2 * i);
  const infoId = 4 + 2 * pages.length;
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pages.forEach((lines, i) => {
    const ops = lines.map((line, j) => `${j === 0 ? '72 720 Td' : '0 -16 Td'} (${line}) Tj`).join('\n');
    const stream = `BT\n/F1 12 Tf\n${ops}\nET`;
    objects[pageIds[i]] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[i] + 1} 0 R >>`;
    objects[pageIds[i] + 1] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  objects[infoId] = `<< /Title (${title}) >>`;

  let file = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = file.length; // ASCII only, so string length is the byte offset
    file += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xrefOffset = file.length;
  file += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) file += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  file += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info ${infoId} 0 R >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  return utf8(file);
}

