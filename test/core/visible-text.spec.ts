import { describe, expect, it } from '@jest/globals';
import { visibleText } from '../../lib/core/index.js';
import { HOSTILE_TEXT, RAW_CONTROL } from '../bad-input/hostile.js';

const SAMPLES = Object.entries(HOSTILE_TEXT);

describe('issue 19 item 7: visibleText renders control characters visibly', () => {
  it.each(SAMPLES)('leaves no active character of %s, and is idempotent', (_name, text) => {
    const shown = visibleText(text);
    expect(shown).not.toMatch(RAW_CONTROL);
    expect(shown).not.toMatch(/[\n\t]|\p{Surrogate}/u);
    expect(visibleText(shown)).toBe(shown);
  });

  it('writes each escape in a form a reader recognises', () => {
    expect(visibleText(HOSTILE_TEXT.colour)).toBe('\\x1b[31mred\\x1b[0m');
    expect(visibleText(HOSTILE_TEXT.carriageReturn)).toBe('real error\\rforged line');
    expect(visibleText('a\tb\nc')).toBe('a\\tb\\nc');
    expect(visibleText(HOSTILE_TEXT.csi8bit)).toBe('\\x9b31mred');
    expect(visibleText(HOSTILE_TEXT.bidi)).toBe('invoice \\u202egnp.exe');
    expect(visibleText(HOSTILE_TEXT.separator)).toBe('one\\u2028two');
    expect(visibleText(HOSTILE_TEXT.surrogate)).toBe('a\\ud800b');
    expect(visibleText(HOSTILE_TEXT.del)).toBe('a\\x7fb');
  });

  it('keeps ordinary text as it is, other scripts and emoji included', () => {
    for (const text of ['card declined', 'Überweisung fehlgeschlagen', '支払いに失敗しました', 'ok 👍🏽', 'C:\\path\\x1b', '']) {
      expect(visibleText(text)).toBe(text);
    }
  });

  it('keeps line feeds only when asked, and escapes every other control even then', () => {
    expect(visibleText('Error: x\n    at y\r\u001b[2K', { keepNewlines: true })).toBe('Error: x\n    at y\\r\\x1b[2K');
  });

  it('cuts after rendering, on a character boundary, never inside an escape', () => {
    // 9 visible characters, then an ESC whose escape would straddle a bound of 12.
    const text = `abcdefghi\u001b[31mred`;
    expect(visibleText(text, { maxLength: 12 })).toBe('abcdefghi…');
    expect(visibleText(text, { maxLength: 13 })).toBe('abcdefghi…');
    expect(visibleText(text, { maxLength: 14 })).toBe('abcdefghi\\x1b…');
    for (let max = 1; max <= 24; max++) {
      const shown = visibleText(text, { maxLength: max });
      expect([...shown].length).toBeLessThanOrEqual(max);
      expect(shown).not.toMatch(RAW_CONTROL);
      // What survives the cut is a prefix of the uncut rendering.
      expect(visibleText(text).startsWith(shown.replace(/…$/, ''))).toBe(true);
    }
    // An astral character counts as one and is never split into a lone surrogate.
    expect(visibleText('👍👍👍👍', { maxLength: 3 })).toBe('👍👍…');
    expect(visibleText('short', { maxLength: 5 })).toBe('short');
  });

  it('renders a huge text only as far as the bound', () => {
    expect(visibleText('\u001b'.repeat(5_000_000), { maxLength: 200 })).toBe(`${'\\x1b'.repeat(49)}…`);
  });
});
