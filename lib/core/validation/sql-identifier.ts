import { InvalidIdentifierError } from '../errors/index.js';

/** Lower-case letters, digits and underscores, starting with a letter or underscore. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;
/** PostgreSQL truncates identifiers past 63 bytes; refuse them instead. */
export const MAX_IDENTIFIER_LENGTH = 63;

/**
 * Refuses any name that is not a plain lower-case SQL identifier of at most 63 characters. Names
 * that reach SQL from configuration or the CLI pass through here first and are then quoted, so
 * nothing a user types is ever interpolated raw.
 */
export function assertSqlIdentifier(value: unknown, argument: string): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value) || value.length > MAX_IDENTIFIER_LENGTH) {
    const shown = typeof value === 'string' ? JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value) : String(value);
    throw new InvalidIdentifierError(
      `${argument} must be a lower-case SQL identifier (letters, digits and underscores, starting with a letter or underscore, at most ${MAX_IDENTIFIER_LENGTH} characters), got ${shown}.`,
      argument,
    );
  }
  return value;
}

/** Like {@link assertSqlIdentifier}, but for a prefix, which may be empty. */
export function assertSqlPrefix(value: unknown, argument: string): string {
  if (value === '') return '';
  return assertSqlIdentifier(value, argument);
}

/** Quotes an identifier that already passed {@link assertSqlIdentifier}. */
export function quoteIdentifier(identifier: string): string {
  return `"${identifier}"`;
}
