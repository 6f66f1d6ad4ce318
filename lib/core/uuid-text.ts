/**
 * UUID text as the Rust scheduler reads it (its `uuid` crate's `Uuid::parse_str`): any 128-bit
 * value, of any version and variant, written as 32 hex digits in one of four forms, in either case:
 *
 * - hyphenated, `67e55044-10b1-426f-9247-bb680e5fe0c8`;
 * - simple, `67e5504410b1426f9247bb680e5fe0c8`;
 * - braced, `{67e55044-10b1-426f-9247-bb680e5fe0c8}`;
 * - URN, `urn:uuid:67e55044-10b1-426f-9247-bb680e5fe0c8` (the prefix in lower case).
 *
 * The version and variant bits are not checked: ids minted by other systems (the nil-like
 * `00000000-0000-0000-0000-000000000001`, version 0, the NCS or Microsoft variants) name a job or
 * schedule as well as a UUIDv7 does.
 */
const HYPHENATED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SIMPLE = /^[0-9a-fA-F]{32}$/;
const URN_PREFIX = 'urn:uuid:';

/**
 * The canonical form of UUID text: lower-case and hyphenated, as every store keeps ids and
 * compares them. Null when `text` is none of the forms above.
 */
export function canonicalUuid(text: string): string | null {
  switch (text.length) {
    case 36:
      return HYPHENATED.test(text) ? text.toLowerCase() : null;
    case 32:
      if (!SIMPLE.test(text)) return null;
      text = text.toLowerCase();
      return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
    case 38:
      return text.startsWith('{') && text.endsWith('}') ? canonicalHyphenated(text.slice(1, 37)) : null;
    case 45:
      return text.startsWith(URN_PREFIX) ? canonicalHyphenated(text.slice(URN_PREFIX.length)) : null;
    default:
      return null;
  }
}

function canonicalHyphenated(text: string): string | null {
  return HYPHENATED.test(text) ? text.toLowerCase() : null;
}

/** The 16 bytes of a canonical UUID (as {@link canonicalUuid} returns it), most significant first. */
export function uuidBytes(canonical: string): Uint8Array {
  return Buffer.from(canonical.replaceAll('-', ''), 'hex');
}
