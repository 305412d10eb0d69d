// Wraps streamed answer text at the terminal's width, at spaces, as it arrives: a
// word is written once it is complete (the next space or newline, or the end),
// never cut; a line's own indentation and a list item's marker ("- ", "1. ") give
// its continuation lines their indent. Only used on a terminal.

export class StreamWrapper {
  private column = 0;
  /** Indent of the current line's continuation lines. */
  private indent = 0;
  private word = '';
  private spaces = '';
  /** Words written on the current (logical) line. */
  private words = 0;

  constructor(
    private readonly width: number,
    private readonly write: (text: string) => void,
  ) {}

  push(text: string): void {
    for (const char of text) {
      if (char === '\n') {
        this.endWord();
        this.spaces = '';
        this.write('\n');
        this.column = 0;
        this.indent = 0;
        this.words = 0;
      } else if (char === ' ' || char === '\t') {
        this.endWord();
        this.spaces += char;
      } else {
        this.word += char;
      }
    }
  }

  /** Writes the word in progress (at the end of the answer, or before something else is printed). */
  flush(): void {
    this.endWord();
    this.spaces = '';
  }

  private endWord(): void {
    if (this.word === '') return;
    const word = this.word;
    this.word = '';
    if (this.column > this.indent && this.column + this.spaces.length + word.length > this.width) {
      this.write('\n' + ' '.repeat(this.indent));
      this.column = this.indent;
      this.spaces = '';
    }
    this.write(this.spaces + word);
    this.column += this.spaces.length + word.length;
    if (this.words === 0) {
      // The first word: the line's indentation, plus a list marker's width.
      const lead = this.spaces.length;
      this.indent = Math.min(lead + (/^([-*•]|\d+[.)])$/.test(word) ? word.length + 1 : 0), Math.floor(this.width / 2));
    }
    this.spaces = '';
    this.words++;
  }
}
