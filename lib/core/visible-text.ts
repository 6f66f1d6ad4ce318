/**
 * Characters that act on a terminal or a log viewer instead of showing: C0 controls, DEL, C1
 * controls (U+0080–U+009F, which include the 8-bit CSI and OSC), the bidirectional overrides,
 * embeddings, isolates and marks (which reorder what a reader sees), and the Unicode line and
 * paragraph separators (which some viewers break lines at).
 */
const ACTIVE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|\p{Surrogate}/u;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** Options of {@link visibleText}. */
export interface VisibleTextOptions {
  /**
   * At most this many characters of rendered text (an escape counts as its visible length). Text
   * that is cut ends in `…`, and an escape is never cut in two. Default: no bound.
   */
  readonly maxLength?: number;
  /** Keep line feeds as line breaks (for a multi-line field on a terminal). Default false: `\n`. */
  readonly keepNewlines?: boolean;
}

/** The visible form of one code point: itself, or its escape. */
function render(char: string, keepNewlines: boolean): string {
  if (!ACTIVE.test(char) || (keepNewlines && char === '\n')) return char;
  const named = NAMED[char];
  if (named) return named;
  const code = char.codePointAt(0)!;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Text that came from a job (an error, a name, an output) as it may be shown to a person: every
 * character in {@link ACTIVE} is replaced by a visible escape (`\n`, `\r`, `\t`, `\x1b`, `\x9b`,
 * `\u202e`; a lone surrogate as `\ud800`), so a terminal or log viewer never acts on it, then the
 * result is cut to `maxLength` on a character boundary.
 *
 * Backslashes are left as they are, so the function is idempotent: rendering rendered text changes
 * nothing, and layers can each apply it safely. The price is that a literal `\x1b` in the text
 * looks like an escaped ESC; the form is for reading, and exact text is what JSON output is for.
 */
export function visibleText(text: string, options: VisibleTextOptions = {}): string {
  const { maxLength = Number.POSITIVE_INFINITY, keepNewlines = false } = options;
  if (text.length <= maxLength && !ACTIVE.test(text)) return text;
  let out = '';
  let length = 0;
  // Ends of the rendered pieces that still fit with room for the ellipsis, to cut back to.
  let fitEnd = 0;
  for (const char of text) {
    const piece = render(char, keepNewlines);
    const pieceLength = piece === char ? 1 : piece.length;
    if (length + pieceLength > maxLength) return `${out.slice(0, fitEnd)}…`;
    out += piece;
    length += pieceLength;
    if (length <= maxLength - 1) fitEnd = out.length;
  }
  return out;
}
