import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadMigrations } from '../../lib/store/sql-migrations.js';
import { sqliteInstall } from '../../lib/store/sqlite/sqlite-install.js';
import { migrateSqlite } from '../../lib/store/sqlite/sqlite-migrator.js';
import { sqliteNaming } from '../../lib/store/sqlite/sqlite-naming.js';
import { runCliHere as cli } from '../support/cli-run.js';

const MIGRATIONS = loadMigrations(fileURLToPath(new URL('../../lib/store/sqlite/migrations/', import.meta.url)));

/**
 * `groups list` against tables a migration behind it (schema 24, before the group index): refused in
 * one sentence that says what to run, rather than counting through the whole scheduled backlog.
 */
describe('durable-scheduler groups list on tables older than the group index', () => {
  let dir: string;
  let database: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-groups-'));
    database = join(dir, 'old.db');
    const db = new Database(database);
    const naming = sqliteNaming();
    expect(migrateSqlite(db, naming, sqliteInstall(naming, 'transitions'), MIGRATIONS.filter((m) => m.version <= 24)).at(-1)).toBe(24);
    db.close();
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses at schema 24, and lists once migrated', async () => {
    const refused = await cli(['groups', 'list', '--conn', `sqlite:${database}`]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/^The scheduler tables at sqlite:\S+ are at schema version 24, and listing groups needs 25; run "durable-scheduler migrate" first\.\n$/);
    expect((await cli(['migrate', '--conn', `sqlite:${database}`])).code).toBe(0);
    expect(await cli(['groups', 'list', '--conn', `sqlite:${database}`])).toEqual({ code: 0, stdout: 'No group has waiting jobs.\n', stderr: '' });
  });
});
