import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import type { DataSource } from 'typeorm';
import { InvalidIdentifierError } from '../../lib/core/index.js';
import { PostgresJobStore } from '../../lib/store/index.js';
import { effectsSql } from '../../lib/store/postgres/postgres-effects.js';
import { limitFunctionsSql } from '../../lib/store/postgres/postgres-limits.js';
import { LONGEST_DERIVED_SUFFIX, MAX_POSTGRES_PREFIX_LENGTH, postgresNaming } from '../../lib/store/postgres/postgres-naming.js';
import { loadMigrations, renderMigration } from '../../lib/store/sql-migrations.js';
import { dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

const MIGRATIONS = fileURLToPath(new URL('../../lib/store/postgres/migrations/', import.meta.url));

/** Every name the store creates under `prefix`: migrations and installed SQL, rendered, then read back. */
function derivedNames(prefix: string): string[] {
  const naming = postgresNaming('s', prefix);
  const sql = [
    ...loadMigrations(MIGRATIONS).map((m) => renderMigration(m.sql, naming)),
    limitFunctionsSql(naming),
    ...(['off', 'transitions', 'transitions_and_errors'] as const).map((policy) => effectsSql(naming, policy)),
  ].join('\n');
  return [...new Set([...sql.matchAll(new RegExp(`"(${prefix}[a-z0-9_]*)"`, 'g'))].map((m) => m[1]!))].sort();
}

/**
 * Issue 19: PostgreSQL truncates names past 63 bytes, so the table prefix must leave room for the
 * longest suffix the store adds; a longer one is refused when the store is built.
 */
describe('PostgreSQL table prefix and the 63-byte name limit', () => {
  it('knows its longest derived name: no table, index, constraint, trigger or function name is longer', () => {
    const names = derivedNames('zq_');
    expect(names.length).toBeGreaterThan(30);
    const longest = Math.max(...names.map((n) => n.length - 'zq_'.length));
    expect(longest).toBe(LONGEST_DERIVED_SUFFIX.length);
    expect(names).toContain(`zq_${LONGEST_DERIVED_SUFFIX}`);
    expect(MAX_POSTGRES_PREFIX_LENGTH).toBe(63 - LONGEST_DERIVED_SUFFIX.length);
  });

  it.each([MAX_POSTGRES_PREFIX_LENGTH + 1, 49, 63])('refuses a prefix of %i characters with one typed sentence', (length) => {
    const prefix = `p${'x'.repeat(length - 2)}_`;
    let error: unknown;
    try {
      postgresNaming('s', prefix);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidIdentifierError);
    expect((error as Error).message).toBe(
      `tablePrefix must be at most ${MAX_POSTGRES_PREFIX_LENGTH} characters, because the store adds suffixes of up to ${LONGEST_DERIVED_SUFFIX.length} ("${LONGEST_DERIVED_SUFFIX}") and PostgreSQL truncates names past 63 bytes, got ${length} characters ("${prefix}").`,
    );
  });

  describe('on a server', () => {
    let dataSource: DataSource;
    const schemas: string[] = [];
    beforeAll(async () => {
      dataSource = await openPostgresDataSource(2);
    });
    afterAll(async () => {
      await dropSchemas(dataSource, schemas);
      await dataSource.destroy();
    });

    it('migrates with the longest accepted prefix, and every derived name exists as written', async () => {
      const prefix = `p${'x'.repeat(MAX_POSTGRES_PREFIX_LENGTH - 2)}_`;
      const schema = uniqueSchema('naming');
      schemas.push(schema);
      const store = new PostgresJobStore({ dataSource, schema, tablePrefix: prefix });
      await store.migrate();
      const rows: { name: string }[] = await dataSource.query(
        `SELECT relname AS name FROM pg_class WHERE relnamespace = $1::regnamespace
         UNION SELECT conname FROM pg_constraint WHERE connamespace = $1::regnamespace
         UNION SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = $1::regnamespace
         UNION SELECT proname FROM pg_proc WHERE pronamespace = $1::regnamespace`,
        [schema],
      );
      const existing = new Set(rows.map((r) => r.name));
      // Names a later migration drops, or renames (0027 builds an index under a name of its own), are
      // gone; every other one is there, untruncated.
      const dropped = new Set([`${prefix}jobs_running_idx`, `${prefix}job_history_delivery_idx`, `${prefix}jobs_parked_due_next_idx`]);
      expect(derivedNames(prefix).filter((n) => !dropped.has(n) && !existing.has(n))).toEqual([]);
      await store.close();
    });

    it('refuses a prefix one character too long before anything is written', async () => {
      const schema = uniqueSchema('naming');
      const before = await dataSource.query(`SELECT count(*)::int AS n FROM pg_namespace`);
      expect(() => new PostgresJobStore({ dataSource, schema, tablePrefix: `p${'x'.repeat(MAX_POSTGRES_PREFIX_LENGTH - 1)}_` })).toThrow(InvalidIdentifierError);
      expect(await dataSource.query(`SELECT count(*)::int AS n FROM pg_namespace`)).toEqual(before);
    });
  });
});
