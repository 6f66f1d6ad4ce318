/**
 * Cuts `text` to at most `maxBytes` UTF-8 bytes without splitting a character, so a long error
 * never leaves a broken code point behind.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * Error text as every store can keep it: the NUL character and lone UTF-16 surrogates (which
 * PostgreSQL's text cannot hold) become U+FFFD. Error detail is the library's to keep, not the
 * caller's to get back, so it is repaired rather than refused: a failure must always be recordable.
 */
export function storableText(text: string): string {
  return text.replace(/\u0000|\p{Surrogate}/gu, '\uFFFD');
}
