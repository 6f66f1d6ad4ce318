import { describe } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { SqliteJobStore } from '../../lib/store/index.js';
import { verifyCases } from './verify.cases.js';

describe('verifyHistory on the SQLite store', () => {
  verifyCases(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'durable-scheduler-verify-'));
    const dataSource = await new DataSource({ type: 'better-sqlite3', database: join(dir, 'verify.db') }).initialize();
    const store = new SqliteJobStore({ dataSource });
    await store.migrate();
    const { jobs, history } = store.naming;
    return {
      store,
      // The sabotage is plain SQL, as a broken store or a hand edit would leave it.
      writeEntry: async (jobId, state, attempt, lease, inMs = 0) => {
        await dataSource.query(`INSERT INTO ${history} (job_id, name, at, state, attempt, worker_id, lease_until) SELECT id, name, ?, ?, ?, ?, ? FROM ${jobs} WHERE id = ?`, [
          Date.now() + 1 + inMs,
          state,
          attempt,
          lease?.workerId ?? null,
          lease?.leaseUntil.getTime() ?? null,
          jobId,
        ]);
      },
      now: () => Date.now(),
      deleteRow: async (jobId) => {
        await dataSource.query(`DELETE FROM ${jobs} WHERE id = ?`, [jobId]);
      },
      trimOldest: async (jobId, count) => {
        await dataSource.query(`DELETE FROM ${history} WHERE id IN (SELECT id FROM ${history} WHERE job_id = ? ORDER BY id LIMIT ?)`, [jobId, count]);
      },
      copyJob: async (jobId, newId, inMs) => {
        // seq is the rowid: the copy gets its own.
        const columns = ((await dataSource.query(`SELECT name FROM pragma_table_info(?)`, [jobs.replace(/"/g, '')])) as { name: string }[]).map((c) => c.name).filter((c) => c !== 'seq');
        const picked = columns.map((c) => (c === 'id' ? '?' : c)).join(', ');
        await dataSource.query(`INSERT INTO ${jobs} (${columns.join(', ')}) SELECT ${picked} FROM ${jobs} WHERE id = ?`, [newId, jobId]);
        await dataSource.query(`UPDATE ${history} SET at = at + ? WHERE job_id = ?`, [inMs, newId]);
      },
      backdateAudit: async (ms) => {
        await dataSource.query(`UPDATE ${store.naming.audit} SET at = at - ?`, [ms]);
      },
      close: async () => {
        await store.close();
        await dataSource.destroy();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  });
});
