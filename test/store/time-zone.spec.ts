import { afterAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { databaseUrl, dropSchemas, openPostgresDataSource, uniqueSchema } from '../support/postgres.js';

interface StoreResult {
  readonly read: { ms: number; enqueued: number; replaced: number; cancelled: number }[];
  readonly startAt: number;
  readonly anchorAt: number;
}

/** Runs the writer (it imports dist/, so build first) in a process whose time zone is `tz`. */
function writeUnder(tz: string, sqliteFile: string, schema: string): Promise<Record<'memory' | 'sqlite' | 'postgres', StoreResult> & { offsetMinutes: number }> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [join(process.cwd(), 'test/support/time-zone-writer.mjs'), sqliteFile, schema],
      { env: { ...process.env, TZ: tz, DATABASE_URL: databaseUrl() } },
      (error, stdout, stderr) => (error ? reject(new Error(`the writer failed: ${stderr}`)) : resolve(JSON.parse(stdout))),
    ),
  );
}

const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-tz-'));
const schema = uniqueSchema('tz');
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const dataSource = await openPostgresDataSource(1);
  await dropSchemas(dataSource, [schema]);
  await dataSource.destroy();
});

describe('issue 19, smaller bad-input gaps: instants under a process time zone other than UTC', () => {
  it('a runAt before 1900 (enqueued, or given by a uniqueKey replace), and a schedule start, round-trip exactly on every store under Europe/Amsterdam', async () => {
    const results = await writeUnder('Europe/Amsterdam', join(dir, 'tz.db'), schema);
    // Local mean time: Amsterdam ran 17 minutes 30 seconds ahead of UTC in 1850, an offset with seconds.
    expect(results.offsetMinutes).not.toBe(0);
    for (const store of ['memory', 'sqlite', 'postgres'] as const) {
      const { read, startAt, anchorAt } = results[store];
      expect({ store, read }).toEqual({ store, read: read.map(({ ms }) => ({ ms, enqueued: ms, replaced: ms, cancelled: ms })) });
      expect({ store, anchorAt }).toEqual({ store, anchorAt: startAt });
    }
  });
});
