// The parts of a typed question: where its clauses and sentences break, and which of
// them asks. A question that sets a scene before it asks ("Every npm install ends with
// a line about funding. How do I see which packages they are?") is read by the part
// that asks, by the answerer (what must be covered, whether it is a how-to) and by the
// conversation's topics (its terms lead the context a later follow-up is given).

/** Abbreviations a full stop ends without ending the sentence: "i.e.", "e.g.", "cf.", "vs.", "viz." (the stop itself left out; any case). */
export const ABBREVIATION = String.raw`\b(?:[iI]\.[eE]|[eE]\.[gG]|[cC][fF]|[vV][sS]|[vV][iI][zZ])`;

/** At least three words (tokens as the tokenizer reads them), read in one pass: a pattern took time quadratic in one long word. */
export const THREE_WORDS = {
  test(text: string): boolean {
    let words = 0;
    let inWord = false;
    for (const char of text) {
      const wordChar = WORD_CHAR.test(char);
      if (wordChar && !inWord && ++words === 3) return true;
      inWord = wordChar;
    }
    return false;
  },
};

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

/** Where a clause or sentence of a question ends and another begins: `;`, or `.`, `!`, `?` (not after an ABBREVIATION) before a space. */
const CLAUSE_BREAK = new RegExp(String.raw`(?:;|(?<!${ABBREVIATION})[.!?])\s+(?=\S)`, 'g');

/**
 * The part of `question` that asks, when a scene is set around it ("npm install fails
 * with an ERESOLVE conflict; how do I make it ignore peer dependencies?"): its last
 * clause or sentence that ends with "?" and holds three words or more, when the
 * question has several parts; else the whole question.
 */
export function askingClause(question: string): string {
  let start = 0;
  let asking: string | undefined;
  const consider = (end: number) => {
    const part = question.slice(start, end).trim();
    if (part.endsWith('?') && THREE_WORDS.test(part)) asking = part;
  };
  for (const match of question.matchAll(CLAUSE_BREAK)) {
    consider(match.index + 1);
    start = match.index + match[0].length;
  }
  if (start === 0) return question;
  consider(question.length);
  return asking ?? question;
}
