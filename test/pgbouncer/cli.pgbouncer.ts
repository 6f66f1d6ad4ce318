import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { PostgresJobStore } from '../../lib/store/index.js';
import { startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { databaseUrl, dropSchemas, uniqueSchema } from '../support/postgres.js';

// Issue 37 item 3: the operator CLI (and the standalone dashboard, which opens its store the same
// way) pointed at PgBouncer in transaction mode, as an operator whose DATABASE_URL names the pooler
// would. Its two connections each prepare nothing, and migrate's pooler check passes.

let bouncer: PgBouncer;
let admin: DataSource;
const schema = uniqueSchema('bouncercli');

beforeAll(async () => {
  bouncer = await startPgBouncer(databaseUrl(), { poolSize: 2 });
  admin = await new DataSource({ type: 'postgres', url: databaseUrl(), extra: { max: 2 } }).initialize();
});
afterAll(async () => {
  await dropSchemas(admin, [schema]);
  await admin.destroy();
  await bouncer.stop();
});

function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(process.cwd(), 'dist/lib/cli/main.js'), ...args], { env: { ...process.env, DATABASE_URL: '' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the CLI through PgBouncer in transaction mode', () => {
  it('migrates, reads and acts on jobs with --conn naming the pooler', async () => {
    const conn = ['--conn', bouncer.url, '--table', `${schema}.jobs`];
    const migrated = await cli(['migrate', ...conn]);
    expect(migrated).toMatchObject({ code: 0, stderr: '' });

    const store = new PostgresJobStore({ dataSource: admin, schema });
    const [kept, cancelled] = await store.jobEnqueueMany({ jobs: [{ name: 'kept', payload: 1 }, { name: 'cancelled', payload: 2 }] });
    // Two runs, the second while another client holds one of the two server connections: a
    // statement the first run prepared stays on its server connection, where the second run's
    // prepare of the same statement would fail (42P05), or it would not be there (26000).
    const other = await new DataSource({ type: 'postgres', url: bouncer.url, extra: { max: 1 } }).initialize();
    const runner = other.createQueryRunner();
    try {
      for (let round = 0; round < 2; round++) {
        const stats = await cli(['stats', ...conn, '--format', 'json']);
        expect(stats).toMatchObject({ code: 0, stderr: '' });
        expect(JSON.parse(stats.stdout)).toMatchObject({ counts: [{ queue: 'default', state: 'scheduled', count: 2 }] });
        if (round === 0) {
          await runner.startTransaction();
          await runner.query('SELECT 1');
        }
      }
      const cancel = await cli(['cancel', cancelled!.id, ...conn]);
      expect(cancel).toMatchObject({ code: 0, stderr: '' });
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
      await other.destroy();
    }
    expect(await store.jobGet({ jobId: cancelled!.id })).toMatchObject({ state: 'cancelled' });
    expect(await store.jobGet({ jobId: kept!.id })).toMatchObject({ state: 'scheduled' });
  });
});
