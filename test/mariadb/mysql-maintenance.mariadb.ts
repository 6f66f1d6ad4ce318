import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource, QueryRunner } from 'typeorm';
import type { JobState } from '../../lib/core/index.js';
import { MysqlConnections } from '../../lib/store/mysql/mysql-connections.js';
import { mysqlInstall } from '../../lib/store/mysql/mysql-install.js';
import { toMysqlInstant } from '../../lib/store/mysql/mysql-instant.js';
import { historyRead, historyTrim, jobCountsFold, jobPurge, maintenanceLease } from '../../lib/store/mysql/mysql-maintenance.js';
import { migrateMysql } from '../../lib/store/mysql/mysql-migrator.js';
import { mysqlNaming } from '../../lib/store/mysql/mysql-naming.js';
import { dropInstallation, openMariadbDataSource, uniquePrefix } from '../support/mariadb.js';

const START = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const jobId = (n: number) => `00000000-0000-7000-8000-${String(n).padStart(12, '0')}`;

describe('MySQL store maintenance (MariaDB)', () => {
  let dataSource: DataSource;
  // One session, so the clock set on it (SET timestamp, which UTC_TIMESTAMP follows) holds for every call.
  let conns: MysqlConnections;
  const naming = mysqlNaming(uniquePrefix('mnt'));
  const runners: QueryRunner[] = [];
  let now = START;

  const setClock = async (ms: number) => {
    now = ms;
    await conns.session((db) => db.run('SET timestamp = ?', [ms / 1000]));
  };
  const advance = (ms: number) => setClock(now + ms);
  const hostTransaction = async (): Promise<QueryRunner> => {
    const runner = dataSource.createQueryRunner();
    runners.push(runner);
    await runner.startTransaction();
    return runner;
  };
  const entry = (job: number, state: JobState = 'scheduled', attempt = 0, error: string | null = null, db: { query(sql: string, values?: unknown[]): Promise<unknown> } = dataSource) =>
    db.query(`INSERT INTO ${naming.history} (job_id, name, at, state, attempt, error) VALUES (?, ?, ?, ?, ?, ?)`, [
      jobId(job),
      `job.${job}`,
      toMysqlInstant(now),
      state,
      attempt,
      error,
    ]);
  const entryIds = async (job: number) =>
    ((await dataSource.query(`SELECT id FROM ${naming.history} WHERE job_id = ? ORDER BY id`, [jobId(job)])) as { id: string }[]).map((row) => Number(row.id));
  const insertJob = (n: number, state: JobState, finishedAt: number | null, queue = 'default', db: { query(sql: string, values?: unknown[]): Promise<unknown> } = dataSource) =>
    db.query(
      `INSERT INTO ${naming.jobs} (id, name, queue, payload, state, run_at, scheduled_for, attempt, max_attempts, created_at, updated_at, finished_at)
       VALUES (?, ?, ?, '{}', ?, ?, ?, ?, 1, ?, ?, ?)`,
      [jobId(n), `job.${n}`, queue, state, toMysqlInstant(now), toMysqlInstant(now), state === 'scheduled' ? 0 : 1, toMysqlInstant(now), toMysqlInstant(now), finishedAt === null ? null : toMysqlInstant(finishedAt)],
    );
  const jobsLeft = async () => ((await dataSource.query(`SELECT id FROM ${naming.jobs} ORDER BY id`)) as { id: string }[]).map((row) => row.id);
  const deltas = async () =>
    ((await dataSource.query(`SELECT queue, state, SUM(delta) AS delta FROM ${naming.countDeltas} GROUP BY queue, state ORDER BY queue, CONCAT(state)`)) as { queue: string; state: string; delta: string }[]).map(
      (row) => [row.queue, row.state, Number(row.delta)],
    );
  const counts = async () =>
    ((await dataSource.query(`SELECT queue, state, count FROM ${naming.counts} ORDER BY queue, CONCAT(state)`)) as { queue: string; state: string; count: string }[]).map((row) => [
      row.queue,
      row.state,
      Number(row.count),
    ]);
  const addDeltas = (rows: [string, JobState, number][], db: { query(sql: string, values?: unknown[]): Promise<unknown> } = dataSource) =>
    db.query(`INSERT INTO ${naming.countDeltas} (queue, state, delta) VALUES ?`, [rows]);

  beforeAll(async () => {
    dataSource = await openMariadbDataSource();
    conns = new MysqlConnections(dataSource, 1);
    await migrateMysql(conns, naming, mysqlInstall());
  });
  beforeEach(async () => {
    await Promise.all(
      runners.splice(0).map(async (runner) => {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        await runner.release();
      }),
    );
    for (const table of [naming.history, naming.jobs, naming.dependencies, naming.maintenance, naming.cursors, naming.counts, naming.countDeltas]) {
      await dataSource.query(`TRUNCATE TABLE ${table}`);
    }
    await setClock(START);
  });
  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.release()));
    await conns.close();
    await dropInstallation(dataSource, naming);
    await dataSource.destroy();
  });

  it('reads the log from any position it handed out, entry by entry, and nothing after the last', async () => {
    await entry(1);
    await advance(1_000);
    await entry(2);
    await entry(1, 'dead_lettered', 1, 'card declined');
    const log = await historyRead(conns, naming, { after: '0', limit: 10 });
    expect(log).toEqual([
      { id: 1, position: '1', jobId: jobId(1), name: 'job.1', at: new Date(START), state: 'scheduled', attempt: 0, error: null, workerId: null, leaseUntil: null },
      { id: 2, position: '2', jobId: jobId(2), name: 'job.2', at: new Date(START + 1_000), state: 'scheduled', attempt: 0, error: null, workerId: null, leaseUntil: null },
      { id: 3, position: '3', jobId: jobId(1), name: 'job.1', at: new Date(START + 1_000), state: 'dead_lettered', attempt: 1, error: 'card declined', workerId: null, leaseUntil: null },
    ]);
    expect((await historyRead(conns, naming, { after: '1', limit: 1 })).map((e) => e.id)).toEqual([2]);
    expect(await historyRead(conns, naming, { after: '3', limit: 10 })).toEqual([]);
  });

  it('trims only what was numbered since its last pass, a bounded batch at a time, to each job\'s newest entries', async () => {
    for (let i = 0; i < 13; i += 1) await entry(1, i % 2 === 0 ? 'scheduled' : 'running', Math.ceil(i / 2));
    await entry(2);
    const long = await entryIds(1);

    const passes = [];
    for (;;) {
      const pass = await historyTrim(conns, naming, { keep: 4, limit: 5 });
      passes.push(pass);
      if (pass.examined < 5) break;
    }
    // The first pass met job 1 and cut it to four; the second read the rest; the third found nothing new.
    expect(passes).toEqual([
      { trimmed: 9, examined: 5 },
      { trimmed: 0, examined: 5 },
      { trimmed: 0, examined: 0 },
    ]);
    expect(await entryIds(1)).toEqual(long.slice(9));
    expect(await entryIds(2)).toHaveLength(1);
    // A job that gains an entry is trimmed when the pass reads it.
    await entry(1, 'running', 7);
    expect(await historyTrim(conns, naming, { keep: 4, limit: 5 })).toEqual({ trimmed: 1, examined: 1 });
    expect(await entryIds(1)).toEqual([...long.slice(10), long.at(-1)! + 2]);
  });

  it('keeps what an observer has not passed and trims it once passed, without waiting on an entry still being written', async () => {
    await dataSource.query(`INSERT INTO ${naming.cursors} (observer, last_id, updated_at) VALUES ('slow', 0, UTC_TIMESTAMP(3))`);
    for (let i = 0; i < 5; i += 1) await entry(1, 'scheduled', i);
    expect(await historyTrim(conns, naming, { keep: 1, limit: 100 })).toEqual({ trimmed: 0, examined: 0 });
    expect(await entryIds(1)).toHaveLength(5);

    // The observer passes the first three; a sixth entry of the job is being written meanwhile.
    await dataSource.query(`UPDATE ${naming.cursors} SET last_id = 3`);
    const writer = await hostTransaction();
    await entry(1, 'running', 5, null, writer);
    expect(await historyTrim(conns, naming, { keep: 1, limit: 100 })).toEqual({ trimmed: 3, examined: 3 });
    expect(await entryIds(1)).toEqual([4, 5]);
    await writer.commitTransaction();

    await dataSource.query(`UPDATE ${naming.cursors} SET last_id = 6`);
    expect(await historyTrim(conns, naming, { keep: 1, limit: 100 })).toEqual({ trimmed: 2, examined: 3 });
    expect(await entryIds(1)).toEqual([6]);
  });

  it('does nothing, without waiting, while another node\'s trim pass holds its place', async () => {
    for (let i = 0; i < 3; i += 1) await entry(1, 'scheduled', i);
    expect(await historyTrim(conns, naming, { keep: 1, limit: 1 })).toEqual({ trimmed: 2, examined: 1 });
    await entry(2);
    const other = await hostTransaction();
    await other.query(`SELECT last_id FROM ${naming.maintenance} WHERE task = 'history_trim' FOR UPDATE`);
    expect(await historyTrim(conns, naming, { keep: 1, limit: 100 })).toEqual({ trimmed: 0, examined: 0 });
    await other.commitTransaction();
    expect(await historyTrim(conns, naming, { keep: 1, limit: 100 })).toEqual({ trimmed: 0, examined: 2 });
  });

  it('leases a task to one worker at a time by the database clock, renews it for its holder, and hands it on once lapsed', async () => {
    const lease = (workerId: string, task = 'sweep') => maintenanceLease(conns, naming, { task, workerId, leaseMs: 15_000 });
    expect(await lease('a')).toBe(true);
    expect(await lease('b')).toBe(false);
    await advance(14_000);
    expect(await lease('a')).toBe(true);
    await advance(14_000);
    expect(await lease('b')).toBe(false);
    await advance(1_000);
    expect(await lease('b')).toBe(true);
    expect(await lease('a')).toBe(false);
    expect(await lease('a', 'another-task')).toBe(true);
    expect(await conns.session((db) => db.query(`SELECT task, leased_by, leased_until FROM ${naming.maintenance} ORDER BY task`))).toEqual([
      { task: 'another-task', leased_by: 'a', leased_until: toMysqlInstant(now + 15_000) },
      { task: 'sweep', leased_by: 'b', leased_until: toMysqlInstant(now + 15_000) },
    ]);
  });

  it('purges old succeeded and cancelled jobs oldest first, with their history and edges, and takes them out of the counts', async () => {
    await insertJob(1, 'succeeded', START - 3 * DAY);
    await insertJob(2, 'cancelled', START - 2 * DAY, 'mail');
    await insertJob(3, 'dead_lettered', START - 3 * DAY);
    await insertJob(4, 'succeeded', START - DAY / 2);
    await insertJob(5, 'scheduled', null);
    // A parent whose dependant has not been settled stays; a settled edge goes with its parent.
    await insertJob(6, 'succeeded', START - 3 * DAY);
    await insertJob(7, 'scheduled', null);
    await insertJob(8, 'scheduled', null);
    await dataSource.query(`INSERT INTO ${naming.dependencies} (child_id, parent_id, settled) VALUES (?, ?, FALSE), (?, ?, TRUE)`, [jobId(7), jobId(6), jobId(8), jobId(1)]);
    for (const n of [1, 1, 2, 4]) await entry(n);

    expect(await jobPurge(conns, naming, { olderThanMs: DAY, limit: 1 })).toBe(1);
    expect(await jobsLeft()).toEqual([2, 3, 4, 5, 6, 7, 8].map(jobId));
    expect(await jobPurge(conns, naming, { olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await jobPurge(conns, naming, { olderThanMs: DAY, limit: 100 })).toBe(0);
    expect(await jobsLeft()).toEqual([3, 4, 5, 6, 7, 8].map(jobId));
    expect(await entryIds(1)).toEqual([]);
    expect(await entryIds(2)).toEqual([]);
    expect(await entryIds(4)).toHaveLength(1);
    expect(await dataSource.query(`SELECT child_id, parent_id FROM ${naming.dependencies}`)).toEqual([{ child_id: jobId(7), parent_id: jobId(6) }]);
    expect(await deltas()).toEqual([
      ['default', 'succeeded', -1],
      ['mail', 'cancelled', -1],
    ]);
  });

  it('purges past a job another transaction holds and a job being enqueued, without waiting on either', async () => {
    await insertJob(1, 'succeeded', START - 3 * DAY);
    await insertJob(2, 'succeeded', START - 2 * DAY);
    const holder = await hostTransaction();
    await holder.query(`SELECT id FROM ${naming.jobs} WHERE id = ? FOR UPDATE`, [jobId(1)]);
    const enqueuer = await hostTransaction();
    await insertJob(3, 'scheduled', null, 'default', enqueuer);
    await entry(3, 'scheduled', 0, null, enqueuer);
    expect(await jobPurge(conns, naming, { olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await jobsLeft()).toEqual([jobId(1)]);
    await holder.commitTransaction();
    await enqueuer.commitTransaction();
    expect(await jobPurge(conns, naming, { olderThanMs: DAY, limit: 100 })).toBe(1);
    expect(await jobsLeft()).toEqual([jobId(3)]);
  });

  it('folds committed count changes into the counts, a bounded batch at a time, dropping counts that reach zero', async () => {
    await dataSource.query(`INSERT INTO ${naming.counts} (queue, state, count) VALUES ('default', 'running', 1), ('default', 'scheduled', 5)`);
    await addDeltas([
      ['default', 'scheduled', 1],
      ['default', 'running', -1],
      ['mail', 'succeeded', 1],
    ]);
    // A write still open holds its change: the fold passes over it and never waits for it.
    const writer = await hostTransaction();
    await addDeltas([['mail', 'scheduled', 1]], writer);
    await addDeltas([
      ['mail', 'succeeded', -1],
      ['default', 'scheduled', -2],
    ]);
    expect(await jobCountsFold(conns, naming, { limit: 1 })).toBe(1);
    expect(await counts()).toEqual([
      ['default', 'running', 1],
      ['default', 'scheduled', 6],
    ]);
    expect(await jobCountsFold(conns, naming, { limit: 100 })).toBe(4);
    expect(await counts()).toEqual([['default', 'scheduled', 4]]);
    expect(await deltas()).toEqual([]);
    await writer.commitTransaction();
    expect(await deltas()).toEqual([['mail', 'scheduled', 1]]);
    expect(await jobCountsFold(conns, naming, { limit: 100 })).toBe(1);
    expect(await jobCountsFold(conns, naming, { limit: 100 })).toBe(0);
    expect(await counts()).toEqual([
      ['default', 'scheduled', 4],
      ['mail', 'scheduled', 1],
    ]);
  });

  it('folds nothing, at once, while another fold runs', async () => {
    await addDeltas([['default', 'scheduled', 1]]);
    expect(await jobCountsFold(conns, naming, { limit: 100 })).toBe(1);
    await addDeltas([['default', 'scheduled', 1]]);
    const other = await hostTransaction();
    await other.query(`SELECT task FROM ${naming.maintenance} WHERE task = 'job_counts_fold' FOR UPDATE`);
    expect(await jobCountsFold(conns, naming, { limit: 100 })).toBe(0);
    await other.commitTransaction();
    expect(await jobCountsFold(conns, naming, { limit: 100 })).toBe(1);
    expect(await counts()).toEqual([['default', 'scheduled', 2]]);
  });
});
