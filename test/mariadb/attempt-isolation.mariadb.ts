import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, EntityManager } from 'typeorm';
import { MysqlJobStore } from '../../lib/store/index.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

/*
 * An attempt's transaction runs on one of the application's sessions, whose level is MySQL's
 * default REPEATABLE READ unless the application changed it. At that level the outcome write's
 * locking reads take gap locks, and on a small table a scan locks every row it passes, so
 * concurrent outcomes deadlocked and each one's job waited for its lease to lapse (found by the
 * dashboard's e2e on MariaDB under CI's load). The store opens the attempt's transaction at READ
 * COMMITTED, for that transaction alone. Each test forces the interleaving: another session
 * commits between two reads of the same transaction, and the second read tells the level.
 */

const LEASE_MS = 60_000;
let admin: DataSource;
let app: DataSource;
let store: MysqlJobStore;
const scratch = `\`${uniquePrefix('iso')}scratch\``;

/** Reads the scratch row, has another session change it and commit, and reads it again. */
async function readAcrossACommit(manager: Pick<EntityManager, 'query'>, value: string): Promise<[string, string]> {
  const read = async () => ((await manager.query(`SELECT v FROM ${scratch} WHERE id = 1`)) as { v: string }[])[0]!.v;
  const before = await read();
  await admin.query(`UPDATE ${scratch} SET v = ? WHERE id = 1`, [value]);
  return [before, await read()];
}

async function runningJob() {
  await store.jobEnqueue({ job: { name: 'iso', payload: null } });
  const [job] = await store.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
  expect(job).toBeDefined();
  return job!;
}

beforeAll(async () => {
  admin = await openMariadbDataSource({ poolSize: 2 });
  // One session, so the attempt and the application's next transaction share it.
  app = await openMariadbDataSource({ poolSize: 1 });
  store = new MysqlJobStore({ dataSource: app, tablePrefix: uniquePrefix('iso'), poolSize: 2 });
  await store.migrate();
  await admin.query(`CREATE TABLE ${scratch} (id INT PRIMARY KEY, v VARCHAR(16) NOT NULL) ENGINE = InnoDB`);
  await admin.query(`INSERT INTO ${scratch} (id, v) VALUES (1, 'start')`);
});

afterAll(async () => {
  await store.close();
  await dropInstallation(admin, store.naming);
  await admin.query(`DROP TABLE IF EXISTS ${scratch}`);
  await app.destroy();
  await admin.destroy();
});

describe("the attempt's transaction on MySQL (MariaDB)", () => {
  it("runs at READ COMMITTED on a session whose own level is REPEATABLE READ, and commits the handler's write with the outcome", async () => {
    expect(await app.query('SELECT @@session.tx_isolation AS level')).toEqual([{ level: 'REPEATABLE-READ' }]);
    const job = await runningJob();
    const attempt = store.beginAttempt();

    // At REPEATABLE READ the second read would still see 'start'.
    expect(await readAcrossACommit(attempt.manager, 'committed')).toEqual(['start', 'committed']);
    await attempt.manager.query(`UPDATE ${scratch} SET v = 'handler' WHERE id = 1`);
    expect(await attempt.commitSuccess('w', job.id, job.attempt, null)).toEqual({ jobId: job.id, attempt: 1, status: 'applied', state: 'succeeded' });
    expect(await admin.query(`SELECT v FROM ${scratch} WHERE id = 1`)).toEqual([{ v: 'handler' }]);
  });

  it("leaves the session's own level to the application's next transaction", async () => {
    const job = await runningJob();
    const attempt = store.beginAttempt();
    await attempt.manager.query(`SELECT v FROM ${scratch} WHERE id = 1`);
    await attempt.commitSuccess('w', job.id, job.attempt, null);

    // The same session (the pool holds one): a snapshot again, as the application set it.
    const seen = await app.transaction((manager) => readAcrossACommit(manager, 'later'));
    expect(seen).toEqual(['handler', 'handler']);
    expect(await admin.query(`SELECT v FROM ${scratch} WHERE id = 1`)).toEqual([{ v: 'later' }]);
  });

  it('runs the outcome alone at READ COMMITTED when the handler never used the manager', async () => {
    const sent: string[] = [];
    const counted = new MysqlJobStore({ dataSource: app, tablePrefix: store.naming.prefix, poolSize: 1, onStatement: (text) => sent.push(text) });
    try {
      await counted.jobEnqueue({ job: { name: 'iso', payload: null } });
      const [job] = await counted.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
      sent.length = 0;
      const attempt = counted.beginAttempt();
      expect(await attempt.commitSuccess('w', job!.id, job!.attempt, null)).toMatchObject({ status: 'applied', state: 'succeeded' });
      expect(sent.slice(0, 2)).toEqual(['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION']);
      expect(sent.at(-1)).toBe('COMMIT');

      // The handler's own statements are the application's, and onStatement does not hear them.
      await counted.jobEnqueue({ job: { name: 'iso', payload: null } });
      const [next] = await counted.jobClaim({ workerId: 'w', limit: 1, queues: ['default'], leaseMs: LEASE_MS });
      sent.length = 0;
      const used = counted.beginAttempt();
      await used.manager.query(`SELECT v FROM ${scratch} WHERE id = 1`);
      expect(sent).toEqual(['SET TRANSACTION ISOLATION LEVEL READ COMMITTED', 'START TRANSACTION']);
      await used.commitSuccess('w', next!.id, next!.attempt, null);
      expect(sent.some((text) => text.includes(scratch))).toBe(false);
    } finally {
      await counted.close();
    }
  });
});
